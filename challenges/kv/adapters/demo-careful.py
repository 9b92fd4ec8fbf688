"""Binds demo-careful's KVCache (load_prompt / step) to prefill / decode."""
from kv_cache import KVCache

_cache: KVCache | None = None


def prefill(k, v, lengths):
    global _cache
    batch, heads, _, head_dim = k.shape
    _cache = KVCache(batch, heads, head_dim, dtype=k.dtype)
    _cache.load_prompt(k, v, lengths)


def decode(q, k_new, v_new):
    return _cache.step(q, k_new, v_new)
