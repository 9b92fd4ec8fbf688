"""Checker-side reading of what a check reached (engine/runner/reach.py):
adapters translate, never repair. A requirement the adapter met by its own
logic (looping over the sequences the answer is meant to batch) counts as not
exercised by the answer; the run lists the answer's public entry points that
no check reached."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from benchtui.verify.suite import Suite

from benchtui.records.verdicts import INFO
from benchtui.verify.binding import is_self_test


def batch_loops(reach: dict[str, Any] | None, entry: str, batch: int) -> dict[str, float]:
    """Answer functions the adapter's ``entry`` called itself at least once per
    sequence of a ``batch`` (> 1) on every call: "file.py:Qualname" -> calls per entry."""
    if not reach or batch < 2:
        return {}
    entries = (reach.get("entries") or {}).get(entry, 0)
    direct = (reach.get("direct") or {}).get(entry) or {}
    if not entries:
        return {}
    return {fn: n / entries for fn, n in direct.items() if n / entries >= batch}


def describe_loops(loops: dict[str, float], entry: str, batch: int) -> str:
    fns = ", ".join(f"{fn.split(':', 1)[-1]} ({per:g} calls)" for fn, per in sorted(loops.items()))
    return (f"the adapter's {entry} calls {fns} itself for each {entry} of a batch of {batch}: "
            f"it loops over the sequences, the answer's own code does not batch them")


def public_entry_points(suite: Suite) -> list[str]:
    """"file.py:function" and "file.py:Class.method" of the answer's non-test files."""
    out = []
    for d in suite.binder.defs:
        if is_self_test(d.relpath) or d.name.startswith("_"):
            continue
        if d.kind == "function":
            out.append(f"{d.relpath}:{d.name}")
        elif d.kind == "class":
            out.extend(f"{d.relpath}:{d.name}.{m}" for m in d.methods if not m.startswith("_"))
    return out


def record(suite: Suite) -> None:
    """An ``info`` check ``reach``: what the measured checks reached, what the
    adapter called per entry, and the public entry points no check reached."""
    measured = [c for c in suite.checks if isinstance(c.details.get("reach"), dict)]
    if not measured:
        return
    reached: dict[str, int] = {}
    adapter: dict[str, dict[str, Any]] = {}
    for c in measured:
        r = c.details["reach"]
        for fn, n in (r.get("calls") or {}).items():
            reached[fn] = reached.get(fn, 0) + n
        for entry, n in (r.get("entries") or {}).items():
            a = adapter.setdefault(entry, {"calls": 0, "direct": {}})
            a["calls"] += n
            for fn, k in ((r.get("direct") or {}).get(entry) or {}).items():
                a["direct"][fn] = a["direct"].get(fn, 0) + k
    public = public_entry_points(suite)
    unreached = [p for p in public if p not in reached]
    per_entry = {e: {fn: round(k / a["calls"], 2) for fn, k in sorted(a["direct"].items())}
                 for e, a in adapter.items() if a["calls"]}
    adapter_text = "; ".join(f"{e}: " + (", ".join(f"{fn.split(':', 1)[-1]} x{k:g}" for fn, k in calls.items()) or "no answer call")
                             for e, calls in per_entry.items())
    suite.record("reach", INFO, value=len(reached),
                 message=(f"{len(reached)} answer functions reached by {', '.join(c.name for c in measured)}"
                          + (f"; adapter calls per entry: {adapter_text}" if adapter_text else "; no adapter")
                          + (f"; {len(unreached)} public entry points no check reached: " + ", ".join(unreached[:8])
                             + (" ..." if len(unreached) > 8 else "") if unreached else "")),
                 details={"reached": reached, "adapter_calls_per_entry": per_entry, "unreached": unreached})
