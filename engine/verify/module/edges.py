"""Inputs that construct the edges a comparison cares about, on every run.

The deck's inputs and benchtui's secret ones are drawn the way the deck's
``get_inputs`` draws them, so an edge turns up only by chance: ties in a
top-k's rows (about 2 seeds in 300 at one shape), negative values for a
ReLU whose inputs are ``torch.rand`` (never). Two checks build them instead,
each benchtui's own requirement beyond the deck's (named so in its message,
and never part of the ``deck_rule`` figure):

- ``ties:shapeN``, for a problem whose check.py compares an index output
  (``[module.indices]``): the secret inputs with every row of the gathered
  input made of ties (rows all equal, values rounded to a few levels so ties
  fall at the cut-off, the maximum repeated); an index named twice in a row
  fails, any tie-break passes;
- ``wider_inputs:shapeN``: the secret inputs' floating-point tensors with
  signs alternated, every fourth value zero and every fourth sixteen times
  larger (a power of two, so exact), where the reference defines the
  operator there (its output finite); where it does not, the large values
  are dropped, and where it still does not, the check says so and judges
  nothing.

Both are deterministic functions of the secret inputs: the same answer gets
the same edges, and a run's seed replays them.
"""
from __future__ import annotations

from benchtui.records.verdicts import PASS, SKIPPED

LARGE = 16.0  # a power of two: scaling is exact, so the reference's values are not rounded differently


def tied(x, dim: int):
    """A copy of ``x`` whose rows along ``dim`` are ties: rows 0, 3, ... all one value;
    rows 1, 4, ... rounded to half-units (ties across the cut-off); rows 2, 5, ...
    with their maximum in the first quarter of the row."""
    import torch

    t = x.detach().clone().movedim(dim, -1).contiguous()
    n = t.shape[-1]
    rows = t.reshape(-1, n)
    if n == 0 or rows.shape[0] == 0:
        return x.clone()
    rows[0::3] = rows[0::3, :1].expand(-1, n)
    if rows.dtype.is_floating_point:
        rows[1::3] = torch.floor(rows[1::3].float() * 2).div(2).to(rows.dtype)
    else:
        rows[1::3] = rows[1::3] // 2 * 2
    top = rows[2::3].max(dim=-1, keepdim=True).values
    rows[2::3, : max(2, n // 4)] = top.expand(-1, max(2, n // 4))
    return rows.reshape(t.shape).movedim(-1, dim)


def widened(inputs: list, large: bool) -> list:
    """The floating-point tensors of ``inputs`` with every other value's sign flipped,
    every fourth value zero and (``large``) every fourth other value times ``LARGE``;
    the rest (integers, fp8, non-tensors) as they are."""
    import torch

    out = []
    for x in inputs:
        if not (isinstance(x, torch.Tensor) and x.dtype in (torch.float16, torch.bfloat16, torch.float32,
                                                              torch.float64) and x.numel()):
            out.append(x)
            continue
        flat = x.detach().clone().reshape(-1)
        pos = torch.arange(flat.numel(), device=flat.device)
        flat = torch.where(pos % 2 == 1, -flat.abs(), flat.abs())
        flat = torch.where(pos % 4 == 2, torch.zeros_like(flat), flat)
        if large:
            flat = torch.where(pos % 4 == 3, flat * LARGE, flat)
        out.append(flat.reshape(x.shape))
    return out


def _finite(expected) -> bool:
    import torch

    outs = list(expected) if isinstance(expected, (tuple, list)) else [expected]
    return all(bool(torch.isfinite(o).all()) for o in outs if isinstance(o, torch.Tensor) and o.dtype.is_floating_point)


def calls(spec) -> int:
    """The most calls both edge checks make at one shape: the ties (where the deck names an
    index output) and the wider inputs."""
    return (1 if spec.indices else 0) + 1


def check(run, ref, index: int, label: str) -> bool:
    """Both edge checks at one shape; True unless one failed. ``run`` is the harness's ModuleRun."""
    right = ties(run, ref, index, label)
    return wider(run, ref, index, label) and right


def ties(run, ref, index: int, label: str) -> bool:
    suite, spec = run.suite, run.spec
    rule = spec.indices
    if not rule:
        return True
    seed = run._secret("ties", index)
    with suite.check(f"ties:shape{index}", requires=spec.requires("correct")) as c:
        inputs = run.inputs(ref, seed)
        if rule["input"] >= len(inputs):
            c.verdict, c.message = SKIPPED, f"{label}: the gathered input {rule['input']} is not among the inputs"
            return True
        inputs = list(inputs)
        inputs[rule["input"]] = tied(inputs[rule["input"]], rule["dim"])
        c.details.update({"seed": seed, "rows": "all equal; rounded to half-units; the maximum repeated"})
        if not run.checked_call(c, inputs, {"name": "ties"}, False, label, seed):
            return False
        c.value = 1
        c.message = (f"{label}: right on rows made of ties (all equal, ties at the cut-off, the maximum repeated), "
                     "no index named twice; benchtui's own requirement, beyond the deck's rule")
    return c.verdict == PASS


def wider(run, ref, index: int, label: str) -> bool:
    suite, spec = run.suite, run.spec
    seed = run._secret("wider", index)
    name = f"wider_inputs:shape{index}"
    base = run.inputs(ref, seed)
    tried = None
    for large in (True, False):
        inputs = widened(base, large)
        if all(a is b for a, b in zip(inputs, base)):
            suite.info(name, value="not tried", message=f"{label}: no floating-point input to widen")
            return True
        if _finite(run.expect(inputs)):
            tried = (inputs, large)
            break
    if tried is None:
        suite.info(name, value="not defined", message=(
            f"{label}: the reference's output is not finite on signed, zero or large inputs, so it does not "
            "define the operator there; nothing judged"))
        return True
    inputs, large = tried
    what = "signs alternated, every fourth value zero" + (f", every fourth other x{LARGE:g}" if large else "")
    with suite.check(name, requires=spec.requires("correct")) as c:
        c.details.update({"seed": seed, "inputs": what, "large": large})
        if not run.checked_call(c, inputs, {"name": "wider inputs"}, False, label, seed):
            return False
        c.value = 1
        c.message = (f"{label}: right on inputs beyond the deck's distribution ({what}), where the reference "
                     "defines the operator; benchtui's own requirement, not the deck's rule")
    return c.verdict == PASS
