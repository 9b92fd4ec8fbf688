"""kv adapter for glm5 (published benchmark): its KVCache (update / get_kv /
seq_lens) and multi_head_attention_with_cache, bound to prefill / decode.

Translation only:
- the cache is glm5's KVCache(batch, max_seq_len, heads, head_dim, dtype);
  dtype float64 is its own constructor argument; capacity is the prompt
  length plus DECODE_CAPACITY decode steps (its buffers are pre-allocated);
- prefill writes each sequence's valid prompt rows into k_cache / v_cache and
  sets seq_lens[b], exactly as glm5's own test of variable-length batches
  (test_kv_cache.py, TEST 3) does; padding rows are never written;
- decode appends the step's K / V with KVCache.update (which appends at
  seq_lens[b] per sequence) and computes attention with
  multi_head_attention_with_cache, whose projections are given as identity
  matrices because the contract hands over already-projected q, k, v;
- extend (several new tokens at once) is the same pair of calls with T rows,
  the path its IncrementalDecoder.forward_step takes for a prompt.
"""
from __future__ import annotations

import numpy as np
from kv_cache import KVCache, multi_head_attention_with_cache

ANSWER_SHA256 = {
    "kv_cache.py": "8934ac21abaaabb4b7fd4633c0273bc24046429368458b756a8e4c30b432c45a",
}

DECODE_CAPACITY = 1024


class Session:
    def __init__(self):
        self.cache = None

    def prefill(self, k, v, lengths):
        batch, heads, t, dim = k.shape
        self.cache = KVCache(batch, t + DECODE_CAPACITY, heads, dim, dtype=np.float64)
        for b, n in enumerate(int(x) for x in lengths):
            self.cache.k_cache[b, :, :n, :] = k[b, :, :n, :]
            self.cache.v_cache[b, :, :n, :] = v[b, :, :n, :]
            self.cache.seq_lens[b] = n
        self.eye = np.eye(heads * dim)

    def decode(self, q, k_new, v_new):
        batch, heads, dim = q.shape
        self.cache.update(k_new[:, :, None, :], v_new[:, :, None, :])
        out = multi_head_attention_with_cache(q.reshape(batch, 1, heads * dim), self.cache,
                                              self.eye, self.eye, self.eye, self.eye)
        return out.reshape(batch, heads, dim)

    def extend(self, q, k_new, v_new):
        """Several new tokens at once, as glm5's own IncrementalDecoder.forward_step
        runs a prompt (is_prefill, T tokens): KVCache.update with all T rows, then
        multi_head_attention_with_cache with T query rows."""
        batch, heads, t, dim = q.shape
        self.cache.update(k_new, v_new)
        rows = q.transpose(0, 2, 1, 3).reshape(batch, t, heads * dim)
        out = multi_head_attention_with_cache(rows, self.cache, self.eye, self.eye, self.eye, self.eye)
        return out.reshape(batch, t, heads, dim).transpose(0, 2, 1, 3)


def make_session():
    return Session()
