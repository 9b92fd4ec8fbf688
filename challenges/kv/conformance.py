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

from engine.verify.suite import CheckFailed

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
        step_rows = lambda a: a[:, b].transpose(1, 0, 2)  # (S, H, D) -> (H, S, D)
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

    with suite.check("decode_matches_full_attention", threshold=tol) as c:
        sc = make_scenario(suite.rng("decode"), lengths, heads, dim, steps, garbage)
        c.value, where = worst_step(run_decode(suite, factory, sc), oracle(ref, sc))
        c.message = f"worst at {where} (lengths {lengths}, {heads} heads, dim {dim}, {steps} steps)"
        if not c.value <= tol:
            c.fail(f"decode output differs from causal attention recomputed from scratch: error {c.value:.3g} at {where}")

    with suite.check("padding_isolated", threshold=tol) as c:
        pad_lengths = [2, 9, 1]
        sc = make_scenario(suite.rng("padding"), pad_lengths, heads, dim, 6, garbage)
        noisy = run_decode(suite, factory, sc)
        for i, n in enumerate(pad_lengths):  # same valid data, padding zeroed
            sc.k[i, :, n:], sc.v[i, :, n:] = 0.0, 0.0
        clean = run_decode(suite, factory, sc)
        c.value = max(worst_step(noisy, clean)[0], worst_step(clean, oracle(ref, sc))[0])
        if not c.value <= tol:
            c.fail(f"padding rows change the output (error {c.value:.3g}, lengths {pad_lengths})")

    with suite.check("batch_independence", threshold=tol) as c:
        sc = make_scenario(suite.rng("alone"), lengths, heads, dim, 5, garbage)
        batched = run_decode(suite, factory, sc)
        worst = 0.0
        for b, n in enumerate(lengths):
            alone = Scenario(sc.k[b:b + 1, :, :n], sc.v[b:b + 1, :, :n], sc.lengths[b:b + 1], sc.prompt_q[b:b + 1, :, :n],
                             sc.qs[:, b:b + 1], sc.ks[:, b:b + 1], sc.vs[:, b:b + 1])
            worst = max(worst, worst_step(run_decode(suite, factory, alone), batched[:, b:b + 1])[0])
        c.value = worst
        if not worst <= tol:
            c.fail(f"a sequence decoded alone differs from the same sequence in a batch (error {worst:.3g})")

    memory(suite, factory)
    speed(suite, factory, ref)


def memory(suite, factory) -> None:
    steps = int(suite.threshold("memory_steps", 256))
    factor = float(suite.threshold("memory_factor", 4.0))
    with suite.check("memory_linear", threshold=factor) as c:
        # wide enough that K and V dwarf the page and allocator noise of resident memory
        b, h, d = 2, 8, 64
        sc = make_scenario(suite.rng("memory"), [16, 9], h, d, steps, 1.0)
        per_token = 2 * b * h * d * 8  # K and V of one step, float64
        marks = {steps // 4, steps // 2, steps}
        # resident memory of the answer's process, read from the OS by the checker
        session = factory()
        session.prefill(sc.k, sc.v, sc.lengths)
        base = suite.answer_memory()
        growth = {}
        for s in range(steps):
            session.decode(sc.qs[s], sc.ks[s], sc.vs[s])
            if s + 1 in marks:
                growth[s + 1] = suite.answer_memory() - base
        ratios = {t: g / (t * per_token) for t, g in growth.items()}
        c.value = round(max(ratios.values()), 3)
        c.details.update({"retained_bytes_after_tokens": growth, "bytes_per_token_ideal": per_token})
        c.message = ", ".join(f"{t} tokens: {g / 1024:.0f} KiB" for t, g in sorted(growth.items()))
        if not c.value <= factor:
            c.fail(f"memory grows {c.value:.1f}x faster than K+V per token ({c.message})")


def speed(suite, factory, ref) -> None:
    lengths = list(suite.threshold("speed_lengths", [300, 180, 420, 64]))
    h, d = int(suite.threshold("speed_heads", 8)), int(suite.threshold("speed_head_dim", 64))
    steps = int(suite.threshold("speed_steps", 32))
    base = make_scenario(suite.rng("speed"), lengths, h, d, steps, 1.0)

    def make_inputs(trial):
        shift = 0.01 * trial  # fresh values per trial, no regeneration cost
        return Scenario(base.k + shift, base.v, base.lengths, base.prompt_q, base.qs - shift, base.ks, base.vs)

    suite.time("speed_decode", lambda sc: run_decode(suite, factory, sc, guard=False),
               lambda sc: run_decode(suite, ref.KVCache, sc, guard=False), make_inputs)
