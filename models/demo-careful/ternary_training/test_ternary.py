"""Self-checks for the quantiser, the straight-through estimator and a
few training steps (MLX on whatever device is the default)."""
import mlx.core as mx
import numpy as np

from bitlinear import BitLinear, ste_quantize, ternary_quantize


def test_each_group_has_its_own_absmean_scale():
    w = mx.random.normal((8, 256)) * mx.array([0.01] * 128 + [5.0] * 128)
    q = np.array(ternary_quantize(w)).reshape(8, 2, 128)
    s = np.abs(np.array(w)).reshape(8, 2, 128).mean(-1, keepdims=True)
    levels = np.round(q / s)
    assert set(np.unique(levels)) <= {-1.0, 0.0, 1.0}
    assert np.allclose(q, levels * s, rtol=1e-5, atol=0)


def test_straight_through_gradient_is_identity():
    w = mx.random.normal((4, 128))
    ct = mx.random.normal((4, 128))
    _, (g,) = mx.vjp(lambda x: ste_quantize(x), [w], [ct])
    assert np.array_equal(np.array(g), np.array(ct))


def test_bitlinear_uses_projected_weights():
    layer = BitLinear(128, 3)
    x = mx.random.normal((2, 128))
    expected = np.array(x) @ np.array(layer.projected()).T
    assert np.allclose(np.array(layer(x)), expected, atol=1e-4)


def test_a_few_steps_reduce_the_loss():
    from train_ternary import train

    text = open("train_data.txt", encoding="utf-8").read()[:20000]
    _, _, losses = train(text, cfg_overrides=dict(n_layers=1, d_ff=256), steps=25, batch=8, seq_len=32, log=None)
    assert np.mean(losses[-5:]) < 0.9 * np.mean(losses[:5])


if __name__ == "__main__":
    for name, fn in list(globals().items()):
        if name.startswith("test_"):
            fn()
            print("ok", name)
