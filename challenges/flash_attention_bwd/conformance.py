"""Hidden checks for flash_attention_bwd (see specs/challenges.md).

Contract: ``flash_attention_fwd(Q, K, V, tile_size, causal) -> (O, cache)`` and
``flash_attention_bwd(dO, cache, tile_size, causal) -> (dQ, dK, dV)`` on
(B, H, N, D) arrays. The cache is opaque to the suite except that nothing in
it may be N x N.
"""
from __future__ import annotations

import numpy as np

FWD_NAMES = ("flash_attention_fwd", "flash_attention_forward", "flash_attn_fwd", "flash_attn_forward",
             "flash_fwd", "attention_fwd", "forward")
BWD_NAMES = ("flash_attention_bwd", "flash_attention_backward", "flash_attn_bwd", "flash_attn_backward",
             "flash_bwd", "attention_bwd", "backward")


def run(suite) -> None:
    fwd, bwd = bind(suite)
    ref = suite.reference()
    rel_tol = float(suite.threshold("rel_tol", 1e-4))
    answer = Answer(suite, fwd, bwd)

    forward_matches_reference(suite, answer, ref, rel_tol)
    gradient_checks(suite, answer, ref, rel_tol)
    large_scores(suite, answer, ref, rel_tol)
    small_n(suite, answer, ref, rel_tol)
    tile_remainders(suite, answer, ref, rel_tol)
    cache_has_no_nxn(suite, answer)
    with suite.check("memory_peak", threshold=float(suite.threshold("memory_fraction", 0.2)), requires=("no_nxn",)) as c:
        memory_peak(suite, c, fwd, bwd)
    masked_and_float64(suite, answer.forward, answer.backward, ref, rel_tol)
    rowsum_cancels(suite, answer.forward, answer.backward)
    speed(suite, fwd, bwd, ref)


class Answer:
    """The answer's forward and backward, called through the suite, their
    results held to the contract's form: (O, cache) and (dQ, dK, dV)."""

    def __init__(self, suite, fwd, bwd):
        self.suite, self.fwd, self.bwd = suite, fwd, bwd

    def forward(self, Q, K, V, tile, causal):
        out = self.suite.call(self.fwd, Q, K, V, tile, causal)
        if not isinstance(out, (tuple, list)) or len(out) < 2:
            raise TypeError(f"forward must return (O, cache), got {type(out).__name__}")
        return np.asarray(out[0]), out[1]

    def backward(self, dO, cache, tile, causal):
        out = self.suite.call(self.bwd, dO, cache, tile, causal)
        if isinstance(out, dict):
            out = (out.get("dQ", out.get("dq")), out.get("dK", out.get("dk")), out.get("dV", out.get("dv")))
        if not isinstance(out, (tuple, list)) or len(out) != 3:
            raise TypeError("backward must return (dQ, dK, dV)")
        return tuple(np.asarray(g) for g in out)


def against_naive(suite, c, answer: Answer, ref, rel_tol: float, label, shape, tile, causal, trials=1) -> None:
    """Forward and gradients against the float64 oracle; c.value = worst error."""
    worst = 0.0
    for trial in range(trials):
        Q, K, V, dO = inputs(suite.rng(f"{label}/{trial}"), shape)
        O, cache = answer.forward(Q, K, V, tile, causal)
        grads = answer.backward(dO, cache, tile, causal)
        want_O, _ = ref.naive_attention_fwd(Q, K, V, causal)
        want = ref.naive_attention_bwd(dO, Q, K, V, causal)
        for name, got, exp in zip(("O", "dQ", "dK", "dV"), (O, *grads), (want_O, *want)):
            if got.shape != exp.shape:
                c.fail(f"{name} has shape {got.shape}, expected {exp.shape}")
            err = rel_err(got, exp)
            c.details[f"{name}_rel_err" + (f"_{trial}" if trials > 1 else "")] = err
            worst = max(worst, err)
            c.value = worst
            if not err < rel_tol:
                c.fail(f"{name} off by {err:.3g} (relative, trial {trial}) at {shape} tile {tile} causal={causal}")


def grad_case(suite) -> tuple[tuple[int, ...], int]:
    """The shape and tile of the main forward and gradient checks."""
    return tuple(suite.threshold("grad_shape", [2, 4, 256, 64])), int(suite.threshold("grad_tile", 64))


def forward_matches_reference(suite, answer: Answer, ref, rel_tol: float) -> None:
    grad_shape, grad_tile = grad_case(suite)
    with suite.check("forward_matches_reference", threshold=rel_tol, requires=("forward", "causal_masking", "batching", "inputs_unchanged")) as c:
        Q, K, V, _ = inputs(suite.rng("forward"), grad_shape)
        O, _ = answer.forward(Q, K, V, grad_tile, True)
        want, _ = ref.naive_attention_fwd(Q, K, V, True)
        c.value = rel_err(O, want)
        c.expect(O.shape == want.shape, f"O has shape {O.shape}, expected {want.shape}")
        c.expect(c.value < rel_tol, f"O off by {c.value:.3g} (relative) at {grad_shape} causal")


def gradient_checks(suite, answer: Answer, ref, rel_tol: float) -> None:
    """Gradients against the oracle (twice, on fresh inputs), against finite
    differences, at an N no tile divides, and without the causal mask."""
    T = suite.threshold
    grad_shape, grad_tile = grad_case(suite)
    # Two trials on fresh inputs of the same shape: a memoised answer fails the second.
    with suite.check("gradients_vs_reference", threshold=rel_tol, requires=("gradients", "causal_masking", "batching", "inputs_unchanged")) as c:
        against_naive(suite, c, answer, ref, rel_tol, "grad", grad_shape, grad_tile, True, trials=2)

    with suite.check("finite_differences", threshold=float(T("fd_tol", 1e-5)), requires=("finite_differences", "gradients")) as c:
        finite_differences(suite, c, answer.forward, answer.backward)

    with suite.check("uneven_n", threshold=rel_tol, requires=("any_n", "gradients")) as c:
        against_naive(suite, c, answer, ref, rel_tol, "uneven", tuple(T("uneven_shape", [1, 2, 300, 32])),
                      int(T("uneven_tile", 97)), True)

    with suite.check("non_causal", threshold=rel_tol, requires=("non_causal", "gradients")) as c:
        against_naive(suite, c, answer, ref, rel_tol, "noncausal", tuple(T("noncausal_shape", [1, 2, 256, 64])),
                      int(T("noncausal_tile", 64)), False)


def large_scores(suite, answer: Answer, ref, rel_tol: float) -> None:
    # Fixed inputs (no seed): key tile 0 scores ~gap above every later key tile,
    # so a forward that rescales by exp(m_old - tile_max) without the running
    # maximum overflows (exp's range ends near 709) and its L and O turn NaN.
    with suite.check("large_scores", threshold=rel_tol,
                     requires=("forward", "gradients", "causal_masking", "non_causal", "any_n")) as c:
        gap = float(suite.threshold("large_score_gap", 1000.0))
        problems = [p for shape, tile, causal in (((1, 2, 64, 16), 16, True), ((1, 2, 50, 16), 16, False))
                    for p in large_score_case(c, answer.forward, answer.backward, ref, shape, tile, causal, gap, rel_tol)]
        if problems:
            c.fail("; ".join(problems))


def small_n(suite, answer: Answer, ref, rel_tol: float) -> None:
    with suite.check("small_n", threshold=rel_tol, requires=("any_n", "gradients")) as c:
        for n in suite.threshold("small_ns", [1, 7]):
            against_naive(suite, c, answer, ref, rel_tol, f"small{n}", (1, 2, int(n), 16),
                          int(suite.threshold("small_tile", 16)), True)


def tile_remainders(suite, answer: Answer, ref, rel_tol: float) -> None:
    """Every remainder of N against the tile (N = 1 .. 2 * tile + 1, tile 4), both masks, both
    passes: the last tile's bounds and the diagonal inside a partial tile, built on purpose."""
    with suite.check("tile_remainders", threshold=rel_tol, requires=("any_n", "gradients", "non_causal")) as c:
        worst = 0.0
        for n in range(1, 10):
            for causal in (True, False):
                against_naive(suite, c, answer, ref, rel_tol, f"remainder{n}{causal}", (1, 1, n, 3), 4, causal)
                worst = max(worst, c.value or 0.0)
        c.value = worst
        c.message = "N = 1 .. 9 with tile 4, causal and not"


def cache_has_no_nxn(suite, answer: Answer) -> None:
    """Nothing in the forward's cache is as big as the N x N score matrix."""
    with suite.check("cache_has_no_nxn", requires=("cache_contents",)) as c:
        shape = tuple(suite.threshold("cache_shape", [1, 2, 512, 32]))
        n = shape[2]
        c.threshold = n * n
        Q, K, V, _ = inputs(suite.rng("cache"), shape)
        _, cache = answer.forward(Q, K, V, int(suite.threshold("cache_tile", 64)), True)
        arrays = list(walk(cache))
        c.details["entries"] = {path: list(a.shape) for path, a in arrays}
        c.details["cache_bytes"] = sum(a.nbytes for _, a in arrays)
        c.value = max((a.size for _, a in arrays), default=0)
        big = [f"{path} {a.shape}" for path, a in arrays if a.size >= n * n]
        c.expect(not big, f"cache holds N x N sized data: {', '.join(big)}")


def speed(suite, fwd, bwd, ref) -> None:
    shape, tile = tuple(suite.threshold("speed_shape", [1, 4, 512, 64])), int(suite.threshold("speed_tile", 64))

    def make(trial):
        return inputs(suite.rng(f"speed/{trial}"), shape)

    # Timed without suite.call: deep copies would dominate; inputs are fresh per trial anyway.
    suite.time("speed", lambda a: bwd(a[3], fwd(a[0], a[1], a[2], tile, True)[1], tile, True),
               lambda a: ref.flash_attention_bwd(a[3], ref.flash_attention_fwd(a[0], a[1], a[2], tile, True)[1],
                                                 tile, True), make)


def bind(suite):
    adapter = suite.adapter()
    if adapter is not None:
        return adapter.flash_attention_fwd, adapter.flash_attention_bwd
    return suite.bind(*FWD_NAMES, kind="function"), suite.bind(*BWD_NAMES, kind="function")


def inputs(rng, shape):
    """Q, K, V, dO in float64."""
    return tuple(rng.standard_normal(shape) for _ in range(4))


def large_score_inputs(shape, tile, gap):
    """Q, K, V, dO where every query scores ~gap with the keys of the first
    tile and O(1) with all others: Q and those keys share a large component
    along the first axis, all other entries are standard normal from a fixed
    generator, so the case is the same on every run."""
    rng = np.random.default_rng(20261126)
    Q, K, V, dO = inputs(rng, shape)
    D = shape[3]
    a = np.sqrt(gap * np.sqrt(D))  # a * a / sqrt(D) = gap
    Q[..., 0] = a
    K[..., 0] = 0.0
    K[:, :, :tile, 0] = a
    return Q, K, V, dO


def large_score_case(c, forward, backward, ref, shape, tile, causal, gap, rel_tol) -> list[str]:
    """The first output off at this case, as a message (none when all agree)."""
    Q, K, V, dO = large_score_inputs(shape, tile, gap)
    O, cache = forward(Q, K, V, tile, causal)
    grads = backward(dO, cache, tile, causal)
    want_O, _ = ref.naive_attention_fwd(Q, K, V, causal)
    want = ref.naive_attention_bwd(dO, Q, K, V, causal)
    where = f"{shape} tile {tile} causal={causal}, key tile 0 scoring {gap:g} above the later tiles"
    for name, got, exp in zip(("O", "dQ", "dK", "dV"), (O, *grads), (want_O, *want)):
        err = rel_err(got, exp)
        c.details[f"{name}_rel_err_causal={causal}"] = err
        c.value = max(c.value or 0.0, err)
        if not err < rel_tol:
            bad = int(np.size(got) - np.isfinite(got).sum()) if np.shape(got) == exp.shape else None
            what = f"{bad} of {exp.size} entries not finite" if bad else f"off by {err:.3g} (relative)"
            return [f"{name}: {what} at {where}"]
    return []


def rel_err(got, want) -> float:
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        return float("inf")
    if not np.all(np.isfinite(got)):
        return float("inf")
    # Norm-wise: element-wise relative error is meaningless near zero entries.
    return float(np.abs(got - want).max(initial=0.0) / max(np.abs(want).max(initial=0.0), 1e-8))


def finite_differences(suite, c, forward, backward) -> None:
    """Central differences of sum(dO * O) through the answer's own forward:
    every dV entry and a few dQ / dK entries. Perturbed copies are stacked
    along the batch axis so one forward call evaluates many of them."""
    T = suite.threshold
    shape, tile = tuple(T("fd_shape", [1, 1, 64, 32])), int(T("fd_tile", 16))
    eps, tol = float(T("fd_eps", 1e-5)), float(T("fd_tol", 1e-5))
    chunk, n_qk = int(T("fd_chunk", 512)), int(T("fd_qk_entries", 10))
    rng = suite.rng("fd")
    Q, K, V, dO = inputs(rng, shape)
    _, cache = forward(Q, K, V, tile, True)
    dQ, dK, dV = backward(dO, cache, tile, True)
    N, D = shape[2], shape[3]
    base = {"Q": Q[0, 0], "K": K[0, 0], "V": V[0, 0]}
    analytic = {"Q": dQ[0, 0], "K": dK[0, 0], "V": dV[0, 0]}
    targets = [("V", i, d) for i in range(N) for d in range(D)]
    for name in ("Q", "K"):
        picks = rng.choice(N * D, size=n_qk, replace=False)
        targets += [(name, int(p) // D, int(p) % D) for p in picks]
    numeric = np.empty(len(targets))
    for lo in range(0, len(targets), chunk):
        part = targets[lo:lo + chunk]
        losses = []
        for sign in (1.0, -1.0):
            stacked = {k: np.repeat(v[None, None], len(part), axis=0) for k, v in base.items()}
            for j, (name, i, d) in enumerate(part):
                stacked[name][j, 0, i, d] += sign * eps
            O, _ = forward(stacked["Q"], stacked["K"], stacked["V"], tile, True)
            if O.shape != (len(part), 1, N, D):
                c.fail(f"forward on a batch of {len(part)} returned shape {O.shape}")
            losses.append((np.asarray(O, dtype=np.float64) * dO[0, 0]).sum(axis=(1, 2, 3)))
        numeric[lo:lo + len(part)] = (losses[0] - losses[1]) / (2 * eps)
    worst = 0.0
    for name in ("Q", "K", "V"):
        idx = [j for j, t in enumerate(targets) if t[0] == name]
        got = np.array([analytic[name][targets[j][1], targets[j][2]] for j in idx])
        scale = max(float(np.abs(analytic[name]).max()), 1e-8)
        err = float(np.abs(got - numeric[idx]).max() / scale) if np.all(np.isfinite(got)) else float("inf")
        c.details[f"d{name}_entries"] = len(idx)
        c.details[f"d{name}_fd_err"] = err
        worst = max(worst, err)
        c.value = worst
        if not err < tol:
            c.fail(f"d{name} disagrees with central differences of the answer's own forward by {err:.3g}")


def memory_peak(suite, c, fwd, bwd) -> None:
    """Peak growth of the answer process's memory (read from the OS by the
    checker) during forward and during backward at long N, as a fraction of
    one N x N float64 matrix. Inputs are staged in the answer's process before
    the measured call, so only what the answer allocates counts."""
    T = suite.threshold
    shape, tile = tuple(T("memory_shape", [1, 1, 4096, 64])), int(T("memory_tile", 128))
    n = shape[2]
    nxn = n * n * 8
    Q, K, V, dO = inputs(suite.rng("memory"), shape)
    out, fwd_peak = suite.peak_memory(fwd, Q, K, V, tile, True)
    if not isinstance(out, (tuple, list)) or len(out) < 2:
        raise TypeError("forward must return (O, cache)")
    _, bwd_peak = suite.peak_memory(bwd, dO, out[1], tile, True)
    c.details.update(forward_peak_bytes=fwd_peak, backward_peak_bytes=bwd_peak, nxn_bytes=nxn)
    c.value = round(max(fwd_peak, bwd_peak) / nxn, 4)
    if not c.value < c.threshold:
        side = "forward" if fwd_peak >= bwd_peak else "backward"
        c.fail(f"{side} peaked at {max(fwd_peak, bwd_peak) / 2**20:.1f} MiB = {c.value:.2f} of one "
               f"N x N matrix ({nxn / 2**20:.0f} MiB) at N={n}")


def walk(obj, path="cache", depth=0):
    """(path, ndarray) for every array reachable in a cache object."""
    if depth > 4:
        return
    if isinstance(obj, np.ndarray):
        yield path, obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from walk(v, f"{path}[{k!r}]", depth + 1)
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            yield from walk(v, f"{path}[{i}]", depth + 1)
    elif hasattr(obj, "__dict__") and not isinstance(obj, type):
        for k, v in vars(obj).items():
            yield from walk(v, f"{path}.{k}", depth + 1)



def masked_key_inputs(shape, key, gap):
    """Fixed inputs (the same on every run) where every query scores ~gap with
    the one key at position ``key`` and O(1) with all others."""
    Q, K, V, dO = inputs(np.random.default_rng(20261127), shape)
    a = np.sqrt(gap * np.sqrt(shape[3]))
    Q[..., 0], K[..., 0] = a, 0.0
    K[:, :, key, 0] = a
    return Q, K, V, dO


def masked_and_float64(suite, forward, backward, ref, rel_tol) -> None:
    """Two fixed cases the random ones never separate.

    ``masked_key_large``: causal, one key inside a tile scores ~1000 above the
    rest, so the rows before it (which must not see it) share a tile with it. A
    forward that takes the tile's maximum before masking loses those rows (their
    exponentials underflow to 0, then 0/0).
    ``float64_accuracy``: the prompt says float64 inputs are computed in float64;
    a float32 accumulator is ~1e-7 off the float64 oracle, well inside the 1e-4
    the other checks allow, and far outside 1e-10."""
    T = suite.threshold
    gap = float(T("large_score_gap", 1000.0))
    with suite.check("masked_key_large", threshold=rel_tol, requires=("forward", "gradients", "causal_masking")) as c:
        for shape, tile, key in (((1, 2, 64, 16), 16, 15), ((1, 1, 50, 16), 16, 20)):
            Q, K, V, dO = masked_key_inputs(shape, key, gap)
            O, cache = forward(Q, K, V, tile, True)
            got = (O, *backward(dO, cache, tile, True))
            want = (ref.naive_attention_fwd(Q, K, V, True)[0], *ref.naive_attention_bwd(dO, Q, K, V, True))
            for name, g, w in zip(("O", "dQ", "dK", "dV"), got, want):
                err = rel_err(g, w)
                c.value = max(c.value or 0.0, err)
                if not err < rel_tol:
                    c.fail(f"{name} off by {err:.3g} (relative) at {shape} tile {tile} causal, key {key} scoring "
                           f"{gap:g} above the others: {masked_key_diagnosis(g, w, key, tile, rel_tol)}")
    tol64 = float(T("float64_rel_tol", 1e-10))
    with suite.check("float64_accuracy", threshold=tol64, requires=("forward", "gradients")) as c:
        for causal in (True, False):
            Q, K, V, dO = inputs(np.random.default_rng(20261128), (1, 2, 96, 32))
            O, cache = forward(Q, K, V, 32, causal)
            got = (O, *backward(dO, cache, 32, causal))
            want = (ref.naive_attention_fwd(Q, K, V, causal)[0], *ref.naive_attention_bwd(dO, Q, K, V, causal))
            for name, g, w in zip(("O", "dQ", "dK", "dV"), got, want):
                err = rel_err(g, w)
                c.value = max(c.value or 0.0, err)
                if not err < tol64:
                    c.fail(f"{name} off by {err:.3g} (relative) from float64 attention with float64 inputs "
                           f"(causal={causal}): float64 inputs must be computed in float64")


def masked_key_diagnosis(got, want, key: int, tile: int, rel_tol: float) -> str:
    """What a failure of ``masked_key_large`` says about the answer: whether
    only the rows that share a tile with the large key and come before it are
    lost (the tile's maximum taken before the causal mask: their exponentials
    underflow against a score they must not see, then 0/0) or others too."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        return f"shape {got.shape}, expected {want.shape}"
    scale = max(float(np.abs(want).max()), 1e-8)
    bad = ~np.isfinite(got) | (np.abs(np.nan_to_num(got, nan=np.inf) - want) > rel_tol * scale)
    rows = sorted({int(r) for r in np.nonzero(bad.any(axis=(0, 1, 3)))[0]})
    before = set(range(key - key % tile, key))
    shown = ", ".join(map(str, rows[:6])) + (" ..." if len(rows) > 6 else "")
    if rows and set(rows) <= before:
        lost = "not finite" if not np.isfinite(got[:, :, rows]).all() else "wrong"
        return (f"rows {shown} (the rows before key {key}, in its tile) come out {lost}: the running maximum was taken "
                f"before the causal mask, over a score those rows must not see, so their exponentials underflowed")
    return f"rows {shown} wrong: rows before key {key} must not see it"


def value_rows_equal_inputs(shape):
    """Fixed inputs (the same on every run) where every key carries the same
    value vector, of powers of two (so a forward in any precision gives O = v
    exactly), with random float64 queries, keys and upstream gradient."""
    rng = np.random.default_rng(20261129)
    Q, K, _, dO = inputs(rng, shape)
    v = 2.0 ** rng.integers(-2, 3, size=shape[3]) * rng.choice([-1.0, 1.0], size=shape[3])
    return Q, K, np.broadcast_to(v, shape).copy(), dO


def rowsum_cancels(suite, forward, backward) -> None:
    """``rowsum_cancels``: every key carries the same value, so the output does
    not depend on the scores and dQ = dK = 0 exactly: the rowsum term
    rowsum(P * dP) = rowsum(dO * O) must cancel dP in every row. In float64 it
    does, to rounding (about 1e-16 of the terms it cancels); a row sum, dO * O
    or dP held in float32 leaves 1e-8 of them in dQ and dK. Random inputs
    never show this: there it is a 1e-7 relative error, inside every gradient
    tolerance. The value vector's entries are powers of two, so O = v exactly
    whatever precision the forward accumulates in: only the backward's own
    reductions are judged."""
    tol = float(suite.threshold("rowsum_cancel_tol", 1e-10))
    with suite.check("rowsum_cancels", threshold=tol, requires=("gradients",)) as c:
        for causal in (True, False):
            shape, tile = (1, 2, 64, 32), 16
            Q, K, V, dO = value_rows_equal_inputs(shape)
            _, cache = forward(Q, K, V, tile, causal)
            dQ, dK, _ = backward(dO, cache, tile, causal)
            scale = 1.0 / np.sqrt(shape[3])
            # the size of each term the rowsum cancels, carried into dQ and dK
            terms = float(np.abs(dO @ V[0, 0, 0]).max()) * scale * max(float(np.abs(K).max()), float(np.abs(Q).max()))
            for name, g in (("dQ", dQ), ("dK", dK)):
                g = np.asarray(g, dtype=np.float64)
                err = float(np.abs(g).max()) / terms if np.all(np.isfinite(g)) else float("inf")
                c.details[f"{name}_residual_causal={causal}"] = err
                c.value = max(c.value or 0.0, err)
                if not err <= tol:
                    c.fail(f"{name} is {err:.3g} (relative to the terms the rowsum cancels) where it must be 0 "
                           f"(causal={causal}, every key carrying the same value, so the output ignores the scores): "
                           f"rowsum(P * dP) does not cancel dP, as when the row sum (or dO * O, or dP) is taken in "
                           f"float32 instead of the inputs' float64")
