import numpy as np

from flash_attention import flash_attention_bwd, flash_attention_fwd


def reference_attention(Q, K, V, causal):
    D = Q.shape[-1]
    s = Q @ K.swapaxes(-1, -2) / np.sqrt(D)
    if causal:
        N = Q.shape[-2]
        s = s + np.triu(np.full((N, N), -np.inf), 1)
    p = np.exp(s - s.max(-1, keepdims=True))
    p = p / p.sum(-1, keepdims=True)
    return p @ V, p


def test_forward_matches_reference():
    rng = np.random.default_rng(0)
    Q, K, V = (rng.normal(size=(1, 2, 128, 32)) for _ in range(3))
    for causal in (True, False):
        O, _ = flash_attention_fwd(Q, K, V, 32, causal)
        expected, _ = reference_attention(Q, K, V, causal)
        assert np.allclose(O, expected, atol=1e-8)


def test_backward_matches_reference():
    rng = np.random.default_rng(1)
    Q, K, V, dO = (rng.normal(size=(1, 2, 128, 32)) for _ in range(4))
    O, cache = flash_attention_fwd(Q, K, V, 32, False)
    dQ, dK, dV = flash_attention_bwd(dO, cache, 32, False)
    _, p = reference_attention(Q, K, V, False)
    dV_ref = p.swapaxes(-1, -2) @ dO
    dp = dO @ V.swapaxes(-1, -2)
    ds = p * (dp - (p * dp).sum(-1, keepdims=True))
    assert np.allclose(dV, dV_ref, atol=1e-8)
    assert np.allclose(dQ, ds @ K / np.sqrt(32), atol=1e-8)
    assert np.allclose(dK, ds.swapaxes(-1, -2) @ Q / np.sqrt(32), atol=1e-8)


def test_gradient_numerically():
    rng = np.random.default_rng(2)
    Q, K, V, dO = (rng.normal(size=(1, 1, 16, 8)) for _ in range(4))
    _, cache = flash_attention_fwd(Q, K, V, 4, False)
    dQ, _, _ = flash_attention_bwd(dO, cache, 4, False)
    eps = 1e-6
    for idx in [(0, 0, 3, 1), (0, 0, 10, 5)]:
        Qp, Qm = Q.copy(), Q.copy()
        Qp[idx] += eps
        Qm[idx] -= eps
        f = lambda q: (flash_attention_fwd(q, K, V, 4, False)[0] * dO).sum()
        assert abs((f(Qp) - f(Qm)) / (2 * eps) - dQ[idx]) < 1e-5


if __name__ == "__main__":
    test_forward_matches_reference()
    test_backward_matches_reference()
    test_gradient_numerically()
    print("OK")
