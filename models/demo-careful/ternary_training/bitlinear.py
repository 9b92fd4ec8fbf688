"""Ternary weights for MLX: absmean projection per group and a BitLinear layer.

Layout: weights are (out_features, in_features) as in ``mlx.nn.Linear``;
groups are ``group_size`` consecutive input features of one output row.
For a group with scale s = mean|W| the projection is
    W_q = s * clip(round(W / s), -1, 1)   ->  every entry is -s, 0 or +s.
Training keeps the latent full-precision W; the forward pass uses W_q and
the straight-through estimator hands dL/dW_q to W unchanged.
"""
from __future__ import annotations

import math

import mlx.core as mx
import mlx.nn as nn

GROUP_SIZE = 128
_EPS = 1e-8


def ternary_quantize(w: mx.array, group_size: int = GROUP_SIZE) -> mx.array:
    """Project ``w`` onto {-s, 0, +s} with one absmean scale per group."""
    out_features, in_features = w.shape
    if in_features % group_size:
        raise ValueError(f"in_features={in_features} must be a multiple of group_size={group_size}")
    groups = w.reshape(out_features, in_features // group_size, group_size)
    scale = mx.maximum(mx.mean(mx.abs(groups), axis=-1, keepdims=True), _EPS)
    codes = mx.clip(mx.round(groups / scale), -1, 1)
    return (codes * scale).reshape(out_features, in_features)


def ste_quantize(w: mx.array, group_size: int = GROUP_SIZE) -> mx.array:
    """Forward: the ternary projection. Backward: identity (straight-through)."""
    return w + mx.stop_gradient(ternary_quantize(w, group_size) - w)


class BitLinear(nn.Module):
    """Linear layer whose effective weight is ternary; no bias (as in Qwen3)."""

    def __init__(self, in_features: int, out_features: int, group_size: int = GROUP_SIZE):
        super().__init__()
        bound = 1.0 / math.sqrt(in_features)
        self.group_size = group_size
        self.weight = mx.random.uniform(-bound, bound, (out_features, in_features))

    def __call__(self, x: mx.array) -> mx.array:
        return x @ ste_quantize(self.weight, self.group_size).T

    def projected(self) -> mx.array:
        return ternary_quantize(self.weight, self.group_size)
