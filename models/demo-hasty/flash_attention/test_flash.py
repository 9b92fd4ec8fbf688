import numpy as np

from flash_attention import flash_attention_forward


def standard_attention(q, k, v, causal=False):
    d = q.shape[-1]
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d)
    if causal:
        n = q.shape[2]
        s = s + np.triu(np.full((n, n), -np.inf), k=1)
    s = s - s.max(-1, keepdims=True)
    p = np.exp(s)
    p = p / p.sum(-1, keepdims=True)
    return p @ v


def test_against_standard_attention():
    np.random.seed(0)
    q, k, v = (np.random.randn(2, 4, 64, 32) for _ in range(3))
    for causal in (False, True):
        out = flash_attention_forward(q, k, v, block_size=64, causal=causal)
        assert np.allclose(out, standard_attention(q, k, v, causal), atol=1e-6)


if __name__ == "__main__":
    test_against_standard_attention()
    print("FlashAttention matches standard attention")
