"""Trusted reference for flash_attention_bwd.

``flash_attention_fwd`` / ``flash_attention_bwd`` implement the contract
(tiled, O(N) extra memory) and are the speed baseline; ``naive_attention_fwd``
/ ``naive_attention_bwd`` materialise the full score matrix in float64 and are
the oracle the conformance suite compares against.
"""
from __future__ import annotations

import numpy as np


def _scale(d: int) -> float:
    return 1.0 / np.sqrt(d)


def flash_attention_fwd(Q, K, V, tile_size, causal):
    """Tiled forward over (B, H, N, D). Returns (O, cache); the cache holds
    O, L (log-sum-exp per query row, (B, H, N)), Q, K, V and the settings."""
    Q, K, V = (np.asarray(a) for a in (Q, K, V))
    dtype = np.result_type(Q.dtype, np.float32)
    B, H, N, D = Q.shape
    scale = _scale(D)
    O = np.zeros((B, H, N, D), dtype=dtype)
    L = np.empty((B, H, N), dtype=dtype)
    for q_lo in range(0, N, tile_size):
        q_hi = min(q_lo + tile_size, N)
        q = Q[:, :, q_lo:q_hi]
        m = np.full((B, H, q_hi - q_lo), -np.inf, dtype=dtype)
        s_sum = np.zeros((B, H, q_hi - q_lo), dtype=dtype)
        acc = np.zeros((B, H, q_hi - q_lo, D), dtype=dtype)
        for k_lo in range(0, N, tile_size):
            # Tiles entirely above the diagonal contribute nothing.
            if causal and k_lo > q_hi - 1:
                break
            k_hi = min(k_lo + tile_size, N)
            s = (q @ K[:, :, k_lo:k_hi].swapaxes(-1, -2)) * scale
            if causal and k_hi - 1 > q_lo:
                rows = np.arange(q_lo, q_hi)[:, None]
                cols = np.arange(k_lo, k_hi)[None, :]
                s = np.where(cols > rows, -np.inf, s)
            m_new = np.maximum(m, s.max(axis=-1))
            p = np.exp(s - m_new[..., None])
            alpha = np.exp(m - m_new)
            s_sum = s_sum * alpha + p.sum(axis=-1)
            acc = acc * alpha[..., None] + p @ V[:, :, k_lo:k_hi]
            m = m_new
        O[:, :, q_lo:q_hi] = acc / s_sum[..., None]
        L[:, :, q_lo:q_hi] = m + np.log(s_sum)
    cache = {"O": O, "L": L, "Q": Q, "K": K, "V": V, "causal": bool(causal)}
    return O, cache


def flash_attention_bwd(dO, cache, tile_size, causal):
    """(dQ, dK, dV), recomputing each tile of P from L; nothing N x N."""
    Q, K, V, O, L = cache["Q"], cache["K"], cache["V"], cache["O"], cache["L"]
    dO = np.asarray(dO)
    B, H, N, D = Q.shape
    scale = _scale(D)
    dQ = np.zeros(Q.shape, dtype=O.dtype)
    dK = np.zeros(K.shape, dtype=O.dtype)
    dV = np.zeros(V.shape, dtype=O.dtype)
    # rowsum(P * dP) equals rowsum(dO * O): one number per query row.
    Dr = (dO * O).sum(axis=-1)
    for k_lo in range(0, N, tile_size):
        k_hi = min(k_lo + tile_size, N)
        k, v = K[:, :, k_lo:k_hi], V[:, :, k_lo:k_hi]
        for q_lo in range(0, N, tile_size):
            q_hi = min(q_lo + tile_size, N)
            if causal and k_lo > q_hi - 1:
                continue
            q = Q[:, :, q_lo:q_hi]
            s = (q @ k.swapaxes(-1, -2)) * scale
            if causal and k_hi - 1 > q_lo:
                # masked before the exponential: a large masked score would overflow it
                rows = np.arange(q_lo, q_hi)[:, None]
                cols = np.arange(k_lo, k_hi)[None, :]
                s = np.where(cols > rows, -np.inf, s)
            p = np.exp(s - L[:, :, q_lo:q_hi, None])
            do = dO[:, :, q_lo:q_hi]
            dV[:, :, k_lo:k_hi] += p.swapaxes(-1, -2) @ do
            dp = do @ v.swapaxes(-1, -2)
            ds = p * (dp - Dr[:, :, q_lo:q_hi, None])
            dQ[:, :, q_lo:q_hi] += (ds @ k) * scale
            dK[:, :, k_lo:k_hi] += (ds.swapaxes(-1, -2) @ q) * scale
    return dQ, dK, dV


def naive_attention_fwd(Q, K, V, causal):
    """Float64 full-matrix attention: (O, P) with P the (B, H, N, N) softmax."""
    Q, K, V = (np.asarray(a, dtype=np.float64) for a in (Q, K, V))
    N, D = Q.shape[-2], Q.shape[-1]
    s = (Q @ K.swapaxes(-1, -2)) * _scale(D)
    if causal:
        s = np.where(np.triu(np.ones((N, N), dtype=bool), 1), -np.inf, s)
    s = s - s.max(axis=-1, keepdims=True)
    p = np.exp(s)
    p /= p.sum(axis=-1, keepdims=True)
    return p @ V, p


def naive_attention_bwd(dO, Q, K, V, causal):
    """Float64 (dQ, dK, dV) of sum(dO * attention(Q, K, V))."""
    dO, Q, K, V = (np.asarray(a, dtype=np.float64) for a in (dO, Q, K, V))
    O, p = naive_attention_fwd(Q, K, V, causal)
    scale = _scale(Q.shape[-1])
    dV = p.swapaxes(-1, -2) @ dO
    dp = dO @ V.swapaxes(-1, -2)
    ds = p * (dp - (dp * p).sum(axis=-1, keepdims=True))
    return (ds @ K) * scale, (ds.swapaxes(-1, -2) @ Q) * scale, dV
