import numpy as np

from ternary_numpy import ternary_quantize, ternary_quantize_backward


def test_values_are_ternary():
    W = np.random.default_rng(0).normal(size=(64, 256))
    Wq = ternary_quantize(W)
    gamma = np.abs(Wq).max()
    assert set(np.unique(np.round(Wq / gamma))) <= {-1.0, 0.0, 1.0}


def test_ste_passes_gradient():
    g = np.ones((4, 128))
    assert np.array_equal(ternary_quantize_backward(g, g), g)


if __name__ == "__main__":
    test_values_are_ternary()
    test_ste_passes_gradient()
    print("ok")
