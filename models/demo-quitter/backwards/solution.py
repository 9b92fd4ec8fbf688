# Layer norm forward/backward in numpy.
import numpy as np


def forward(x, gamma, beta, eps):
    mean = x.mean(-1, keepdims=True)
    var = x.var(-1, keepdims=True)
    xn = (x - mean) / np.sqrt(var + eps)
    y = gamma * xn + beta
    return y, (x, mean, var, gamma, eps)


def backward(dy, cache):
    x, mean, var, gamma, eps = cache
    n = x.shape[-1]
    inv = 1 / np.sqrt(var + eps)
    xn = (x - mean) * inv
    dbeta = dy.sum(axis=(0, 1))
    dgamma = (dy * xn).sum(axis=(0, 1))
    dxn = dy * gamma
    dx = inv / n * (n * dxn - dxn.sum(-1, keepdims=True) - xn * (dxn * xn).sum(-1, keepdims=True))
    return dx, dgamma, dbeta


if __name__ == "__main__":
    x = np.random.randn(2, 3, 4)
    y, c = forward(x, np.ones(4), np.zeros(4), 1e-5)
    print(backward(np.ones_like(y), c)[0].shape)
