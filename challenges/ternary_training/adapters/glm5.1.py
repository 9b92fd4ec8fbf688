"""ternary_training adapter for glm5.1 (published benchmark): its
ternarize_ste (ternary_model.py), the projection every TernaryLinear /
TernaryEmbedding of its model applies on the forward pass.

Translation only: ternary_quantize and ste_quantize call
ternarize_ste(W, group_size) unchanged (forward value: the ternary weights;
gradient: identity, through W + stop_gradient(W_t - W)).
"""
from __future__ import annotations

from ternary_model import ternarize_ste

ANSWER_SHA256 = {
    "ternary_model.py": "27b9e2df04b1614c7f9b26a135dbde8c83a88c22eeef930ebc2e3575ed554bba",
}


def ternary_quantize(w, group_size=128):
    return ternarize_ste(w, group_size)


def ste_quantize(w, group_size=128):
    return ternarize_ste(w, group_size)
