"""Trusted tiled attention forward (speed baseline) and naive attention (oracle).

``flash_attention_fwd`` follows the online-softmax recurrence over key tiles:
running max m, running sum l, and an accumulator rescaled by exp(m_old - m_new)
whenever the max grows. Tiles entirely above the diagonal are skipped in the
causal case. Memory: O(N * D + tile^2) per head, never N x N.
"""
from __future__ import annotations

import numpy as np


def flash_attention_fwd(Q: np.ndarray, K: np.ndarray, V: np.ndarray, tile_size: int,
                        causal: bool = True) -> np.ndarray:  # the published prompt's default
    b, h, n, d = Q.shape
    scale = Q.dtype.type(1.0 / np.sqrt(d))  # a float64 scalar would upcast float32 work
    out = np.empty_like(Q)
    for qs in range(0, n, tile_size):
        qe = min(qs + tile_size, n)
        q = Q[:, :, qs:qe] * scale
        m = np.full((b, h, qe - qs, 1), -np.inf, dtype=Q.dtype)
        l = np.zeros((b, h, qe - qs, 1), dtype=Q.dtype)
        acc = np.zeros((b, h, qe - qs, d), dtype=Q.dtype)
        for ks in range(0, qe if causal else n, tile_size):
            ke = min(ks + tile_size, n)
            s = q @ K[:, :, ks:ke].swapaxes(-1, -2)
            if causal and ke - 1 > qs:  # tile crosses the diagonal
                rows = np.arange(qs, qe)[:, None]
                cols = np.arange(ks, ke)[None, :]
                s = np.where(cols > rows, -np.inf, s)
            m_new = np.maximum(m, s.max(axis=-1, keepdims=True))
            p = np.exp(s - m_new)
            alpha = np.exp(m - m_new)
            l = alpha * l + p.sum(axis=-1, keepdims=True)
            acc = alpha * acc + p @ V[:, :, ks:ke]
            m = m_new
        out[:, :, qs:qe] = acc / l
    return out


def naive_attention(Q, K, V, causal: bool) -> np.ndarray:
    """softmax(Q K^T / sqrt(D)) V in float64 with an explicit N x N matrix."""
    Q, K, V = (np.asarray(a, dtype=np.float64) for a in (Q, K, V))
    n = Q.shape[2]
    s = Q @ K.swapaxes(-1, -2) / np.sqrt(Q.shape[-1])
    if causal:
        s = np.where(np.triu(np.ones((n, n), dtype=bool), k=1), -np.inf, s)
    s -= s.max(axis=-1, keepdims=True)
    p = np.exp(s)
    return (p / p.sum(axis=-1, keepdims=True)) @ V
