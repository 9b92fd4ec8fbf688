"""Trusted top-p (nucleus) filter: the oracle and the speed baseline.

Written with `benchtui challenge new top_p --from PROMPT.md` (the README's
worked example). Float64 throughout; the kept set is decided on the mass
strictly before each token (``before < p``), which keeps the token that
crosses p and never leaves a row empty.
"""
from __future__ import annotations

import numpy as np


def top_p_filter(logits: np.ndarray, p: float) -> np.ndarray:
    logits = np.asarray(logits, dtype=np.float64)
    z = logits - logits.max(axis=-1, keepdims=True)  # stable: the largest logit becomes 0
    probs = np.exp(z)
    probs /= probs.sum(axis=-1, keepdims=True)
    order = np.argsort(-probs, axis=-1, kind="stable")
    ranked = np.take_along_axis(probs, order, axis=-1)
    before = np.cumsum(ranked, axis=-1) - ranked  # mass of the more probable tokens
    keep = np.zeros(probs.shape, dtype=bool)
    np.put_along_axis(keep, order, before < p, axis=-1)
    kept = np.where(keep, probs, 0.0)
    return kept / kept.sum(axis=-1, keepdims=True)
