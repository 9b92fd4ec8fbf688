"""ternary_training adapter for glm5 (published benchmark): its
ternary_projection (ternary_linear.py, an mx.custom_function whose VJP is
the straight-through estimator, the projection TernaryLinear uses).

Translation only: ternary_quantize and ste_quantize both call
ternary_projection unchanged. Its group size is its own constant
GROUP_SIZE = 128 (the prompt's), so no group size is passed.
"""
from __future__ import annotations

from ternary_linear import ternary_projection

ANSWER_SHA256 = {
    "ternary_linear.py": "83ef0cb5a65af04171e6d6f9ed013bfef07699b3d912b05b8bcfddbec91f6112",
}


def ternary_quantize(w):
    """Projected weights {-s, 0, +s} per group of 128 along the input axis."""
    return ternary_projection(w)


def ste_quantize(w):
    """The same projection; its gradient is glm5's custom VJP (identity)."""
    return ternary_projection(w)
