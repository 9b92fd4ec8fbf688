"""Layer normalisation over the last axis with a hand-derived backward pass.

Derivation (per row, N = D features, xhat = (x - mu) * rstd, g = dy * gamma):

    dbeta  = sum over rows of dy
    dgamma = sum over rows of dy * xhat
    dx     = rstd * (g - mean(g) - xhat * mean(g * xhat))

The last line comes from d xhat_i / d x_j = rstd * (delta_ij - 1/N - xhat_i xhat_j / N).
"""
import numpy as np


def layernorm_forward(x, gamma, beta, eps):
    """Return (y, cache). Two-pass statistics: subtract the mean before
    squaring so rows with a large offset keep their precision."""
    mu = np.mean(x, axis=-1, keepdims=True)
    centered = x - mu
    var = np.mean(centered * centered, axis=-1, keepdims=True)
    # eps keeps constant rows finite (var == 0 -> rstd == 1/sqrt(eps))
    rstd = np.asarray(1.0 / np.sqrt(var + eps), dtype=x.dtype)
    xhat = centered * rstd
    y = gamma * xhat + beta
    cache = {"xhat": xhat, "rstd": rstd, "gamma": gamma}
    return y, cache


def layernorm_backward(dy, cache):
    """Return (dx, dgamma, dbeta) for dy = dL/dy."""
    xhat, rstd, gamma = cache["xhat"], cache["rstd"], cache["gamma"]
    reduce_axes = tuple(range(dy.ndim - 1))
    dbeta = np.sum(dy, axis=reduce_axes)
    dgamma = np.sum(dy * xhat, axis=reduce_axes)

    g = dy * gamma
    mean_g = np.mean(g, axis=-1, keepdims=True)
    mean_gx = np.mean(g * xhat, axis=-1, keepdims=True)
    dx = rstd * (g - mean_g - xhat * mean_gx)
    return dx, dgamma, dbeta
