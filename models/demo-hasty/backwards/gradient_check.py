"""Numerical gradient check for layer_norm.py"""
import numpy as np

from layer_norm import layer_norm_forward, layer_norm_backward


def rel_error(a, b):
    return np.max(np.abs(a - b) / np.maximum(1e-8, np.abs(a) + np.abs(b)))


def eval_numerical_gradient(f, x, df, h=1e-5):
    grad = np.zeros_like(x)
    it = np.nditer(x, flags=["multi_index"], op_flags=["readwrite"])
    while not it.finished:
        ix = it.multi_index
        old = x[ix]
        x[ix] = old + h
        pos = f(x).copy()
        x[ix] = old - h
        neg = f(x).copy()
        x[ix] = old
        grad[ix] = np.sum((pos - neg) * df) / (2 * h)
        it.iternext()
    return grad


if __name__ == "__main__":
    np.random.seed(231)
    B, T, D = 2, 3, 4
    x = 5 * np.random.randn(B, T, D) + 12
    gamma = np.random.randn(D)
    beta = np.random.randn(D)
    dout = np.random.randn(B, T, D)

    _, cache = layer_norm_forward(x, gamma, beta)
    dx, dgamma, dbeta = layer_norm_backward(dout, cache)

    dx_num = eval_numerical_gradient(lambda x: layer_norm_forward(x, gamma, beta)[0], x, dout)
    dg_num = eval_numerical_gradient(lambda g: layer_norm_forward(x, g, beta)[0], gamma, dout)
    db_num = eval_numerical_gradient(lambda b: layer_norm_forward(x, gamma, b)[0], beta, dout)

    print("dx error:     ", rel_error(dx, dx_num))
    print("dgamma error: ", rel_error(dgamma, dg_num))
    print("dbeta error:  ", rel_error(dbeta, db_num))
