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
from benchtui.verify.binding import Definition, is_self_test


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


# A class whose only code that ran is its constructor was built, never used:
# what it computes was not exercised.
CONSTRUCTION = frozenset({"__init__", "__new__", "__post_init__", "__init_subclass__"})
MEASURED_BY = ("which answer code ran: benchtui's profile hook (engine/runner/reach.py) in the answer's process "
               "during the checks marked reach, so the answer's own word, a figure that never moves a verdict; "
               "which files define what: the checker's own parse of the answer's files")


def ran_definitions(reached: dict[str, int], classes: set[tuple[str, str]]
                    ) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """(ran, built): ("file.py", top-level name) pairs whose code other than a
    constructor ran, and those whose constructor ran. ``classes``: the
    (file, name) pairs that are classes, whose body runs once when defined."""
    ran: set[tuple[str, str]] = set()
    built: set[tuple[str, str]] = set()
    for key in reached:
        rel, _, qualname = key.rpartition(":")
        parts = qualname.split(".")
        top = (rel, parts[0])
        if parts[0] == "<module>" or (len(parts) == 1 and top in classes):
            continue
        (built if len(parts) > 1 and parts[1] in CONSTRUCTION else ran).add(top)
    return ran, built


def unreached_copies(defs: list[Definition], reached: dict[str, int]) -> list[dict[str, Any]]:
    """Files of the answer holding another copy of a class or function whose
    copy in some other file the checks ran, while none of this file's copies ran:
    [{"file", "definitions", "built_only", "judged"}] (sorted by file)."""
    files_of: dict[str, set[str]] = {}
    for d in defs:
        if d.kind in ("class", "function") and not is_self_test(d.relpath):
            files_of.setdefault(d.name, set()).add(d.relpath)
    classes = {(d.relpath, d.name) for d in defs if d.kind == "class"}
    ran, built = ran_definitions(reached, classes)
    out: dict[str, dict[str, Any]] = {}
    for name, files in files_of.items():
        judged = sorted(f for f in files if (f, name) in ran)
        if not judged:
            continue
        for f in sorted(files - set(judged)):
            entry = out.setdefault(f, {"file": f, "definitions": [], "built_only": [], "judged": set()})
            entry["definitions"].append(name)
            if (f, name) in built:
                entry["built_only"].append(name)
            entry["judged"].update(judged)
    return [{**e, "definitions": sorted(e["definitions"]), "built_only": sorted(e["built_only"]),
             "judged": sorted(e["judged"])} for _, e in sorted(out.items())]


def record_unreached_code(suite: Suite) -> None:
    """An ``info`` check ``unreached_code`` where the answer ships a second copy
    of code the checks judged (a model class in two files, the adapter binding
    one and the answer's own scripts the other): the copy no check ran is named,
    so a pass says which copy it covers. Nothing is recorded when no check
    measured its reach or no such copy exists."""
    measured = [c for c in suite.checks if isinstance(c.details.get("reach"), dict)]
    if not measured:
        return
    reached: dict[str, int] = {}
    for c in measured:
        for fn, n in (c.details["reach"].get("calls") or {}).items():
            reached[fn] = reached.get(fn, 0) + n
    copies = unreached_copies(suite.binder.defs, reached)
    if not copies:
        return

    def say(e: dict[str, Any]) -> str:
        names = ", ".join(e["definitions"][:6]) + (" ..." if len(e["definitions"]) > 6 else "")
        built = f" (built, never called: {', '.join(e['built_only'])})" if e["built_only"] else ""
        return f"{e['file']} defines {names}{built} that no check ran; the checks ran {', '.join(e['judged'])}'s"

    suite.record("unreached_code", INFO, value=len(copies),
                 message="; ".join(say(e) for e in copies),
                 details={"files": copies, "checks_measured": [c.name for c in measured], "measured_by": MEASURED_BY})
