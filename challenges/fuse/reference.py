"""Trusted reference for the fuse challenge: softmax + top-k per row.

``softmax64`` and ``topk_reference`` are the float64 oracle the GPU checks
compare against. ``valid_topk`` decides whether an answer's index list is one
of the valid top-k sets: under ties any member of the tied group may be
chosen, so an answer is never failed for picking index 7 over index 3 when
both hold the same logit. ``cupy_softmax_topk`` is the speed baseline.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def softmax64(logits: np.ndarray) -> np.ndarray:
    """Row-wise softmax in float64 with the max subtracted (log-sum-exp safe).

    ``-inf`` entries get probability 0; a row needs at least one finite entry.
    """
    x = np.asarray(logits, dtype=np.float64)
    m = np.max(x, axis=-1, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=-1, keepdims=True)


def topk_reference(logits: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(probs, indices), each [..., k], most likely first; ties by lower index."""
    x = np.asarray(logits)
    p = softmax64(x)
    # A stable sort on -x keeps equal logits in index order.
    order = np.argsort(-x.astype(np.float64), axis=-1, kind="stable")[..., :k]
    return np.take_along_axis(p, order, axis=-1), order


@dataclass(frozen=True)
class TieSets:
    """Every valid top-k set of one row: all of ``required`` plus any
    ``n_choose`` members of ``tied`` (the indices equal to the k-th value)."""

    required: frozenset[int]
    tied: frozenset[int]
    n_choose: int

    def count(self) -> int:
        from math import comb

        return comb(len(self.tied), self.n_choose)

    def contains(self, indices) -> bool:
        chosen = set(int(i) for i in indices)
        rest = chosen - self.required
        return self.required <= chosen and rest <= self.tied and len(rest) == self.n_choose


def tie_sets(row: np.ndarray, k: int) -> TieSets:
    """The valid top-k index sets of ``row`` under exact ties of its values."""
    row = np.asarray(row, dtype=np.float64)
    kth = np.sort(row)[::-1][k - 1]
    above = np.flatnonzero(row > kth)
    equal = np.flatnonzero(row == kth)
    return TieSets(frozenset(above.tolist()), frozenset(equal.tolist()), k - len(above))


def check_topk_row(logits_row: np.ndarray, probs_ref_row: np.ndarray, idx: np.ndarray, probs: np.ndarray,
                   k: int, rtol: float, atol: float = 1e-37) -> str | None:
    """Why one row's answer is wrong, or None when it is right.

    Indices: k distinct in-range indices, most likely first, forming a valid
    top-k set. Near-ties count as ties: the chosen indices' reference
    probabilities, sorted, must match the true top-k probabilities within
    ``rtol`` (float32 arithmetic may legitimately swap two logits one ulp
    apart). Probabilities: within ``rtol`` (plus a denormal-sized ``atol``)
    of the float64 reference at the answer's own indices.
    """
    V = logits_row.shape[0]
    idx = np.asarray(idx).astype(np.int64)
    probs = np.asarray(probs, dtype=np.float64)
    if idx.shape != (k,) or probs.shape != (k,):
        return f"expected {k} indices and probabilities, got shapes {idx.shape} and {probs.shape}"
    if np.any(idx < 0) or np.any(idx >= V):
        return f"index out of range [0, {V}): {idx[(idx < 0) | (idx >= V)][:3].tolist()}"
    if len(set(idx.tolist())) != k:
        return f"repeated index in {idx.tolist()[:8]}"
    if not np.all(np.isfinite(probs)):
        return f"non-finite probability in {probs.tolist()[:6]}"
    chosen = probs_ref_row[idx]
    if not tie_sets(logits_row, k).contains(idx):
        best = np.sort(probs_ref_row)[::-1][:k]
        if not np.allclose(np.sort(chosen)[::-1], best, rtol=rtol, atol=atol):
            wrong = [int(i) for i in idx if probs_ref_row[i] < best[-1] * (1 - rtol) - atol]
            return f"not a top-{k} set: indices {wrong[:3]} are below the k-th largest probability {best[-1]:.6g}"
    if np.any(np.diff(chosen) > rtol * chosen[1:] + atol):
        return f"not sorted most likely first: reference probabilities {np.round(chosen[:6], 6).tolist()}"
    bad = np.abs(probs - chosen) > rtol * np.abs(chosen) + atol
    if np.any(bad):
        j = int(np.flatnonzero(bad)[0])
        rel = abs(probs[j] - chosen[j]) / max(abs(chosen[j]), 1e-300)
        return (f"probability of index {idx[j]} is {probs[j]:.9g}, reference {chosen[j]:.9g} "
                f"(relative error {rel:.2e} > {rtol:g})")
    return None


def check_topk(logits: np.ndarray, idx: np.ndarray, probs: np.ndarray, k: int, rtol: float) -> tuple[int, str | None]:
    """(number of wrong rows, first row's reason) over a [rows, V] batch."""
    logits = np.asarray(logits)
    ref = softmax64(logits)
    idx, probs = np.asarray(idx).reshape(len(logits), -1), np.asarray(probs).reshape(len(logits), -1)
    first, wrong = None, 0
    for r in range(len(logits)):
        why = check_topk_row(logits[r], ref[r], idx[r], probs[r], k, rtol)
        if why is not None:
            wrong += 1
            first = first or f"row {r}: {why}"
    return wrong, first


def max_relative_error(logits: np.ndarray, idx: np.ndarray, probs: np.ndarray) -> float:
    """Largest relative error of the answer's probabilities at its own indices."""
    ref = softmax64(np.asarray(logits))
    idx = np.clip(np.asarray(idx).astype(np.int64), 0, ref.shape[-1] - 1)
    chosen = np.take_along_axis(ref, idx, axis=-1)
    nonzero = chosen > 0
    err = np.abs(np.asarray(probs, dtype=np.float64) - chosen)
    return float(np.max(np.where(nonzero, err / np.where(nonzero, chosen, 1.0), err), initial=0.0))


def cupy_softmax_topk(x, k: int):
    """Baseline on the GPU: full softmax in global memory, then argpartition.

    ``x`` is a CuPy float32 array [rows, V]; returns (probs, indices) sorted.
    """
    import cupy

    m = x.max(axis=1, keepdims=True)
    e = cupy.exp(x - m)
    p = e / e.sum(axis=1, keepdims=True)
    part = cupy.argpartition(-p, k - 1, axis=1)[:, :k]
    vals = cupy.take_along_axis(p, part, axis=1)
    order = cupy.argsort(-vals, axis=1)
    return cupy.take_along_axis(vals, order, axis=1), cupy.take_along_axis(part, order, axis=1)
