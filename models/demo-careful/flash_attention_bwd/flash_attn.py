"""FlashAttention forward + backward in NumPy, tiled, O(N) extra memory.

Shapes: Q, K, V, O, dO are (B, H, N, D); L is (B, H, N).
Nothing of size N x N is ever allocated: scores live one
(tile_size x tile_size) block at a time.
"""
import numpy as np


def _tiles(n, size):
    """(start, stop) pairs covering range(n) in steps of `size`."""
    return [(s, min(s + size, n)) for s in range(0, n, size)]


def _causal_block_mask(q0, q1, k0, k1):
    """True where key index > query index inside one block (to be masked)."""
    return np.arange(k0, k1)[None, :] > np.arange(q0, q1)[:, None]


def flash_attention_fwd(Q, K, V, tile_size, causal):
    B, H, N, D = Q.shape
    dt = np.result_type(Q, K, V, np.float32)
    sm_scale = 1.0 / np.sqrt(D)
    O = np.empty((B, H, N, D), dtype=dt)
    L = np.empty((B, H, N), dtype=dt)

    for q0, q1 in _tiles(N, tile_size):
        Qi = Q[:, :, q0:q1].astype(dt, copy=False)
        m_i = np.full((B, H, q1 - q0), -np.inf, dtype=dt)   # running max
        l_i = np.zeros((B, H, q1 - q0), dtype=dt)           # running sum of exp
        acc = np.zeros((B, H, q1 - q0, D), dtype=dt)
        for k0, k1 in _tiles(N, tile_size):
            if causal and k0 >= q1:      # whole block above the diagonal
                break
            S = np.einsum("bhqd,bhkd->bhqk", Qi, K[:, :, k0:k1]) * sm_scale
            if causal and k1 - 1 > q0:   # block straddles the diagonal
                S = np.where(_causal_block_mask(q0, q1, k0, k1), -np.inf, S)
            m_new = np.maximum(m_i, S.max(axis=-1))
            P_blk = np.exp(S - m_new[..., None])
            corr = np.exp(m_i - m_new)   # rescales what was summed so far
            l_i = l_i * corr + P_blk.sum(axis=-1)
            acc = acc * corr[..., None] + P_blk @ V[:, :, k0:k1]
            m_i = m_new
        O[:, :, q0:q1] = acc / l_i[..., None]
        L[:, :, q0:q1] = m_i + np.log(l_i)

    cache = {"Q": Q, "K": K, "V": V, "O": O, "L": L}
    return O, cache


def flash_attention_bwd(dO, cache, tile_size, causal):
    Q, K, V, O, L = (cache[k] for k in ("Q", "K", "V", "O", "L"))
    B, H, N, D = Q.shape
    dt = O.dtype
    sm_scale = 1.0 / np.sqrt(D)
    dQ = np.zeros((B, H, N, D), dtype=dt)
    dK = np.zeros((B, H, N, D), dtype=dt)
    dV = np.zeros((B, H, N, D), dtype=dt)
    # Delta_i = rowsum(P * dP)_i = rowsum(dO * O)_i (see NOTES.md)
    Delta = np.einsum("bhnd,bhnd->bhn", dO, O)

    for k0, k1 in _tiles(N, tile_size):          # outer: key/value blocks
        Kj, Vj = K[:, :, k0:k1], V[:, :, k0:k1]
        dKj = np.zeros((B, H, k1 - k0, D), dtype=dt)
        dVj = np.zeros((B, H, k1 - k0, D), dtype=dt)
        for q0, q1 in _tiles(N, tile_size):      # inner: query blocks
            if causal and k0 >= q1:
                continue
            Qi, dOi = Q[:, :, q0:q1], dO[:, :, q0:q1]
            S = np.einsum("bhqd,bhkd->bhqk", Qi, Kj) * sm_scale
            P_blk = np.exp(S - L[:, :, q0:q1, None])
            if causal and k1 - 1 > q0:
                P_blk = np.where(_causal_block_mask(q0, q1, k0, k1), 0.0, P_blk)
            dVj += np.swapaxes(P_blk, -1, -2) @ dOi
            dP = dOi @ np.swapaxes(Vj, -1, -2)
            dS = P_blk * (dP - Delta[:, :, q0:q1, None])
            dQ[:, :, q0:q1] += sm_scale * (dS @ Kj)
            dKj += sm_scale * (np.swapaxes(dS, -1, -2) @ Qi)
        dK[:, :, k0:k1] = dKj
        dV[:, :, k0:k1] = dVj
    return dQ, dK, dV
