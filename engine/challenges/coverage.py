"""Requirements: what a verdict covers.

A challenge's ``challenge.toml`` lists the prompt's checkable requirements,
short id -> the prompt's own words::

    [requirements]
    incremental_decode = "incremental decode: each step appends one token's K/V"
    gpu_kernel = {words = "a CUDA kernel", checkable = false, reason = "read, not run"}

A prompt version may narrow or extend which apply (``requirements = ["id",
...]`` in its ``[prompts.<version>]`` table; absent: all of them) and word a
requirement as that prompt does (``[prompts.<version>.words]``, id -> its
words; absent: the ``[requirements]`` words). Each check
names what it tests (``suite.check(name, requires=(...))``); a check may also
say a requirement it names was not exercised by the answer's own code
(``c.not_exercised(id, reason)``: the adapter did that part).

Per requirement a run gets ``pass`` (a check that needs it passed and none
failed), ``fail`` (a check that needs it did not pass) or ``not_exercised``
with the reason. A run whose checks all pass while some checkable requirement
was not exercised gets the verdict ``partial``, never ``pass``.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from benchtui.records import verdicts
from benchtui.records.coverage import FAIL, NOT_EXERCISED, PASS

if TYPE_CHECKING:
    from benchtui.challenges.definition import Challenge



def words(text: str) -> str:
    """Lowercase, markup-free, whitespace-collapsed: how requirement words are found in a prompt."""
    return " ".join(re.sub(r"[`*_]", "", text).lower().split())


def requirements(challenge: Challenge, version: str | None = None) -> list[dict[str, Any]]:
    """``[{id, words, checkable, reason}]`` that apply to prompt ``version``."""
    raw = getattr(challenge, "raw", None) or {}
    declared = raw.get("requirements") or {}
    out = []
    for rid, spec in declared.items():
        if isinstance(spec, dict):
            out.append({"id": str(rid), "words": str(spec.get("words", rid)),
                        "checkable": bool(spec.get("checkable", True)), "reason": str(spec.get("reason", ""))})
        else:
            out.append({"id": str(rid), "words": str(spec), "checkable": True, "reason": ""})
    spec = (raw.get("prompts") or {}).get(version) if version else None
    # a prompt version may word a requirement its own way: [prompts.V.words] id = "..."
    reworded = spec.get("words") if isinstance(spec, dict) else None
    if isinstance(reworded, dict):
        out = [{**r, "words": str(reworded[r["id"]])} if r["id"] in reworded else r for r in out]
    chosen = spec.get("requirements") if isinstance(spec, dict) else None
    if chosen is not None:
        by_id = {r["id"]: r for r in out}
        out = [by_id.get(str(rid), {"id": str(rid), "words": str(rid), "checkable": True, "reason": ""})
               for rid in chosen]
    return out


def compute(reqs: list[dict[str, Any]], checks: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each requirement's status from the checks that name it."""
    out = []
    for r in reqs:
        rid, named, passed, failed, reasons, by_adapter = r["id"], [], [], [], [], []
        for c in checks:
            if rid not in (c.get("requires") or ()):
                continue
            named.append(c["name"])
            why = ((c.get("details") or {}).get("not_exercised") or {}).get(rid)
            if c.get("verdict") in verdicts.FAILING:  # the requirement does not hold
                failed.append(c["name"])
            elif why:
                by_adapter.append(f"{c['name']}: {why}")
            elif c.get("verdict") == verdicts.PASS:
                passed.append(c["name"])
            elif c.get("verdict") in (verdicts.SKIPPED, verdicts.UNBOUND, verdicts.MISSING_DEPENDENCY):
                reasons.append((c["name"], f"{c.get('verdict')}" + (f" ({c['message']})" if c.get("message") else "")))
            elif c.get("verdict") == verdicts.INFO:
                reasons.append((c["name"], "not asked by this prompt"))
        asked = [c for c in checks if r["id"] in (c.get("requires") or ())
                 and not (c.get("verdict") == verdicts.INFO and "would_be" in (c.get("details") or {}))]
        if named and not asked:  # every check for it belongs to another prompt version
            out.append({"id": rid, "words": r["words"], "status": NOT_EXERCISED, "checkable": False,
                        "reason": "not asked by this answer's prompt", "checks": named})
            continue
        if not r["checkable"]:
            status, reason = NOT_EXERCISED, "not checkable" + (f": {r['reason']}" if r["reason"] else "")
        elif failed:
            status, reason = FAIL, "failed: " + ", ".join(failed)
        elif by_adapter:  # met somewhere only through the adapter's own logic: not the answer's
            status, reason = NOT_EXERCISED, "; ".join(by_adapter)
        elif passed:
            status, reason = PASS, ""
        else:
            status = NOT_EXERCISED
            reason = grouped(reasons) if reasons else unreached(checks)
        out.append({"id": rid, "words": r["words"], "status": status, "reason": reason,
                    "checkable": r["checkable"], "checks": named})
    return out


def grouped(reasons: list[tuple[str, str]]) -> str:
    """Checks that share a reason, said once: "skipped (needs an NVIDIA GPU ...)" when every
    check has it (the requirement lists its checks), else "11 checks: skipped (...); bind: unbound (...)"."""
    by: dict[str, list[str]] = {}
    for name, why in reasons:
        by.setdefault(why, []).append(name)
    if len(by) == 1 and len(reasons) > 1:
        return next(iter(by))
    return "; ".join(f"{names[0] if len(names) == 1 else f'{len(names)} checks'}: {why}" for why, names in by.items())


def unreached(checks: Sequence[Mapping[str, Any]]) -> str:
    """Why no check reached a requirement, from what ended the run: its time limit, a compile
    error, a suite that stopped on an error, or no binding."""
    by = {c.get("verdict") for c in checks}
    if verdicts.TIMEOUT in by:
        return "no check reached it: the run hit its time limit first"
    if verdicts.COMPILE_ERROR in by:
        return "no check reached it: the answer did not compile"
    if verdicts.UNBOUND in by:
        return "no check reached it (no binding for it)"
    if any(c.get("verdict") == verdicts.ERROR and c.get("name") in ("conformance", "run") for c in checks):
        return "no check reached it: the checks stopped on an error first"
    return "no check reached it"


def apply(verdict: str, coverage: list[dict[str, Any]]) -> str:
    """``partial`` for a pass that leaves a checkable requirement not exercised."""
    if verdict == verdicts.PASS and any(c["checkable"] and c["status"] == NOT_EXERCISED for c in coverage):
        return verdicts.PARTIAL
    return verdict


def for_run(challenge: Challenge, version: str | None, checks: Sequence[Mapping[str, Any]], verdict: str) -> tuple[str, list[dict[str, Any]]]:
    """(verdict, coverage) of a finished run."""
    cov = compute(requirements(challenge, version), checks)
    return apply(verdict, cov), cov
