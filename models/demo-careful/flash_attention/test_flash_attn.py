import numpy as np
import pytest

from flash_attn import flash_attention_fwd


def naive(Q, K, V, causal):
    n = Q.shape[2]
    s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if causal:
        s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ V


@pytest.mark.parametrize("n,tile,causal", [(256, 64, True), (300, 97, True), (200, 64, False),
                                           (1, 64, True), (40, 128, True), (130, 1, True)])
def test_matches_naive(n, tile, causal):
    rng = np.random.default_rng(n + tile)
    Q, K, V = (rng.normal(size=(2, 2, n, 32)) for _ in range(3))
    np.testing.assert_allclose(flash_attention_fwd(Q, K, V, tile, causal), naive(Q, K, V, causal), rtol=1e-9, atol=1e-12)


def test_large_scores_float32():
    rng = np.random.default_rng(7)
    Q, K, V = (rng.normal(size=(1, 1, 128, 64)).astype(np.float32) for _ in range(3))
    out = flash_attention_fwd(Q * 100, K, V, 32, True)
    ref = naive(*(a.astype(np.float64) for a in (Q * 100, K, V)), True)
    assert out.dtype == np.float32
    assert np.abs(out - ref).max() < 1e-4
