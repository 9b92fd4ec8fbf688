import numpy as np


def layer_norm_forward(x, gamma, beta, eps=1e-5):
    """
    Layer norm forward pass over the last dimension.

    Args:
        x: (B, T, D) input
        gamma, beta: (D,) scale and shift
    Returns:
        out: normalised output
        cache: values saved for the backward pass
    """
    # Promote to float64 for numerical stability
    x = x.astype(np.float64)

    # Single pass over the data: E[x] and E[x^2] together (memory-bandwidth friendly)
    mean = np.mean(x, axis=-1, keepdims=True)
    mean_sq = np.mean(x ** 2, axis=-1, keepdims=True)
    var = mean_sq - mean ** 2

    std = np.sqrt(var + eps)
    x_hat = (x - mean) / std
    out = gamma * x_hat + beta

    cache = (x, x_hat, mean, var, std, gamma, beta, eps)
    return out, cache


def layer_norm_backward(dout, cache):
    """
    Backward pass. Returns (dx, dgamma, dbeta).
    """
    x, x_hat, mean, var, std, gamma, beta, eps = cache
    D = x.shape[-1]

    dbeta = np.sum(dout, axis=(0, 1))
    dgamma = np.sum(dout * x_hat, axis=(0, 1))

    dx_hat = dout * gamma
    dvar = np.sum(dx_hat * (x - mean) * -0.5 * (var + eps) ** -1.5, axis=-1, keepdims=True)
    dmean = np.sum(-dx_hat / std, axis=-1, keepdims=True) + dvar * np.mean(-2.0 * (x - mean), axis=-1, keepdims=True)
    dx = dx_hat / std + dvar * 2.0 * (x - mean) / D + dmean / D

    return dx, dgamma, dbeta
