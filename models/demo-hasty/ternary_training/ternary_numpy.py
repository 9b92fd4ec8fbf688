"""BitNet b1.58-style ternary training in pure NumPy (path B).

Weights W have shape (out_features, in_features). Quantisation follows the
absmean recipe: scale gamma = mean(|W|), W_q = gamma * clip(round(W / gamma), -1, 1).
Gradients use the straight-through estimator (dL/dW = dL/dW_q).
"""
import numpy as np

GROUP_SIZE = 128


def ternary_quantize(W, group_size=GROUP_SIZE):
    """Quantise W to ternary values {-gamma, 0, +gamma}.

    W is processed in groups of `group_size` input features.
    """
    out_f, in_f = W.shape
    assert in_f % group_size == 0, "in_features must be a multiple of group_size"
    gamma = np.mean(np.abs(W)) + 1e-8
    groups = W.reshape(out_f, in_f // group_size, group_size)
    q = np.clip(np.round(groups / gamma), -1, 1)
    return (q * gamma).reshape(out_f, in_f)


def ternary_quantize_backward(grad_wq, W, group_size=GROUP_SIZE):
    """Straight-through estimator: pass the gradient through unchanged."""
    return grad_wq


class BitLinear:
    def __init__(self, in_f, out_f, rng):
        self.W = rng.normal(0, in_f ** -0.5, (out_f, in_f))
        self.m = np.zeros_like(self.W)
        self.v = np.zeros_like(self.W)

    def forward(self, x):
        self.x = x
        self.Wq = ternary_quantize(self.W)
        return x @ self.Wq.T

    def backward(self, dy):
        self.dW = ternary_quantize_backward(dy.T @ self.x, self.W)
        return dy @ self.Wq
