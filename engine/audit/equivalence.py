"""When does a surviving mutant return what the original returned?

The checker's process records one trace entry per value the answer's process
returns. An entry is the value's exact digest; a value holding floating-point
numbers also gets a tolerant fingerprint, so a mutant that only reorders
arithmetic (a max taken over the whole array instead of each row before a
shift that cancels out, ``x + m`` for ``x - m`` in a log-softmax) counts as
returning the same values:

- its *shape*: a digest of everything but the floats' values (types, shapes,
  dtypes, integers, strings, where the NaNs and infinities are), with Python
  and NumPy integers alike, as the wire hands either back;
- per float leaf (an array or a scalar): its dtype's machine epsilon, its
  largest finite magnitude, its size, and its projections on a few fixed
  random sign vectors.

Two leaves match when every projection agrees within ``ULPS`` epsilons of the
larger magnitude times sqrt(size): rounding noise spread over the entries
stays inside that, while any single entry off by more than the bound moves
every projection by that much.
"""
from __future__ import annotations

import hashlib
import math

import numpy as np

ULPS = 64
PROJECTIONS = 4
_SIGNS: dict[int, np.ndarray] = {}


def _signs(n: int) -> np.ndarray:
    """Fixed +-1 vectors (PROJECTIONS x n), the same in every process."""
    if n not in _SIGNS:
        if len(_SIGNS) > 64:
            _SIGNS.clear()
        rng = np.random.default_rng(n)
        _SIGNS[n] = rng.integers(0, 2, size=(PROJECTIONS, n), dtype=np.int8).astype(np.float64) * 2 - 1
    return _SIGNS[n]


def _float_leaf(a: np.ndarray, h, leaves: list) -> None:
    flat = np.asarray(a, dtype=np.float64).ravel()
    finite = np.isfinite(flat)
    h.update(f"f{a.dtype}{a.shape}".encode())
    if not finite.all():  # where the NaNs and infinities sit is part of the shape
        h.update(np.packbits(np.isnan(flat)).tobytes() + np.packbits(np.isposinf(flat)).tobytes()
                 + np.packbits(np.isneginf(flat)).tobytes())
    clean = np.where(finite, flat, 0.0)
    scale = float(np.abs(clean).max()) if clean.size else 0.0
    proj = (_signs(clean.size) @ clean).tolist() if clean.size else [0.0] * PROJECTIONS
    leaves.append([float(np.finfo(a.dtype).eps), scale, int(clean.size), *proj])


def _walk(value, h, leaves: list, is_proxy) -> None:
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "f":
            _float_leaf(value, h, leaves)
        elif value.dtype.kind in "iu":  # int32 and int64 token ids are the same tokens
            h.update(f"i{value.shape}".encode() + np.ascontiguousarray(value, dtype=np.int64).tobytes())
        else:
            h.update(f"nd{value.dtype}{value.shape}".encode() + np.ascontiguousarray(value).tobytes())
    elif isinstance(value, (bool, np.bool_)):
        h.update(f"b:{bool(value)}".encode())
    elif isinstance(value, (int, np.integer)):
        h.update(f"i:{int(value)}".encode())
    elif isinstance(value, (float, np.floating)):
        _float_leaf(np.asarray(value, dtype=np.float32 if isinstance(value, np.float32) else np.float64), h, leaves)
    elif isinstance(value, (list, tuple)):
        h.update(f"seq{len(value)}[".encode())
        for v in value:
            _walk(v, h, leaves, is_proxy)
        h.update(b"]")
    elif isinstance(value, dict):
        h.update(f"dict{len(value)}{{".encode())
        for k in sorted(value, key=repr):
            h.update(repr(k).encode())
            _walk(value[k], h, leaves, is_proxy)
        h.update(b"}")
    elif is_proxy(value):
        h.update(f"proxy:{object.__getattribute__(value, '_kind')}".encode())
    else:
        h.update(f"{type(value).__name__}:{value!r}".encode())


def entry(exact: str, value, is_proxy=lambda v: False):
    """A trace entry: the exact digest alone (text, None, a proxy), else
    [exact, shape digest, float leaves]."""
    if value is None or isinstance(value, (str, bytes)) or is_proxy(value):
        return exact
    leaves: list = []
    h = hashlib.sha256()
    _walk(value, h, leaves, is_proxy)
    return [exact, h.hexdigest()[:16], leaves]


def _leaves_close(a: list, b: list) -> bool:
    eps, n = max(a[0], b[0]), a[2]
    if n != b[2]:
        return False
    scale = max(a[1], b[1])
    bound = ULPS * eps * scale
    if abs(a[1] - b[1]) > bound:
        return False
    bound *= math.sqrt(max(n, 1))
    return all(abs(x - y) <= bound for x, y in zip(a[3:], b[3:]))


def same_entry(a, b) -> bool:
    """Exactly the same value, or the same shape with floats within rounding."""
    exact_a = a[0] if isinstance(a, list) else a
    exact_b = b[0] if isinstance(b, list) else b
    if exact_a == exact_b:
        return True
    if not (isinstance(a, list) and isinstance(b, list)) or a[1] != b[1] or len(a[2]) != len(b[2]):
        return False
    return all(_leaves_close(x, y) for x, y in zip(a[2], b[2]))


def unstable_positions(first: list | None, second: list | None) -> list[int] | None:
    """Where two runs of the same original returned different values (random
    initialisation, timing-dependent code); None when they do not line up at all."""
    if first is None or second is None or len(first) != len(second):
        return None
    return [i for i, (a, b) in enumerate(zip(first, second)) if not same_entry(a, b)]


def same_values(trace: list | None, baseline: list | None, unstable: list[int] | None) -> bool:
    """A survivor returned the original's values everywhere the original itself is stable."""
    if trace is None or baseline is None or unstable is None or len(trace) != len(baseline):
        return False
    skip = set(unstable)
    return all(same_entry(a, b) for i, (a, b) in enumerate(zip(trace, baseline)) if i not in skip)


ALLOWED = "allowed by the answer's prompt: "


def readings(checks: list[dict]) -> dict[str, tuple]:
    """The points the prompt leaves open, as the suite read them: name -> (value, accepted)."""
    out = {}
    for c in checks or []:
        reading = (c.get("details") or {}).get("open_reading")
        if reading is not None:
            out[c["name"]] = (c.get("value"), bool(reading.get("accepted")))
    return out


def not_asked(checks: list[dict]) -> dict[str, str]:
    """Checks the answer's prompt does not ask for (figures here): name -> the verdict they would be."""
    return {c["name"]: c["details"]["would_be"]["verdict"] for c in checks or []
            if isinstance((c.get("details") or {}).get("would_be"), dict)}


def allowed_by_prompt(checks: list[dict], baseline_checks: list[dict]) -> str | None:
    """Why a mutant whose values differ is still equivalent under the contract,
    or None: what moved is only what the answer's prompt leaves to the answer,
    by the suite's own record of it. Either a point the prompt leaves open,
    settled the other accepted way (``Suite.reading``), or a check another
    prompt version asks for and this one does not (the published flash
    attention prompt advises float64 "if possible": a float32 accumulator
    moves ``float64_accuracy``, a figure there)."""
    why = []
    mine, base = readings(checks), readings(baseline_checks)
    for name, (value, accepted) in sorted(mine.items()):
        was = base.get(name, (None,))[0]
        if was != value:
            if not accepted:
                return None
            why.append(f"{name}: {was} -> {value}")
    mine_na, base_na = not_asked(checks), not_asked(baseline_checks)
    for name, verdict in sorted(mine_na.items()):
        if base_na.get(name) != verdict:
            why.append(f"{name} (not asked by this prompt) would be {verdict}, was {base_na.get(name)}")
    return ALLOWED + "; ".join(why) if why else None
