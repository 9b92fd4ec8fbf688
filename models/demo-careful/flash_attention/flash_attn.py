"""Tiled (flash) attention forward in NumPy.

For each query tile we stream over key/value tiles and keep per-row
statistics: m (running max of the scores), l (running sum of exp(s - m)) and
acc (running sum of exp(s - m) @ V). A tile that raises the max rescales l
and acc by exp(m_old - m_new), so after the last tile acc / l is exactly
softmax(S) @ V. Nothing of size N x N is ever allocated.
"""
from __future__ import annotations

import numpy as np


def flash_attention_fwd(Q, K, V, tile_size=64, causal=True):
    """Q, K, V: (B, H, N, D) -> O: (B, H, N, D)."""
    if Q.ndim != 4 or Q.shape != K.shape or K.shape != V.shape:
        raise ValueError(f"expected equal (B, H, N, D) shapes, got {Q.shape}, {K.shape}, {V.shape}")
    if tile_size < 1:
        raise ValueError("tile_size must be positive")
    B, H, N, D = Q.shape
    dtype = np.result_type(Q.dtype, np.float32)
    scale = dtype.type(1.0 / np.sqrt(D))
    O = np.empty((B, H, N, D), dtype=dtype)

    for q0 in range(0, N, tile_size):
        q1 = min(q0 + tile_size, N)
        q_tile = Q[:, :, q0:q1].astype(dtype) * scale   # fold the scale into Q once
        rows = q1 - q0
        m = np.full((B, H, rows, 1), -np.inf, dtype=dtype)
        l = np.zeros((B, H, rows, 1), dtype=dtype)
        acc = np.zeros((B, H, rows, D), dtype=dtype)

        # causal: key tiles starting after the last query row are all masked -> skip
        k_end = q1 if causal else N
        for k0 in range(0, k_end, tile_size):
            k1 = min(k0 + tile_size, N)
            s = q_tile @ np.swapaxes(K[:, :, k0:k1], -1, -2)          # (B, H, rows, cols)
            if causal and k1 - 1 > q0:                                 # tile straddles the diagonal
                q_idx = np.arange(q0, q1)[:, None]
                k_idx = np.arange(k0, k1)[None, :]
                s = np.where(k_idx <= q_idx, s, -np.inf)
            m_new = np.maximum(m, s.max(axis=-1, keepdims=True))
            # every row has at least its diagonal key in range, so m_new is finite
            correction = np.exp(m - m_new)
            p = np.exp(s - m_new)
            l = l * correction + p.sum(axis=-1, keepdims=True)
            acc = acc * correction + p @ V[:, :, k0:k1]
            m = m_new

        O[:, :, q0:q1] = acc / l
    return O
