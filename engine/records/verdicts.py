"""Verdict names and how they combine into an answer's verdict."""
from __future__ import annotations

import json
from collections.abc import Iterable

PASS, FAIL, ERROR, TIMEOUT = "pass", "fail", "error", "timeout"
COMPILE_ERROR, UNBOUND, FORBIDDEN = "compile_error", "unbound", "forbidden"
SKIPPED, NO_ANSWER, INFO = "skipped", "no_answer", "info"
NOT_RUN, INTERRUPTED = "not_run", "interrupted"
# Every check passed but some checkable requirement of the prompt was not
# exercised by the answer's own code (engine/challenges/coverage.py): never a bare pass.
PARTIAL = "partial"
# The answer imports a package this machine's sandbox lacks (the check's
# details name it): not the answer's fault, and nothing was verified.
MISSING_DEPENDENCY = "missing_dependency"

# Worst first. ``info`` (timings, reported figures) never affects a verdict;
# ``skipped`` (backend absent) ranks above pass so an answer whose checks could
# not all run is never shown as passing.
SEVERITY = {
    PASS: 0, SKIPPED: 1, MISSING_DEPENDENCY: 1.5, UNBOUND: 2, FAIL: 3, ERROR: 4, TIMEOUT: 5,
    COMPILE_ERROR: 6, FORBIDDEN: 7,
}
CHECK_VERDICTS = set(SEVERITY) | {INFO}
# What a verdict says of the answer, where it says anything: it does what was asked
# (as far as the checks reached), or it does not. The rest (skipped, unbound, a
# missing dependency, not run, interrupted) judged nothing: engine/verify/judged.py.
PASSING = frozenset({PASS, PARTIAL})
FAILING = frozenset({FAIL, ERROR, TIMEOUT, COMPILE_ERROR, FORBIDDEN})
ANSWER_VERDICTS = set(SEVERITY) | {NO_ANSWER, NOT_RUN, INTERRUPTED, PARTIAL}


def worst(verdicts: Iterable[str | None]) -> str:
    """The answer's verdict: the worst of its checks (``info`` ignored).

    No rated checks at all means nothing was verified: ``skipped``.
    """
    rated = [v for v in verdicts if v is not None and v in SEVERITY]
    if not rated:
        return SKIPPED
    return max(rated, key=lambda v: SEVERITY[v])


def _figure(x: object) -> float | None:
    """A stored value or threshold as a number (JSON text, a number, or None)."""
    if isinstance(x, str):
        try:
            x = json.loads(x)
        except ValueError:
            return None
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    return float(x)


def figure_within(verdict: str | None, value: object, threshold: object) -> bool:
    """A check that did not pass although its figure is below its threshold (a
    numeric threshold is an upper bound: an error, a ratio, a count of wrong
    rows): what failed was something else (a dtype, a shape, a crash), so its
    value and threshold are not the ones that failed. A figure at its threshold
    is not below it: some checks fail there (an N x N array where fewer cells
    are allowed)."""
    if verdict in (PASS, INFO, SKIPPED, None):
        return False
    v, t = _figure(value), _figure(threshold)
    return v is not None and t is not None and v < t
