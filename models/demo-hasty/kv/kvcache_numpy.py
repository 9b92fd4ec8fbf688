import numpy as np


def softmax(x, axis=-1):
    x = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(x)
    return e / np.sum(e, axis=axis, keepdims=True)


class KVCache:
    """
    Simple KV cache for multi-head attention.

    Cache layout: [batch, num_heads, seq_len, head_dim]
    Prompts of different lengths are right-padded to the longest prompt.
    """

    def __init__(self):
        self.k_cache = None
        self.v_cache = None
        self.seq_lens = None

    def prefill(self, k, v, seq_lens):
        # k, v: [B, H, T, D]
        self.k_cache = k.copy()
        self.v_cache = v.copy()
        self.seq_lens = np.array(seq_lens)

    def update(self, k_new, v_new):
        # k_new, v_new: [B, H, D] -> append along the sequence axis
        self.k_cache = np.concatenate([self.k_cache, k_new[:, :, None, :]], axis=2)
        self.v_cache = np.concatenate([self.v_cache, v_new[:, :, None, :]], axis=2)
        self.seq_lens = self.seq_lens + 1

    def attention(self, q):
        # q: [B, H, D]
        # No causal mask is needed here: the cache only contains past tokens,
        # and the newest token is the last entry.
        d = q.shape[-1]
        scores = np.einsum("bhd,bhtd->bht", q, self.k_cache) / np.sqrt(d)
        weights = softmax(scores, axis=-1)
        return np.einsum("bht,bhtd->bhd", weights, self.v_cache)

    def decode_step(self, q, k_new, v_new):
        self.update(k_new, v_new)
        return self.attention(q)

    def memory_bytes(self):
        return self.k_cache.nbytes + self.v_cache.nbytes
