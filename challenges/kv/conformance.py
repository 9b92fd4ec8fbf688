"""Hidden checks for `kv`: a KV-cache for one-token-per-step decoding.

APIs differ too much between answers, so binding is mostly through a
reviewer's adapter (challenges/kv/adapters/<model>.py) exposing
``prefill(k, v, lengths)`` and ``decode(q, k_new, v_new) -> out`` (module
functions, or a class/factory with those methods). Shapes: k, v (B, H, T, D)
padded past ``lengths[b]``; q, k_new, v_new and out (B, H, D).

Oracle: full causal attention over each whole sequence recomputed from
scratch in float64 (reference.causal_attention); decode step s of sequence b
must equal row lengths[b] + s of it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from benchtui.api import CheckFailed, batch_loops, describe_loops, record_reach

CLASS_NAMES = ("KVCache", "KvCache", "KVCacheNumpy", "Cache", "DecodeCache", "IncrementalDecoder")
FACTORY_NAMES = ("make_cache", "new_cache", "create_cache", "make_session")
LOOKED_FOR = ["an adapter (.benchtui/adapters/kv/<model>.py, else challenges/kv/adapters/<model>.py) "
              "with prefill(k, v, lengths) and decode(q, k_new, v_new)",
              "class with prefill and decode methods", "functions prefill and decode"]


class ModuleSession:
    """Module-level prefill/decode (state kept by the module; prefill resets it)."""

    def __init__(self, module):
        self.module = module

    def prefill(self, k, v, lengths):
        return self.module.prefill(k, v, lengths)

    def decode(self, q, k_new, v_new):
        return self.module.decode(q, k_new, v_new)

    def __getattr__(self, name):
        if name == "extend" and callable(getattr(self.module, "extend", None)):
            return self.module.extend
        raise AttributeError(name)


def session_factory(suite):
    """A callable giving a fresh object with prefill/decode per scenario."""
    adapter = suite.adapter()
    if adapter is not None:
        # a factory the adapter names explicitly, else its module-level functions
        for name in FACTORY_NAMES:
            if callable(getattr(adapter, name, None)):
                return getattr(adapter, name)
        if callable(getattr(adapter, "prefill", None)) and callable(getattr(adapter, "decode", None)):
            return lambda: ModuleSession(adapter)
        raise suite.unbound(LOOKED_FOR, "the adapter in use (the adapter check names it) lacks prefill/decode")
    cls = suite.find(*CLASS_NAMES, kind="class", methods=("prefill", "decode"))
    if cls is None:
        found = suite.binder.classes_with(("prefill", "decode"))
        cls = suite.binder.load(found[0]) if found else None
    if cls is not None:
        return cls
    prefill, decode = suite.find("prefill", kind="function"), suite.find("decode", kind="function")
    if prefill is not None and decode is not None:
        module = type("AnswerFunctions", (), {"prefill": staticmethod(prefill), "decode": staticmethod(decode)})
        return lambda: ModuleSession(module)
    raise suite.unbound(LOOKED_FOR)


@dataclass
class Scenario:
    k: np.ndarray          # (B, H, T, D), garbage past lengths[b]
    v: np.ndarray
    lengths: np.ndarray    # (B,)
    prompt_q: np.ndarray   # (B, H, T, D): queries of prompt rows, for the oracle only
    qs: np.ndarray         # (S, B, H, D) one query / key / value per decode step
    ks: np.ndarray
    vs: np.ndarray


def make_scenario(rng, lengths, heads, dim, steps, garbage) -> Scenario:
    b, t = len(lengths), max(lengths)
    k, v, pq = (rng.normal(size=(b, heads, t, dim)) for _ in range(3))
    for i, n in enumerate(lengths):
        k[i, :, n:] = garbage * rng.uniform(-1, 1, size=k[i, :, n:].shape)
        v[i, :, n:] = garbage * rng.uniform(-1, 1, size=v[i, :, n:].shape)
    qs, ks, vs = (rng.normal(size=(steps, b, heads, dim)) for _ in range(3))
    return Scenario(k, v, np.asarray(lengths, dtype=np.int64), pq, qs, ks, vs)


def oracle(ref, sc: Scenario) -> np.ndarray:
    """(S, B, H, D): each step's output from full causal attention, float64."""
    out = np.empty(sc.qs.shape)
    for b, n in enumerate(sc.lengths):
        step_rows = lambda a: a[:, b].transpose(1, 0, 2)  # (S, H, D) -> (H, S, D)  # noqa: B023 - called at once, within this iteration
        seq = [np.concatenate([p[b, :, :n], step_rows(s)], axis=1)
               for p, s in ((sc.prompt_q, sc.qs), (sc.k, sc.ks), (sc.v, sc.vs))]
        out[:, b] = ref.causal_attention(*seq)[:, n:].transpose(1, 0, 2)
    return out


def normalise(out, shape) -> np.ndarray:
    if isinstance(out, (tuple, list)) and len(out) and not np.isscalar(out[0]) and np.asarray(out[0]).shape == shape:
        out = out[0]  # (out, extra) tuples
    arr = np.asarray(out, dtype=np.float64)
    if arr.shape != shape:
        if arr.size != int(np.prod(shape)):
            raise CheckFailed(f"decode returned shape {arr.shape}, expected {shape}")
        arr = arr.reshape(shape)
    return arr


def rel_err(got, want) -> float:
    if not np.all(np.isfinite(got)):
        return math.inf
    denom = float(np.linalg.norm(want))
    diff = float(np.linalg.norm(got - want))
    return diff / denom if denom > 0 else diff


def run_decode(suite, factory, sc: Scenario, guard: bool = True) -> np.ndarray:
    """Prefill then decode every step; (S, B, H, D) float64 outputs."""
    call = suite.call if guard else (lambda fn, *a: fn(*a))
    session = factory()
    call(session.prefill, sc.k, sc.v, sc.lengths)
    outs = [normalise(call(session.decode, q, kn, vn), q.shape) for q, kn, vn in zip(sc.qs, sc.ks, sc.vs)]
    return np.stack(outs)


def worst_step(got, want) -> tuple[float, str]:
    worst, where = 0.0, ""
    for s in range(got.shape[0]):
        for b in range(got.shape[1]):
            err = rel_err(got[s, b], want[s, b])
            if not err <= worst:
                worst, where = err, f"step {s}, sequence {b}"
    return worst, where


def run(suite) -> None:
    factory = session_factory(suite)
    ref = suite.reference()
    tol = float(suite.threshold("tol", 1e-8))
    lengths = list(suite.threshold("lengths", [5, 12, 3]))
    heads, dim = int(suite.threshold("heads", 4)), int(suite.threshold("head_dim", 16))
    steps, garbage = int(suite.threshold("steps", 20)), float(suite.threshold("garbage", 1e3))

    with suite.check("decode_matches_full_attention", threshold=tol,
                     requires=("incremental_decode", "cached_attention", "multi_head", "variable_lengths",
                               "inputs_unchanged"), reach=True) as c:
        # a fixed small case first (the same on every run), then the run's random one
        fixed = make_scenario(np.random.default_rng(FIXED_SEED), [1, 3, 2], 2, 4, 3, garbage)
        err, where = worst_step(run_decode(suite, factory, fixed), oracle(ref, fixed))
        if not err <= tol:
            c.value = err
            c.fail(f"decode output differs from causal attention recomputed from scratch: error {err:.3g} at "
                   f"{where} of the fixed case (lengths [1, 3, 2], 2 heads, dim 4, 3 steps)")
        sc = make_scenario(suite.rng("decode"), lengths, heads, dim, steps, garbage)
        c.value, where = worst_step(run_decode(suite, factory, sc), oracle(ref, sc))
        c.value = max(c.value, err)
        own_batching(c, len(lengths))
        c.message = f"worst at {where} (lengths {lengths}, {heads} heads, dim {dim}, {steps} steps; fixed case error {err:.2g})"
        if not c.value <= tol:
            c.fail(f"decode output differs from causal attention recomputed from scratch: error {c.value:.3g} at {where}")

    large_scores(suite, factory, ref, tol, garbage)
    row_spread_scores(suite, factory, ref, tol, garbage)
    decode_output_shape(suite, factory, garbage)

    with suite.check("padding_isolated", threshold=tol, requires=("variable_lengths", "inputs_unchanged"),
                     reach=True) as c:
        pad_lengths = [2, 9, 1]
        # fixed case: every padding row holds the same key, aligned with every query
        # (a leak takes almost all the attention), then the run's random padding
        fixed = make_scenario(np.random.default_rng(FIXED_SEED), [1, 3], 1, 4, 2, 0.0)
        fixed.k[0, :, 1:], fixed.v[0, :, 1:] = 50.0, garbage
        fixed.qs[:], fixed.ks[:] = np.abs(fixed.qs), np.abs(fixed.ks)
        err = worst_step(run_decode(suite, factory, fixed), oracle(ref, fixed))[0]
        if not err <= tol:
            c.fail(f"padding rows change the output (error {err:.3g}) in the fixed case: lengths [1, 3], "
                   "sequence 0's two padding rows hold one large key aligned with its queries", value=err)
        sc = make_scenario(suite.rng("padding"), pad_lengths, heads, dim, 6, garbage)
        noisy = run_decode(suite, factory, sc)
        for i, n in enumerate(pad_lengths):  # same valid data, padding zeroed
            sc.k[i, :, n:], sc.v[i, :, n:] = 0.0, 0.0
        clean = run_decode(suite, factory, sc)
        own_batching(c, len(pad_lengths))
        c.value = max(worst_step(noisy, clean)[0], worst_step(clean, oracle(ref, sc))[0], err)
        if not c.value <= tol:
            c.fail(f"padding rows change the output (error {c.value:.3g}, lengths {pad_lengths})")

    with suite.check("batch_independence", threshold=tol, requires=("variable_lengths",), reach=True) as c:
        sc = make_scenario(suite.rng("alone"), lengths, heads, dim, 5, garbage)
        batched = run_decode(suite, factory, sc)
        own_batching(c, len(lengths))
        worst = 0.0
        for b, n in enumerate(lengths):
            alone = Scenario(sc.k[b:b + 1, :, :n], sc.v[b:b + 1, :, :n], sc.lengths[b:b + 1], sc.prompt_q[b:b + 1, :, :n],
                             sc.qs[:, b:b + 1], sc.ks[:, b:b + 1], sc.vs[:, b:b + 1])
            worst = max(worst, worst_step(run_decode(suite, factory, alone), batched[:, b:b + 1])[0])
        c.value = worst
        if not worst <= tol:
            c.fail(f"a sequence decoded alone differs from the same sequence in a batch (error {worst:.3g})")

    smallest_inputs(suite, factory, ref, tol, garbage)
    decode_to_capacity(suite, factory, ref, tol, garbage)
    multi_token(suite, factory, ref, tol)
    record_reach(suite)
    memory(suite, factory)
    memory_figure(suite)
    speed(suite, factory, ref)


# what run_stages can run alone (tests run the checks a case is about, exactly as in a whole run)
STAGES = {"memory_figure": lambda suite: memory_figure(suite),
          "capacity": lambda suite: decode_to_capacity(suite, session_factory(suite), suite.reference(),
                                                       float(suite.threshold("tol", 1e-8)),
                                                       float(suite.threshold("garbage", 1e3)))}


def run_stages(suite, stages) -> None:
    for stage in stages:
        STAGES[stage](suite)


def decode_to_capacity(suite, factory, ref, tol, garbage) -> None:
    """Decoding until the cache is full: where the adapter states how many decode steps
    its session holds after the padded prompt (``DECODE_CAPACITY``: the cache it builds
    holds the prompt's max_len plus that many tokens), a batch of two decodes exactly that
    many steps, so the longest prompts' sequences write the cache's last slot at the last
    step and the shorter one stops short of it; every step must equal causal attention.
    The other checks decode a few dozen steps, far below any capacity."""
    adapter = suite.adapter()
    capacity = getattr(adapter, "DECODE_CAPACITY", None) if adapter is not None else None
    if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
        suite.info("decode_to_capacity", message="not reached: no adapter states the decode steps its cache holds "
                   "(DECODE_CAPACITY); the answer's cache grows as it needs")
        return
    with suite.check("decode_to_capacity", threshold=tol, requires=("incremental_decode", "cached_attention"),
                     reach=True) as c:
        # the longest prompt first and last: the last slot of the cache's first and last rows
        lengths = [3, 1, 3]
        sc = make_scenario(np.random.default_rng(FIXED_SEED), lengths, 1, 2, capacity, garbage)
        try:
            got = run_decode(suite, factory, sc)
        except CheckFailed:
            raise
        except Exception as exc:  # the answer's own code, at its capacity
            raise CheckFailed(f"decoding up to the cache's capacity ({capacity} steps after prompts of lengths "
                              f"{lengths}) raised {type(exc).__name__}: {exc}") from exc
        c.value, where = worst_step(got, oracle(ref, sc))
        c.message = f"{capacity} decode steps after prompts of lengths {lengths}: the cache's last slot written; worst at {where}"
        if not c.value <= tol:
            c.fail(f"decoding up to the cache's capacity ({capacity} steps after the prompt) differs from causal "
                   f"attention: error {c.value:.3g} at {where}")


def decode_output_shape(suite, factory, garbage) -> None:
    """The decode step's output shape, compared exactly (the error checks reshape an output of
    the right size): (batch, heads, head_dim), also where a kept axis has length 1."""
    with suite.check("decode_output_shape", requires=("incremental_decode",)) as c:
        for lengths, heads, dim in (([2, 1], 3, 4), ([3], 1, 2)):
            sc = make_scenario(np.random.default_rng(FIXED_SEED), lengths, heads, dim, 2, garbage)
            session = factory()
            suite.call(session.prefill, sc.k, sc.v, sc.lengths)
            for step, (q, kn, vn) in enumerate(zip(sc.qs, sc.ks, sc.vs)):
                out = suite.call(session.decode, q, kn, vn)
                if isinstance(out, (tuple, list)) and len(out) and np.ndim(out[0]) == 3:
                    out = out[0]  # (out, extras): the output is the first
                if np.shape(out) != q.shape:
                    c.fail(f"decode step {step} returned shape {np.shape(out)} for {len(lengths)} sequence(s), "
                           f"{heads} head(s), head dim {dim}; the prompt fixes (batch, heads, head_dim) = {q.shape}")
        c.message = "(batch, heads, head_dim) exactly, at (2, 3, 4) and (1, 1, 2)"


def own_batching(c, batch: int) -> None:
    """Variable-length batching is the answer's only if its code batches: an
    adapter whose decode calls the answer once per sequence did it itself
    (judged once the check's reach is measured)."""
    def judge(c):
        loops = batch_loops(c.details.get("reach"), "decode", batch)
        if loops:
            c.not_exercised("variable_lengths", describe_loops(loops, "decode", batch))
    c.after_reach.append(judge)


FIXED_SEED = 20261123  # the fixed cases: the same inputs on every run, whatever the secret seed
# attention scores of the large-score case sit this far from 0 (either sign)
LARGE_SCORE = 1000.0


def large_scores(suite, factory, ref, tol, garbage) -> None:
    """Scores near +1000 in one sequence and -1000 in the other, a few units
    apart: exp() of them overflows to inf (or underflows to 0) in float64
    unless each row's maximum is subtracted first, while the softmax itself is
    well conditioned (float32 rounding costs about 1e-4). A fixed case, the
    same on every run, without padding (that is padding_isolated's)."""
    with suite.check("large_scores", threshold=tol, requires=("cached_attention",), reach=True) as c:
        sc = make_scenario(np.random.default_rng(FIXED_SEED + 1), [3, 3], 2, 4, 3, garbage)
        dim = sc.k.shape[-1]
        rng = np.random.default_rng(FIXED_SEED + 2)
        s = math.sqrt(LARGE_SCORE * math.sqrt(dim))  # q . k / sqrt(dim) = +-LARGE_SCORE along u
        u = np.ones(dim) / math.sqrt(dim)
        for b, n in enumerate(sc.lengths):
            sign = 1.0 if b == 0 else -1.0
            sc.k[b, :, :n] = s * u + 0.05 * rng.normal(size=sc.k[b, :, :n].shape)
            sc.ks[:, b] = s * u + 0.05 * rng.normal(size=sc.ks[:, b].shape)
            sc.qs[:, b] = sign * s * u + 0.05 * rng.normal(size=sc.qs[:, b].shape)
            sc.prompt_q[b, :, :n] = sign * s * u
        got = run_decode(suite, factory, sc)
        c.value, where = worst_step(got, oracle(ref, sc))
        c.message = (f"scores near +{LARGE_SCORE:g} (sequence 0) and -{LARGE_SCORE:g} (sequence 1); worst at {where}"
                     if where else f"scores near +-{LARGE_SCORE:g}: exact")
        if not c.value <= tol:
            nonfinite = [b for b in range(got.shape[1]) if not np.all(np.isfinite(got[:, b]))]
            c.fail((f"non-finite output (sequence{'s' * (len(nonfinite) > 1)} {nonfinite}) with attention scores "
                    f"near +-{LARGE_SCORE:g}: exp() of the scores overflows or underflows; a softmax must "
                    "subtract each row's maximum first" if nonfinite else
                    f"decode output differs from causal attention recomputed from scratch with scores near "
                    f"+-{LARGE_SCORE:g}: error {c.value:.3g} at {where}"), value=c.value)


# row_spread_scores: each prompt key's score in units of LARGE_SCORE; every decode step's
# new key scores -LARGE_SCORE, so a row's lowest scores sit at its first and last positions
# and its maximum (with a runner-up 2 below) in the middle
ROW_SPREAD = ([-1.0, 0.3, 1.0, 0.998, -0.2], [-1.0, 0.998, -0.5, 1.0, 0.1])


def row_spread_scores(suite, factory, ref, tol, garbage) -> None:
    """One row's scores spanning -LARGE_SCORE to +LARGE_SCORE, the maximum in
    the middle of the row: a softmax that subtracts some other score of the
    row (its first, its last, its minimum, its mean) before exp() overflows
    there, while large_scores (a row within a few units) cannot tell. A fixed
    case, the same on every run, without padding."""
    with suite.check("row_spread_scores", threshold=tol, requires=("cached_attention",), reach=True) as c:
        lengths = [len(r) for r in ROW_SPREAD]
        sc = make_scenario(np.random.default_rng(FIXED_SEED + 5), lengths, 2, 4, 3, garbage)
        dim = sc.k.shape[-1]
        rng = np.random.default_rng(FIXED_SEED + 6)
        s = math.sqrt(LARGE_SCORE * math.sqrt(dim))  # (s u) . (s u) / sqrt(dim) = LARGE_SCORE
        u = np.ones(dim) / math.sqrt(dim)
        for b, coeffs in enumerate(ROW_SPREAD):
            for j, coeff in enumerate(coeffs):
                sc.k[b, :, j] = coeff * s * u + 0.01 * rng.normal(size=sc.k[b, :, j].shape)
            sc.ks[:, b] = -s * u + 0.01 * rng.normal(size=sc.ks[:, b].shape)
            sc.qs[:, b] = s * u
            sc.prompt_q[b] = s * u
        got = run_decode(suite, factory, sc)
        c.value, where = worst_step(got, oracle(ref, sc))
        c.message = (f"one row's scores from -{LARGE_SCORE:g} to +{LARGE_SCORE:g}, the maximum mid-row; "
                     + (f"worst at {where}" if where else "exact"))
        if not c.value <= tol:
            nonfinite = not np.all(np.isfinite(got))
            c.fail(f"{'non-finite output' if nonfinite else f'error {c.value:.3g} at {where}'} when one row's "
                   f"scores span -{LARGE_SCORE:g} to +{LARGE_SCORE:g} with the maximum in the middle of the row "
                   "(first and last keys lowest): the softmax subtracts some score of the row other than its "
                   "maximum, and exp() of the gap overflows", value=c.value)


# The smallest inputs the contract allows, smallest first: (lengths, heads, dim, steps)
SMALLEST_CASES = [([1], 1, 1, 1), ([1], 1, 1, 3), ([1, 1], 1, 2, 2), ([2, 2], 2, 1, 2)]


def smallest_inputs(suite, factory, ref, tol, garbage) -> None:
    """One sequence of one token, one head of dim 1, one decode step, and
    small batches of them (equal lengths: padding is padding_isolated's),
    against attention from scratch. A sequence with no
    prompt at all (length 0) is left open by the prompts: a reading."""
    with suite.check("smallest_inputs", threshold=tol, requires=("incremental_decode", "cached_attention"),
                     reach=True) as c:
        c.value = 0.0
        for lengths, heads, dim, steps in SMALLEST_CASES:
            sc = make_scenario(np.random.default_rng(FIXED_SEED + 3), lengths, heads, dim, steps, garbage)
            case = f"lengths {lengths}, {heads} head{'s' * (heads > 1)}, dim {dim}, {steps} step{'s' * (steps > 1)}"
            try:
                err, where = worst_step(run_decode(suite, factory, sc), oracle(ref, sc))
            except Exception as exc:  # still the answer's error: name the case it met
                if exc.args and isinstance(exc.args[0], str):
                    exc.args = (f"{case}: {exc.args[0]}", *exc.args[1:])
                raise
            c.value = max(c.value, err)
            if not err <= tol:
                c.fail(f"decode output differs from causal attention recomputed from scratch on the smallest "
                       f"case {case}: error {err:.3g} at {where}", value=err)
        c.message = f"{len(SMALLEST_CASES)} cases, smallest lengths [1], 1 head, dim 1, 1 step"
    sc = make_scenario(np.random.default_rng(FIXED_SEED + 4), [0, 2], 1, 2, 2, garbage)
    try:
        err = worst_step(run_decode(suite, factory, sc), oracle(ref, sc))[0]
    except Exception as exc:  # a figure: the prompts do not say whether a sequence may start empty
        reading = f"raises {type(exc).__name__}"
    else:
        reading = "matches attention from scratch" if err <= tol else f"differs from attention from scratch ({err:.3g})"
    suite.reading("empty_prompt", reading, message=f"a sequence with no prompt tokens (lengths [0, 2]; left open "
                  f"by the prompts): {reading}", accepted=reading.startswith("matches"))


# Hand-built cases for several new tokens at once, smallest first: a path that
# lets a row see later rows fails the first of them, on every run.
MULTI_TOKEN_CASES = [([1], 1, 2, 2), ([2], 1, 2, 3), ([3, 1], 2, 4, 3), ([5, 12, 3], 4, 16, 4)]


def extend_oracle(ref, sc: Scenario, qn, kn, vn) -> np.ndarray:
    """(B, H, T, D): rows of the new tokens in causal attention over prompt + new."""
    out = np.empty(qn.shape)
    for b, n in enumerate(sc.lengths):
        seq = [np.concatenate([p[b, :, :n], new[b]], axis=1) for p, new in ((sc.prompt_q, qn), (sc.k, kn), (sc.v, vn))]
        out[b] = ref.causal_attention(*seq)[:, n:]
    return out


def multi_token(suite, factory, ref, tol) -> None:
    """Where the answer attends over several new tokens at once (prefill,
    chunked prefill), bound as ``extend(q, k, v)`` with shapes (B, H, T, D):
    each new row must equal causal attention recomputed from scratch."""
    probe = factory()
    if not callable(getattr(probe, "extend", None)):
        suite.info("multi_token_causal", message="no multi-token path bound: the adapter binds extend(q, k, v) "
                                                 "only where the answer attends over several new tokens at once")
        return
    with suite.check("multi_token_causal", threshold=tol, reach=True, requires=("cached_attention",)) as c:
        rng = suite.rng("multi_token")
        cases = [*MULTI_TOKEN_CASES, (list(rng.integers(1, 9, size=3)), 2, 8, int(rng.integers(2, 6)))]
        c.value, tried = 0.0, []
        for lengths, heads, dim, new in cases:
            lengths = [int(n) for n in lengths]
            sc = make_scenario(rng, lengths, heads, dim, 1, 10.0)
            qn, kn, vn = (rng.normal(size=(len(lengths), heads, new, dim)) for _ in range(3))
            session = factory()
            suite.call(session.prefill, sc.k, sc.v, sc.lengths)
            got = normalise(suite.call(session.extend, qn, kn, vn), qn.shape)
            want = extend_oracle(ref, sc, qn, kn, vn)
            case = f"lengths {lengths}, {heads} head{'s' * (heads > 1)}, dim {dim}, {new} new tokens"
            errs = [(rel_err(got[b, :, j], want[b, :, j]), b, j) for b in range(len(lengths)) for j in range(new)]
            wrong = [e for e in errs if not e[0] <= tol]
            err, b, j = wrong[0] if wrong else max(errs)
            tried.append(case)
            c.value = max(c.value, err) if err <= tol else err
            if wrong:
                c.details["failing_case"] = {"lengths": lengths, "heads": heads, "dim": dim, "new_tokens": new,
                                             "sequence": b, "row": j}
                c.fail(f"attention over {new} new tokens at once differs from causal attention recomputed from "
                       f"scratch; smallest failing case: {case}: new row {j} of sequence {b}, error {err:.3g}"
                       + (" (its last row is right: earlier rows see later ones)"
                          if j < new - 1 and rel_err(got[b, :, -1], want[b, :, -1]) <= tol else ""))
        c.message = f"{len(tried)} cases, smallest {tried[0]}, largest {tried[-2]}, random {tried[-1]}"


def growth_exponent(growth: dict[int, int], floor: int) -> float | None:
    """Slope of log(retained bytes) against log(tokens) over the marks that
    grew past ``floor`` (page and allocator noise), over at least a 4x span of
    tokens: 1 for linear growth (a capacity that doubles or grows in chunks
    stays under 1.52 wherever its steps fall), 1.7-1.9 when every step keeps
    a copy of the cache. None when too little grew to say (bounded memory)."""
    points = [(math.log(t), math.log(g)) for t, g in sorted(growth.items()) if g >= floor]
    if len(points) < 2 or points[-1][0] - points[0][0] < math.log(4):
        return None
    xs, ys = zip(*points)
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x in xs)


def memory(suite, factory) -> None:
    """The prompt asks for memory that grows linearly with tokens: the verdict
    rests on the shape of growth (its exponent), never on a constant factor
    the prompt does not state; bytes per token are a figure beside it."""
    steps = int(suite.threshold("memory_steps", 256))
    limit = float(suite.threshold("memory_exponent", 1.6))
    # wide enough that K and V dwarf the page and allocator noise of resident memory
    b, h, d = 2, 8, 64
    per_token = 2 * b * h * d * 8  # K and V of one step, float64
    marks = {steps * i // 8 for i in range(1, 9)}
    growth: dict[int, int] = {}
    with suite.check("memory_linear", threshold=limit, requires=("memory_linear",)) as c:
        # short prompts: a cache copied at every step then grows clearly as tokens^2
        sc = make_scenario(suite.rng("memory"), [4, 2], h, d, steps, 1.0)
        # resident memory of the answer's process, read from the OS by the checker
        session = factory()
        session.prefill(sc.k, sc.v, sc.lengths)
        base = suite.answer_memory()
        for s in range(steps):
            session.decode(sc.qs[s], sc.ks[s], sc.vs[s])
            if s + 1 in marks:
                growth[s + 1] = suite.answer_memory() - base
        exponent = growth_exponent(growth, floor=64 * 1024)
        c.value = None if exponent is None else round(exponent, 3)
        c.details.update({"retained_bytes_after_tokens": growth, "bytes_per_token_ideal": per_token})
        shown = ", ".join(f"{t} tokens: {g / 1024:.0f} KiB" for t, g in sorted(growth.items()) if t in (steps // 4, steps // 2, steps))
        if exponent is None:
            c.message = f"memory barely grows ({shown}): bounded, so linear or better"
        else:
            c.message = f"grows as tokens^{exponent:.2f} ({shown})"
            if exponent > limit:
                c.fail(f"memory grows faster than linearly in tokens: tokens^{exponent:.2f} ({shown})")
    if growth:
        factor = max(growth.values()) / (max(growth) * per_token)
        suite.info("memory_per_token", round(factor, 3),
                   f"{factor:.2f}x the bytes of float64 K+V per token after {max(growth)} tokens "
                   "(a figure: the prompt states no factor)",
                   {"bytes_per_token_ideal": per_token, "tokens": max(growth)})


# (layers, batch, heads, tokens, head_dim, bytes per element): each size a distinct prime
# (a factor dropped, doubled or swapped shows), one of each size, and a real model's cache
# (Llama-2-7B: 32 layers of 32 heads of 128, float16, 4,096 tokens: 2 GiB)
FIGURE_CASES = ((1, 1, 1, 1, 1, 1), (3, 2, 5, 7, 11, 4), (2, 3, 13, 17, 5, 8), (32, 1, 32, 4096, 128, 2))


def memory_figure(suite) -> None:
    """The memory footprint an answer reports for its cache ("an analysis of memory
    growth"), recomputed: where the adapter binds the function its figures come from
    (``memory_figure(layers, batch, heads, tokens, head_dim, itemsize) -> bytes``), every
    case must give the bytes of its keys and values, 2 x layers x batch x heads x tokens x
    head_dim x itemsize. Unbound, its figures are its own, labelled so."""
    adapter = suite.adapter()
    figure = getattr(adapter, "memory_figure", None) if adapter is not None else None
    if not callable(figure):
        suite.info("memory_figure_recomputed", message="not recomputed: no adapter binds the answer's own memory "
                   "figure (memory_figure(layers, batch, heads, tokens, head_dim, itemsize)); its reported "
                   "footprints are its own, not verified")
        return
    with suite.check("memory_figure_recomputed") as c:
        got = {case: suite.call(figure, *case) for case in FIGURE_CASES}
        wrong = {case: value for case, value in got.items() if value != 2 * int(np.prod(case))}
        real = FIGURE_CASES[-1]
        c.value = f"{got[real] / 2**30:.3g} GiB for Llama-2-7B's cache at 4,096 tokens (float16)"
        c.details.update({"cases": [[*case, got[case], 2 * int(np.prod(case))] for case in FIGURE_CASES],
                          "evidence_from": "the answer's own figure, and K + V bytes computed by the checker"})
        if wrong:
            case, value = next(iter(wrong.items()))
            c.fail(f"the answer reports {value} bytes for a cache of {case[0]} layers, batch {case[1]}, {case[2]} "
                   f"heads, {case[3]} tokens, head dim {case[4]}, {case[5]} bytes each; its keys and values take "
                   f"{2 * int(np.prod(case))}" + (f" ({len(wrong)} of {len(FIGURE_CASES)} cases wrong)"
                                                   if len(wrong) > 1 else ""))


def speed(suite, factory, ref) -> None:
    lengths = list(suite.threshold("speed_lengths", [300, 180, 420, 64]))
    h, d = int(suite.threshold("speed_heads", 8)), int(suite.threshold("speed_head_dim", 64))
    steps = int(suite.threshold("speed_steps", 32))
    base = make_scenario(suite.rng("speed"), lengths, h, d, steps, 1.0)

    def make_inputs(trial):
        shift = 0.01 * trial  # fresh values per trial, no regeneration cost
        return Scenario(base.k + shift, base.v, base.lengths, base.prompt_q, base.qs - shift, base.ks, base.vs)

    # a figure, never a verdict: one warm-up and 4 trials keep a pure-Python
    # answer (seconds per trial) well inside the run's time limit
    suite.time("speed_decode", lambda sc: run_decode(suite, factory, sc, guard=False),
               lambda sc: run_decode(suite, ref.KVCache, sc, guard=False), make_inputs, warmup=1, min_trials=4)
