"""A check's row: what the checker writes to its results file (one JSON line each,
``{"check": row}``), what the orchestrator parses back (engine/runner/bundle.py) and
records (engine/store/runs_sql.py), and what the commands and screens show."""
from __future__ import annotations

from typing import Any, NotRequired, TypedDict


class CheckRow(TypedDict):
    name: str
    verdict: str  # one of engine/records/verdicts.py's CHECK_VERDICTS
    message: str
    value: NotRequired[Any]  # the figure, as JSON
    threshold: NotRequired[Any]  # what it is held to, as JSON
    details: NotRequired[dict[str, Any]]
    requires: NotRequired[list[str]]  # the prompt's requirements it tests (engine/challenges/coverage.py)


class DoneRecord(TypedDict):
    """The checker's last line: it ran to the end."""
    done: bool
    verdict: str
    duration_s: float
