import numpy as np


def flash_attention_forward(q, k, v, block_size=64, causal=False):
    """
    FlashAttention forward pass (tiled, online softmax).

    q, k, v: [batch, heads, seq_len, head_dim]
    Returns the attention output with the same shape as q.
    """
    B, H, N, D = q.shape
    scale = 1.0 / np.sqrt(D)
    out = np.zeros_like(q)

    for i in range(0, N, block_size):
        qi = q[:, :, i:i + block_size]
        br = qi.shape[2]

        # running statistics for the online softmax
        m_i = np.full((B, H, br, 1), -np.inf)
        l_i = np.zeros((B, H, br, 1))
        o_i = np.zeros((B, H, br, D))

        for j in range(0, N, block_size):
            if causal and j > i + br - 1:
                break  # block is entirely in the future
            kj = k[:, :, j:j + block_size]
            vj = v[:, :, j:j + block_size]

            s_ij = (qi @ kj.transpose(0, 1, 3, 2)) * scale

            if causal:
                row = np.arange(i, i + br)[:, None]
                col = np.arange(j, j + kj.shape[2])[None, :]
                s_ij = np.where(col > row, -np.inf, s_ij)

            m_new = np.maximum(m_i, s_ij.max(axis=-1, keepdims=True))
            p_ij = np.exp(s_ij - m_new)

            # update running sum with the rescaling factor
            l_i = np.exp(m_i - m_new) * l_i + p_ij.sum(axis=-1, keepdims=True)
            o_i = o_i + p_ij @ vj
            m_i = m_new

        out[:, :, i:i + br] = o_i / l_i

    return out
