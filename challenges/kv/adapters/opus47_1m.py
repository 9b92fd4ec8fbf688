"""kv adapter for opus47_1m (published benchmark): its pure-Python KVCache
(flat per-layer buffers, write / lengths) and MultiHeadAttention
(decode_step), bound to prefill / decode.

Translation only:
- one layer: KVCache(1, batch, heads, head_dim, max_seq_len) with capacity
  the prompt length plus DECODE_CAPACITY decode steps (its decode is pure
  Python: a capacity no check needs would cost decode_to_capacity seconds);
- prefill writes each sequence's valid prompt rows with KVCache.write and
  sets lengths[b] (what MultiHeadAttention.prefill does for the K / V it
  projects; the contract hands over K / V already projected and asks for no
  prompt outputs); padding rows are never written;
- decode runs the answer's MultiHeadAttention.decode_step on one layer whose
  projections are the identity: _project_qkv returns the step's given q, k, v
  (the contract's inputs are already projected) and Wo is the identity
  matrix. decode_step itself writes the cache, advances lengths and attends;
- extend (several new tokens at once) is its MultiHeadAttention.prefill,
  which takes one sequence (batch index b) per call by its own signature;
- memory_figure is its cache_memory_bytes, the formula its memory model
  (demo.py, ANALYSIS.md) reports.
"""
from __future__ import annotations

import numpy as np
from kv_cache import KVCache, MultiHeadAttention, cache_memory_bytes

ANSWER_SHA256 = {
    "kv_cache.py": "f15ecbfca08a7579f8cdddea1150f2854e890b111683c7ec97399cb24fa319b6",
}

DECODE_CAPACITY = 256  # the most decode steps a check takes (memory_linear's); decode_to_capacity fills it


class Session:
    def __init__(self):
        self.cache = self.attn = None
        self._qkv = None

    def prefill(self, k, v, lengths):
        batch, heads, t, dim = k.shape
        self.cache = KVCache(1, batch, heads, dim, t + DECODE_CAPACITY)
        k, v = np.asarray(k, dtype=np.float64), np.asarray(v, dtype=np.float64)
        for b, n in enumerate(int(x) for x in lengths):
            for pos in range(n):
                for h in range(heads):
                    self.cache.write(0, b, h, pos, k[b, h, pos].tolist(), v[b, h, pos].tolist())
            self.cache.lengths[b] = n
        attn = MultiHeadAttention.__new__(MultiHeadAttention)  # no random weights to draw
        attn.d, attn.H, attn.D, attn.layer = heads * dim, heads, dim, 0
        attn.Wo = np.eye(heads * dim).tolist()
        attn._project_qkv = lambda x: self._qkv[x]  # x is the batch index: the given q, k, v
        self.attn = attn

    def decode(self, q, k_new, v_new):
        batch, heads, dim = q.shape
        flat = lambda a: np.asarray(a, dtype=np.float64).reshape(batch, heads * dim).tolist()
        qs, ks, vs = flat(q), flat(k_new), flat(v_new)
        self._qkv = {b: (qs[b], ks[b], vs[b]) for b in range(batch)}
        out = self.attn.decode_step(list(range(batch)), self.cache)
        return np.asarray(out, dtype=np.float64).reshape(batch, heads, dim)

    def extend(self, q, k_new, v_new):
        """Several new tokens at once: its MultiHeadAttention.prefill(prompt,
        cache, b), which takes one sequence's tokens by its own API."""
        batch, heads, t, dim = q.shape
        flat = lambda a: np.asarray(a, dtype=np.float64).transpose(0, 2, 1, 3).reshape(batch, t, heads * dim).tolist()
        qs, ks, vs = flat(q), flat(k_new), flat(v_new)
        self._qkv = {(b, j): (qs[b][j], ks[b][j], vs[b][j]) for b in range(batch) for j in range(t)}
        out = [self.attn.prefill([(b, j) for j in range(t)], self.cache, b) for b in range(batch)]
        return np.asarray(out, dtype=np.float64).reshape(batch, t, heads, dim).transpose(0, 2, 1, 3)


def make_session():
    return Session()


def memory_figure(layers, batch, heads, tokens, head_dim, itemsize):
    return cache_memory_bytes(layers, batch, heads, tokens, head_dim, itemsize)
