"""Checks: naive attention backward, finite differences, odd sizes, memory."""
import tracemalloc

import numpy as np

from flash_attn import flash_attention_bwd, flash_attention_fwd


def naive(Q, K, V, causal):
    N, D = Q.shape[-2:]
    S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(D)
    if causal:
        S = np.where(np.triu(np.ones((N, N), bool), 1), -np.inf, S)
    P = np.exp(S - S.max(-1, keepdims=True))
    P /= P.sum(-1, keepdims=True)
    return P @ V, P


def naive_grads(dO, Q, K, V, causal):
    O, P = naive(Q, K, V, causal)
    D = Q.shape[-1]
    dV = np.swapaxes(P, -1, -2) @ dO
    dP = dO @ np.swapaxes(V, -1, -2)
    dS = P * (dP - (P * dP).sum(-1, keepdims=True))
    return dS @ K / np.sqrt(D), np.swapaxes(dS, -1, -2) @ Q / np.sqrt(D), dV


def rel(a, b):
    return np.abs(a - b).max() / max(np.abs(b).max(), 1e-12)


def run_case(shape, tile, causal, seed=0):
    rng = np.random.default_rng(seed)
    Q, K, V, dO = (rng.standard_normal(shape) for _ in range(4))
    O, cache = flash_attention_fwd(Q, K, V, tile, causal)
    grads = flash_attention_bwd(dO, cache, tile, causal)
    O_ref, _ = naive(Q, K, V, causal)
    assert rel(O, O_ref) < 1e-10
    for g, r in zip(grads, naive_grads(dO, Q, K, V, causal)):
        assert rel(g, r) < 1e-10


def test_against_naive():
    for causal in (True, False):
        run_case((2, 3, 128, 32), 32, causal)
        run_case((1, 2, 100, 16), 33, causal)   # uneven tiles
        run_case((1, 1, 5, 8), 16, causal)      # N < tile
        run_case((1, 1, 1, 8), 4, causal)       # N = 1


def test_finite_differences():
    rng = np.random.default_rng(1)
    Q, K, V, dO = (rng.standard_normal((1, 1, 24, 8)) for _ in range(4))
    _, cache = flash_attention_fwd(Q, K, V, 8, True)
    grads = dict(zip("QKV", flash_attention_bwd(dO, cache, 8, True)))
    eps = 1e-6
    for name, X in (("Q", Q), ("K", K), ("V", V)):
        for idx in [(0, 0, i, j) for i in (0, 7, 8, 23) for j in (0, 5)]:
            Xp, Xm = X.copy(), X.copy()
            Xp[idx] += eps
            Xm[idx] -= eps
            args_p = {"Q": Q, "K": K, "V": V, name: Xp}
            args_m = {"Q": Q, "K": K, "V": V, name: Xm}
            lp = (flash_attention_fwd(args_p["Q"], args_p["K"], args_p["V"], 8, True)[0] * dO).sum()
            lm = (flash_attention_fwd(args_m["Q"], args_m["K"], args_m["V"], 8, True)[0] * dO).sum()
            num = (lp - lm) / (2 * eps)
            assert abs(num - grads[name][idx]) < 1e-6 * max(1.0, abs(num)), (name, idx)


def test_no_quadratic_memory():
    N, D = 2048, 64
    rng = np.random.default_rng(2)
    Q, K, V, dO = (rng.standard_normal((1, 1, N, D)) for _ in range(4))
    tracemalloc.start()
    _, cache = flash_attention_fwd(Q, K, V, 128, True)
    flash_attention_bwd(dO, cache, 128, True)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 0.2 * N * N * 8, peak
    assert all(np.size(v) < N * N for v in cache.values())


if __name__ == "__main__":
    test_against_naive()
    test_finite_differences()
    test_no_quadratic_memory()
    print("all flash attention backward checks passed")
