"""Batched multi-head KV-cache for one-token-per-step decoding.

Layout: K and V live in (batch, heads, capacity, head_dim) buffers. Each
sequence owns the first ``lengths[b]`` slots of its row; slots past that are
unused and masked. Capacity grows in fixed chunks (chunked allocation), so
memory is O(tokens) with at most one chunk of slack per batch.
"""
from __future__ import annotations

import numpy as np


class KVCache:
    def __init__(self, batch_size: int, num_heads: int, head_dim: int,
                 dtype=np.float32, chunk: int = 64):
        self.batch_size, self.num_heads, self.head_dim = batch_size, num_heads, head_dim
        self.dtype, self.chunk = np.dtype(dtype), chunk
        self.lengths = np.zeros(batch_size, dtype=np.int64)
        self.keys = np.zeros((batch_size, num_heads, 0, head_dim), self.dtype)
        self.values = np.zeros_like(self.keys)

    @property
    def capacity(self) -> int:
        return self.keys.shape[2]

    def _reserve(self, needed: int) -> None:
        if needed <= self.capacity:
            return
        new_capacity = -(-needed // self.chunk) * self.chunk  # round up to a chunk
        extra = new_capacity - self.capacity
        shape = (self.batch_size, self.num_heads, extra, self.head_dim)
        self.keys = np.concatenate([self.keys, np.zeros(shape, self.dtype)], axis=2)
        self.values = np.concatenate([self.values, np.zeros(shape, self.dtype)], axis=2)

    def load_prompt(self, keys: np.ndarray, values: np.ndarray, prompt_lengths) -> None:
        """keys/values: (B, H, T, D) padded; only the first prompt_lengths[b] rows are real."""
        prompt_lengths = np.asarray(prompt_lengths, dtype=np.int64)
        self._reserve(int(prompt_lengths.max(initial=0)))
        for b, n in enumerate(prompt_lengths):
            # copy the valid prefix only: padding never enters the cache
            self.keys[b, :, :n] = keys[b, :, :n]
            self.values[b, :, :n] = values[b, :, :n]
        self.lengths = prompt_lengths.copy()

    def append(self, k: np.ndarray, v: np.ndarray) -> None:
        """Write one new token per sequence at its own next position."""
        self._reserve(int(self.lengths.max()) + 1)
        batch = np.arange(self.batch_size)
        self.keys[batch, :, self.lengths] = k
        self.values[batch, :, self.lengths] = v
        self.lengths = self.lengths + 1

    def attend(self, q: np.ndarray) -> np.ndarray:
        """q: (B, H, D) -> (B, H, D) over each sequence's valid positions."""
        span = int(self.lengths.max())
        keys, values = self.keys[:, :, :span], self.values[:, :, :span]
        scores = np.einsum("bhd,bhtd->bht", q, keys) * (1.0 / np.sqrt(self.head_dim))
        valid = np.arange(span)[None, None, :] < self.lengths[:, None, None]
        scores = np.where(valid, scores, -np.inf)
        scores = scores - scores.max(axis=-1, keepdims=True)
        probs = np.exp(scores)
        probs /= probs.sum(axis=-1, keepdims=True)
        return np.einsum("bht,bhtd->bhd", probs, values)

    def step(self, q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
        """One decode step: append this token's k/v, then attend with its q."""
        self.append(k, v)
        return self.attend(q)

    def nbytes(self) -> int:
        return self.keys.nbytes + self.values.nbytes
