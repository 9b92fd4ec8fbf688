"""The job a checker's process is handed, one type from end to end.

Built once by the orchestrator (``Runner.make_bundle``, engine/runner/orchestrate.py),
completed with the paths where it runs (``execute_bundle``) and the descriptors of
its sockets (``two_processes``, engine/runner/bundle.py), written into the sandbox as
JSON and read once by the checker (engine/runner/child.py, an audit's
engine/audit/checker.py), which hands it to the checks (engine/verify/execute.py).
A field added here is carried the whole way; mypy follows it to every reader.
"""
from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# The host's ceiling on a speed check's measuring time (seconds), for runs whose figures
# nobody reads: the test suite sets it (tests/conftest.py).
TIMING_BUDGET_CAP = "BENCHTUI_TIMING_BUDGET_S"


@dataclass(frozen=True)
class Job:
    challenge_id: str
    model: str
    seed: int
    backend: str = "cpu"
    thresholds: dict[str, Any] = field(default_factory=dict)
    forbidden_imports: list[str] = field(default_factory=list)
    # Prompt versions (engine/challenges/prompts.py): the answer's version, check -> versions.
    prompt_version: str | None = None
    version_checks: dict[str, list[str]] = field(default_factory=dict)
    # Scan's duplicate_file warnings for this answer: relpath -> what it copies.
    duplicates: dict[str, str] = field(default_factory=dict)
    # The run's wall-clock limit (challenge.toml's [limits] timeout_s, or --timeout): a harness
    # that can tell early that the answer will not finish in it on this machine stops then
    # (engine/verify/module/suite.py), not at the limit.
    timeout_s: float | None = None
    # when (Unix time) the sandbox's clock for that limit runs out: it starts before the checker does
    run_deadline: float | None = None
    check_timeout_s: float | None = None
    # An audit's mutant (engine/audit/checker.py): the checks stop at the first that kills it.
    stop_at_first_kill: bool = False
    # Where it runs: filled by execute_bundle (paths) and two_processes (descriptors).
    challenge_dir: str = ""
    answer_dir: str = ""
    adapter_path: str | None = None
    results_path: str | None = None
    answer_fd: int | None = None  # the socket to the answer's process
    monitor_fd: int | None = None  # the socket to the orchestrator's memory monitor
    gpu_lock_fd: int | None = None  # the device's lock (engine/verify/gpu_lock.py), for a GPU run

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Job:
        """The job as written by ``to_json``: an unknown or missing field is an error (both
        sides run the same engine: engine/runner/bundle.py's check_engine)."""
        return cls(**json.loads(text))


def host_thresholds(thresholds: Mapping[str, Any]) -> dict[str, Any]:
    """A job's ``[thresholds]`` as this host runs them: where the host's environment sets
    BENCHTUI_TIMING_BUDGET_S, a speed check measures for at most that long. The budget
    sets only how long the ``info`` speed figure is measured (its minimum trials still
    run), never a verdict; it is read here, where the job is built, so an answer's
    process, which never sees the job, cannot move it."""
    out = dict(thresholds)
    raw = os.environ.get(TIMING_BUDGET_CAP)
    if raw:
        try:
            cap = float(raw)
        except ValueError:
            raise ValueError(f"{TIMING_BUDGET_CAP}={raw!r} is not a number of seconds") from None
        budget = out.get("timing_budget_s")
        out["timing_budget_s"] = cap if budget is None else min(float(budget), cap)
    return out
