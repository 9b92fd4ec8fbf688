import numpy as np


def flash_attention_fwd(Q, K, V, tile_size=64, causal=True):
    """FlashAttention-2 style forward. Returns O and a cache for the backward pass."""
    B, H, N, D = Q.shape
    scale = 1.0 / np.sqrt(D)
    O = np.zeros_like(Q, dtype=np.float64)
    L = np.zeros((B, H, N))

    for b in range(B):
        for h in range(H):
            for i in range(0, N, tile_size):
                q = Q[b, h, i:i + tile_size]
                Tq = q.shape[0]
                m = np.full(Tq, -np.inf)
                l = np.zeros(Tq)
                o = np.zeros((Tq, D))
                for j in range(0, N, tile_size):
                    if causal and j > i + Tq - 1:
                        continue  # tile fully in the future
                    k = K[b, h, j:j + tile_size]
                    v = V[b, h, j:j + tile_size]
                    s = q @ k.T * scale
                    if causal:
                        qi = np.arange(i, i + Tq)[:, None]
                        kj = np.arange(j, j + k.shape[0])[None, :]
                        s = np.where(kj <= qi, s, -np.inf)
                    m_new = np.maximum(m, s.max(axis=1))
                    p = np.exp(s - m_new[:, None])
                    l = np.exp(m - m_new) * l + p.sum(axis=1)
                    o = np.exp(m - m_new)[:, None] * o + p @ v
                    m = m_new
                O[b, h, i:i + Tq] = o / l[:, None]
                L[b, h, i:i + Tq] = m + np.log(l)

    cache = (Q, K, V, O, L)
    return O, cache


def flash_attention_bwd(dO, cache, tile_size=64, causal=True):
    """Backward pass: recompute P tile by tile from the saved logsumexp L."""
    Q, K, V, O, L = cache
    B, H, N, D = Q.shape
    scale = 1.0 / np.sqrt(D)
    dQ = np.zeros_like(Q, dtype=np.float64)
    dK = np.zeros_like(K, dtype=np.float64)
    dV = np.zeros_like(V, dtype=np.float64)

    for b in range(B):
        for h in range(H):
            Di = np.sum(dO[b, h] * O[b, h], axis=1)  # rowsum(dO * O)
            for j in range(0, N, tile_size):
                k = K[b, h, j:j + tile_size]
                v = V[b, h, j:j + tile_size]
                for i in range(0, N, tile_size):
                    q = Q[b, h, i:i + tile_size]
                    if causal and j > i + q.shape[0] - 1:
                        continue  # skip tiles above the diagonal
                    s = q @ k.T * scale
                    p = np.exp(s - L[b, h, i:i + tile_size, None])
                    do = dO[b, h, i:i + tile_size]
                    dV[b, h, j:j + tile_size] += p.T @ do
                    dp = do @ v.T
                    ds = p * (dp - Di[i:i + tile_size, None])
                    dQ[b, h, i:i + tile_size] += ds @ k * scale
                    dK[b, h, j:j + tile_size] += ds.T @ q * scale
    return dQ, dK, dV
