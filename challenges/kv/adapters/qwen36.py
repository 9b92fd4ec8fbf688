"""kv adapter for qwen36 (published benchmark): its KVCache (CacheConfig,
update with a shared write position) and the attention functions of
attention.py, bound to prefill / decode.

Translation only:
- the cache is qwen36's KVCache(CacheConfig(batch, heads, head_dim,
  max_seq_len, dtype)); dtype float64 is its own config field, and its
  attention functions take the compute dtype as an argument (float64 here);
  capacity is the padded prompt length plus DECODE_CAPACITY decode steps;
- prefill is qwen36's prompt_attention(q, k, v, cache, scale, lengths): it
  stores every prompt row of the padded batch in the cache (its
  variable-length design keeps padding in the cache and masks it by
  length); the contract gives no prompt queries, so k stands in for q and
  the prompt outputs are discarded;
- decode follows qwen36's own generation loop (TransformerDecoder.generate /
  TransformerDecoderLayer.forward_generate): KVCache.update with the step's
  K / V, then cached_attention_with_mask(q, cache, scale, lengths) with the
  per-sequence lengths starting at the prompt lengths and growing by one per
  step.
"""
from __future__ import annotations

import math

import numpy as np
from attention import cached_attention_with_mask, prompt_attention
from kv_cache import CacheConfig, KVCache

ANSWER_SHA256 = {
    "kv_cache.py": "11d2b5deb022b199827488a23551f3bb4fda52285da9eb9ae5c0ae470f35ed06",
    "attention.py": "f0b56c17aa4da26f1f5c026e8c736069aea1a5f6cea6e78b6ec40f6564cc0ea6",
}

DECODE_CAPACITY = 1024


class Session:
    def __init__(self):
        self.cache = None

    def prefill(self, k, v, lengths):
        batch, heads, t, dim = k.shape
        self.scale = 1.0 / math.sqrt(dim)
        self.cache = KVCache(CacheConfig(batch, heads, dim, t + DECODE_CAPACITY, dtype=np.float64))
        self.lengths = np.asarray(lengths).copy()
        with np.errstate(all="ignore"):  # padding query rows are fully masked; their outputs are unused
            prompt_attention(k, k, v, self.cache, self.scale, lengths=self.lengths, dtype=np.float64)

    def decode(self, q, k_new, v_new):
        self.cache.update(k_new[:, :, None, :], v_new[:, :, None, :])
        out = cached_attention_with_mask(q[:, :, None, :], self.cache, self.scale, lengths=self.lengths,
                                         dtype=np.float64)
        self.lengths = self.lengths + 1
        return out[:, :, 0, :]


def make_session():
    return Session()
