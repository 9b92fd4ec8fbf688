"""kv adapter for minimax-m2.7 (published benchmark): its FlatKVCache
(update / get_full_kv / seq_lengths) and MultiHeadAttention.forward (which
attends over a given cache plus the new token), bound to prefill / decode.

minimax's own pieces are not wired together (its TransformerBlockStack keeps
only the newest K / V in a dict, and its caches are never read by the
attention), so the adapter is the glue the answer's FINAL.md describes:
the pre-allocated FlatKVCache (the default of its BatchedInferenceEngine,
CacheConfig.pre_allocate=True) holds K / V; MultiHeadAttention.forward
computes attention over what the cache returns.

Translation only:
- FlatKVCache(CacheConfig(batch, prompt length + DECODE_CAPACITY, heads,
  head_dim, one layer)); it stores float16 (its own choice, not changed);
- prefill writes each sequence's valid prompt rows with FlatKVCache.update;
- decode, per sequence (as its BatchedInferenceEngine.step_inference runs one
  element at a time): MultiHeadAttention.forward(x, {0: cached K / V}) with
  bias=False and selection matrices as projections: x is the step's q, k, v
  side by side (d_model = 3 * heads * head_dim), W_q / W_k / W_v pick each
  third and W_o keeps the attention output unchanged; then the new K / V it
  returns "for caching" are written with FlatKVCache.update.
"""
from __future__ import annotations

import numpy as np
from kv_cache import CacheConfig, FlatKVCache, MultiHeadAttention

ANSWER_SHA256 = {
    "kv_cache.py": "0868cdabc992045069c9da018b83864c0f6d99d38bcafd62749a296ce73ce74c",
}

DECODE_CAPACITY = 1024


class Session:
    def __init__(self):
        self.cache = self.attn = None

    def prefill(self, k, v, lengths):
        batch, heads, t, dim = k.shape
        hd = heads * dim
        self.cache = FlatKVCache(CacheConfig(max_batch_size=batch, max_seq_len=t + DECODE_CAPACITY, num_heads=heads,
                                             head_dim=dim, num_layers=1))
        for b, n in enumerate(int(x) for x in lengths):
            for pos in range(n):
                self.cache.update(0, b, pos, k[b, :, pos, :], v[b, :, pos, :])
        attn = MultiHeadAttention(d_model=3 * hd, num_heads=heads, head_dim=dim, bias=False)
        eye, zero = np.eye(hd), np.zeros((hd, hd))
        attn.W_q = np.vstack([eye, zero, zero])
        attn.W_k = np.vstack([zero, eye, zero])
        attn.W_v = np.vstack([zero, zero, eye])
        attn.W_o = np.hstack([eye, zero, zero])
        self.attn, self.heads, self.dim = attn, heads, dim

    def decode(self, q, k_new, v_new):
        batch, heads, dim = q.shape
        hd = heads * dim
        out = np.empty((batch, heads, dim))
        for b in range(batch):
            pos = int(self.cache.seq_lengths[0, b])
            k_c, v_c = self.cache.get_full_kv(0, b)  # (n, heads, dim)
            cache = {0: (k_c.transpose(1, 0, 2)[None], v_c.transpose(1, 0, 2)[None])}
            x = np.concatenate([q[b].reshape(hd), k_new[b].reshape(hd), v_new[b].reshape(hd)])[None, None]
            o, (k_cur, v_cur) = self.attn.forward(x, cache, layer_idx=0, use_cache=True)
            out[b] = o[0, 0, :hd].reshape(heads, dim)
            self.cache.update(0, b, pos, k_cur[0, :, 0, :], v_cur[0, :, 0, :])
        return out


def make_session():
    return Session()
