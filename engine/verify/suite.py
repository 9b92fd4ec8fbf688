"""The API a challenge's ``conformance.py`` is written against.

``conformance.run(suite)`` binds the answer (``suite.bind`` / ``suite.adapter``)
and records checks (``with suite.check(name) as c``). It runs in the checker's
sandboxed process, which never imports answer code: what ``bind`` returns is
a proxy (``engine.verify.wire``) for an object in the answer's own process.
Plain data (numbers, strings, lists, tuples, dicts, ndarrays) crosses by
value; the reference, the seed and the results file stay here. Every
finished check is appended to the private result file at once, so a run
killed for time still keeps the checks it finished.

``Suite`` is built from one piece per job, each a module of its own:
recording checks (engine/verify/suite_checks.py), reaching the answer's
process (engine/verify/suite_answer.py) and the figures its process cannot
bend (engine/verify/suite_figures.py); the run's own inputs (its seed, its
thresholds) are here. challenges/AUTHORING.md lists every method by job.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np
from benchtui.verify import wire
from benchtui.verify.binding import Binder
from benchtui.verify.check import (
    Check,
    CheckFailed,
    CheckTimeout,
    InputMutated,
    SkipCheck,
    alarm,
    describe_exception,
    jsonable,
    missing_package,
)
from benchtui.verify.suite_checks import OLD_PACKAGE, old_name_message
from benchtui.verify.suite_figures import Figures, MemoryMonitor, RoundTripClock

__all__ = ["Suite", "Check", "CheckFailed", "CheckTimeout", "InputMutated", "SkipCheck", "alarm",
           "describe_exception", "jsonable", "missing_package", "old_name_message", "OLD_PACKAGE",
           "RoundTripClock", "MemoryMonitor"]


class Suite(Figures):
    """What ``conformance.run`` is given: records checks, reaches the answer, measures it."""

    def __init__(self, *, challenge_id: str, answer_dir: Path, challenge_dir: Path, model: str,
                 seed: int, backend: str = "cpu", thresholds: dict[str, Any] | None = None,
                 adapter_path: Path | None = None, results_path: Path | None = None,
                 data_dir: Path | None = None, check_timeout_s: float | None = None,
                 prompt_version: str | None = None, version_checks: dict[str, list[str]] | None = None,
                 check_prefix: str = "", prefer_file: str | None = None,
                 peer: wire.Peer | None = None, monitor: MemoryMonitor | None = None,
                 gpu_lock_fd: int | None = None):
        self.challenge_id = challenge_id
        self.gpu_lock_fd = gpu_lock_fd
        self.answer_dir = Path(answer_dir)
        self.challenge_dir = Path(challenge_dir)
        self.model = model
        self.seed = seed
        self.backend = backend
        self.thresholds = thresholds or {}
        self.adapter_path = adapter_path
        self.data_dir = data_dir or self.challenge_dir / "data"
        self.check_timeout_s = check_timeout_s
        # the run's time limit and when the checks began (engine/verify/execute.py sets them): a harness
        # that sees the answer cannot finish in it stops early (engine/verify/module/suite.py)
        self.run_limit_s: float | None = None
        self.run_started: float | None = None
        self.peer = peer
        self.monitor = monitor
        self.binder = Binder(self.answer_dir, importer=self._import)
        # Prompt versions (engine/challenges/prompts.py): the version of the answer's own
        # PROMPT.md, and check name -> the versions that ask for that check.
        self.prompt_version = prompt_version
        self.version_checks = dict(version_checks or {})
        # Several implementations in one folder (execute.py): this suite's file
        # is bound first and its checks are named ``<file>::<check>``.
        self.check_prefix = check_prefix
        self.binder.prefer_file = prefer_file
        self.checks: list[Check] = []
        self._results_path = results_path

    # -- the run's inputs -------------------------------------------------------
    def rng(self, label: str = "") -> np.random.Generator:
        """A generator from the run's secret seed and a label (stable per run)."""
        salt = int.from_bytes(hashlib.sha256(label.encode()).digest()[:8], "little")
        return np.random.default_rng([self.seed, salt])

    def threshold(self, key: str, default: Any) -> Any:
        """``[thresholds]`` of challenge.toml (a prompt version may override it), else ``default``."""
        return self.thresholds.get(key, default)
