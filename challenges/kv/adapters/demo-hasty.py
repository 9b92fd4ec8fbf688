"""Binds demo-hasty's KVCache (prefill / decode_step) to prefill / decode."""
from kvcache_numpy import KVCache

_cache: KVCache | None = None


def prefill(k, v, lengths):
    global _cache
    _cache = KVCache()
    _cache.prefill(k, v, lengths)


def decode(q, k_new, v_new):
    return _cache.decode_step(q, k_new, v_new)
