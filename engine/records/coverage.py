"""A run's coverage as stored: one row per requirement with its status, and how it is said.
engine/challenges/coverage.py computes it from a challenge's requirements and the run's checks;
the store, the grades, the commands and the screens read it from here."""
from __future__ import annotations

from typing import Any

PASS, FAIL, NOT_EXERCISED = "pass", "fail", "not_exercised"


def summary(coverage: list[dict[str, Any]] | None) -> str:
    """"3 of 5 requirements met" (checkable ones that passed), "" without any. The count
    names what it counts, so "skipped: 2 of 4 requirements met" never reads as two skipped,
    and a prompt's requirement no check can judge is said beside it ("6 of 6 checkable
    requirements met, 1 not checkable"), so "6 of 6" never reads as all seven met."""
    checkable = [c for c in coverage or () if c.get("checkable", True)]
    if not checkable:
        return ""
    done = sum(c["status"] == PASS for c in checkable)
    unjudged = len(coverage or ()) - len(checkable)
    if unjudged:
        return f"{done} of {len(checkable)} checkable requirements met, {unjudged} not checkable"
    return f"{done} of {len(checkable)} requirements met"


def describe(verdict: str | None, coverage: list[dict[str, Any]] | None) -> str:
    """The verdict as shown: ``partial: 3 of 5 requirements met``, ``pass: 5 of 5 requirements met``."""
    s = summary(coverage)
    return f"{verdict}: {s}" if s and verdict else (verdict or "")
