"""ternary_training adapter for kimi-k2.6 (published benchmark): the
TernaryLinear of train_pathb.py, the path its REPORT.md names as the one it
trained (``from train_pathb import TernaryLinear``).

Translation only (a class to functions):
- ternary_quantize(w) is TernaryLinear._quantize(w) on a layer of w's shape:
  (ternary weights, per-group scales);
- ste_quantize(w) is the layer's effective weight on the forward pass: the
  layer, holding w as its latent weight, applied to the identity matrix
  (x @ W_eff.T with x = I is W_eff.T, exactly); its gradient is the answer's
  own STE (W_t + (W - stop_gradient(W))).
"""
from __future__ import annotations

import mlx.core as mx
from train_pathb import TernaryLinear

ANSWER_SHA256 = {
    "train_pathb.py": "00f1ebda1d56c491391979fb9545e6d9a7e4638be6381b08b00ad7bcb14621c1",
}


def _layer(w, group_size):
    out_f, in_f = w.shape
    layer = TernaryLinear(in_f, out_f, group_size)
    layer.weight = w
    return layer


def ternary_quantize(w, group_size=128):
    return _layer(w, group_size)._quantize(w)


def ste_quantize(w, group_size=128):
    layer = _layer(w, group_size)
    return layer(mx.eye(w.shape[1], dtype=w.dtype)).T
