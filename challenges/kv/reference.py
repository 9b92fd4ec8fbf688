"""Trusted KV-cache (speed baseline) and attention from scratch (oracle).

Layout: keys and values of shape (B, H, capacity, D); sequence b holds
``lengths[b]`` valid positions at the front, the rest is unused padding.
Capacity doubles when full, so memory grows linearly with tokens.
"""
from __future__ import annotations

import numpy as np


class KVCache:
    def prefill(self, k: np.ndarray, v: np.ndarray, lengths) -> None:
        """Load padded prompts k, v (B, H, T, D); only ``lengths[b]`` rows count."""
        b, h, t, d = k.shape
        capacity = max(16, t)
        dtype = np.result_type(k.dtype, v.dtype, np.float32)
        self.k = np.zeros((b, h, capacity, d), dtype)
        self.v = np.zeros((b, h, capacity, d), dtype)
        self.k[:, :, :t] = k
        self.v[:, :, :t] = v
        self.lengths = np.asarray(lengths, dtype=np.int64).copy()

    def _grow(self, needed: int) -> None:
        capacity = self.k.shape[2]
        if needed <= capacity:
            return
        new = max(needed, 2 * capacity)
        pad = ((0, 0), (0, 0), (0, new - capacity), (0, 0))
        self.k, self.v = np.pad(self.k, pad), np.pad(self.v, pad)

    def decode(self, q: np.ndarray, k_new: np.ndarray, v_new: np.ndarray) -> np.ndarray:
        """Append one token per sequence, attend q (B, H, D) over the cache."""
        self._grow(int(self.lengths.max()) + 1)
        rows = np.arange(q.shape[0])
        self.k[rows, :, self.lengths] = k_new
        self.v[rows, :, self.lengths] = v_new
        self.lengths += 1
        used = int(self.lengths.max())
        keys, values = self.k[:, :, :used], self.v[:, :, :used]
        scores = np.einsum("bhd,bhtd->bht", q, keys) / np.sqrt(q.shape[-1])
        valid = np.arange(used)[None, :] < self.lengths[:, None]          # (B, T)
        scores = np.where(valid[:, None, :], scores, -np.inf)
        scores -= scores.max(axis=-1, keepdims=True)
        weights = np.exp(scores)
        weights /= weights.sum(axis=-1, keepdims=True)
        return np.einsum("bht,bhtd->bhd", weights, values).astype(q.dtype, copy=False)


    def extend(self, q: np.ndarray, k_new: np.ndarray, v_new: np.ndarray) -> np.ndarray:
        """Several new tokens at once (B, H, T, D): append, attend causally."""
        return np.stack([self.decode(q[:, :, j], k_new[:, :, j], v_new[:, :, j]) for j in range(q.shape[2])], axis=2)


def causal_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Full causal attention of one sequence, (H, T, D), in float64, from scratch."""
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    t = q.shape[1]
    scores = q @ k.transpose(0, 2, 1) / np.sqrt(q.shape[-1])
    scores = np.where(np.tril(np.ones((t, t), dtype=bool)), scores, -np.inf)
    scores -= scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    return (weights / weights.sum(axis=-1, keepdims=True)) @ v
