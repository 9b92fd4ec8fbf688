"""Top-p (nucleus) filtering in NumPy.

Why the crossing token must be kept: the nucleus is the smallest set whose
mass reaches p, so the token that carries the running sum past p belongs to
it. A sampler that keeps only tokens with `cumsum <= p` drops it, shrinks the
set below p (and to nothing when the top token alone exceeds p, which gives
a row of NaNs after renormalising).
"""
import numpy as np


def top_p_filter(logits, p):
    logits = np.asarray(logits, dtype=np.float64)
    shifted = logits - np.max(logits, axis=-1, keepdims=True)
    probs = np.exp(shifted)
    probs = probs / probs.sum(axis=-1, keepdims=True)
    order = np.argsort(-probs, axis=-1, kind="stable")
    ranked = np.take_along_axis(probs, order, axis=-1)
    mass_before = np.cumsum(ranked, axis=-1) - ranked
    keep_ranked = mass_before < p
    keep = np.zeros_like(keep_ranked)
    np.put_along_axis(keep, order, keep_ranked, axis=-1)
    out = np.where(keep, probs, 0.0)
    return out / out.sum(axis=-1, keepdims=True)


if __name__ == "__main__":
    rows = np.log(np.array([[0.5, 0.3, 0.15, 0.05]]))
    print(top_p_filter(rows, 0.7))
