"""Finite-difference check plus the stability cases from the notes."""
import numpy as np

from layernorm import layernorm_backward, layernorm_forward


def numeric_grad(f, a, h=1e-6):
    grad = np.zeros_like(a)
    for idx in np.ndindex(a.shape):
        old = a[idx]
        a[idx] = old + h
        plus = f()
        a[idx] = old - h
        minus = f()
        a[idx] = old
        grad[idx] = (plus - minus) / (2 * h)
    return grad


def test_gradients_match_finite_differences():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 3, 6))
    gamma, beta = rng.normal(size=6), rng.normal(size=6)
    dy = rng.normal(size=x.shape)
    loss = lambda: float(np.sum(layernorm_forward(x, gamma, beta, 1e-5)[0] * dy))
    _, cache = layernorm_forward(x, gamma, beta, 1e-5)
    dx, dgamma, dbeta = layernorm_backward(dy, cache)
    for analytic, param in ((dx, x), (dgamma, gamma), (dbeta, beta)):
        numeric = numeric_grad(loss, param)
        assert np.max(np.abs(analytic - numeric)) < 1e-6


def test_constant_rows_are_finite():
    x = np.full((1, 2, 8), 3.0)
    y, cache = layernorm_forward(x, np.ones(8), np.zeros(8), 1e-5)
    grads = layernorm_backward(np.ones_like(x), cache)
    assert np.all(np.isfinite(y)) and all(np.all(np.isfinite(g)) for g in grads)


def test_float32_stays_float32():
    x = np.random.default_rng(1).normal(size=(2, 4, 16)).astype(np.float32)
    g = np.ones(16, np.float32)
    y, cache = layernorm_forward(x, g, np.zeros(16, np.float32), 1e-5)
    assert y.dtype == np.float32
    assert all(a.dtype == np.float32 for a in layernorm_backward(np.ones_like(x), cache))


if __name__ == "__main__":
    test_gradients_match_finite_differences()
    test_constant_rows_are_finite()
    test_float32_stays_float32()
    print("all layernorm checks passed")
