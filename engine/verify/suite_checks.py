"""The suite's first job: turning what a check body did into a row. A check's
outcome (its exception, or none) becomes its verdict; each finished row is
appended to the private results file at once, so a run killed for time keeps
the checks it finished; a check the answer's prompt version does not ask for
is kept as a figure, never a verdict."""
from __future__ import annotations

import contextlib
import json
import time
import traceback
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from benchtui.records.verdicts import CHECK_VERDICTS, ERROR, FAIL, INFO, MISSING_DEPENDENCY, PASS, SKIPPED, TIMEOUT
from benchtui.verify import wire
from benchtui.verify.binding import Unbound
from benchtui.verify.check import (
    Check,
    CheckFailed,
    CheckTimeout,
    SkipCheck,
    check_alarm,
    describe_exception,
    missing_package,
)

# benchtui's import name before it was one package: the engine's rooms were ``engine.*``
OLD_PACKAGE = "engine"


class CheckLog:
    """Records checks (``check``, ``record`` and the named kinds of row) for a ``Suite``."""

    challenge_id: str
    challenge_dir: Path
    adapter_path: Path | None
    check_timeout_s: float | None
    peer: wire.Peer | None
    prompt_version: str | None
    version_checks: dict[str, list[str]]
    check_prefix: str
    checks: list[Check]
    _results_path: Path | None

    @contextlib.contextmanager
    def check(self, name: str, threshold: Any = None, timeout_s: float | None = None,
              requires: Iterable[str] = (), reach: bool = False) -> Iterator[Check]:
        """Record one check. Exceptions map to verdicts: CheckFailed -> fail,
        SkipCheck -> skipped, CheckTimeout -> timeout, anything else -> error.
        Leaving the block normally is a pass unless ``c.verdict`` was set.
        ``requires``: the prompt's requirements this check tests (engine/challenges/coverage.py).
        ``reach``: measure which answer functions it reached and what the adapter
        called (engine/runner/reach.py) into ``c.details["reach"]``."""
        c = Check(name, threshold, requires=tuple(requires))
        self._mark_started(name)
        limit = timeout_s or self.check_timeout_s
        peer = self.peer
        if peer is not None:
            peer.deadline = time.monotonic() + limit if limit else None
        measuring = peer if reach else None
        try:
            with check_alarm(limit):
                if measuring is not None:
                    measuring.call_op("reach_start")
                try:
                    yield c
                finally:
                    if measuring is not None:
                        with contextlib.suppress(Exception):
                            c.details["reach"] = measuring.call_op("reach_stop")
                        for fn in c.after_reach:
                            fn(c)
            c.verdict = c.verdict or PASS
        except CheckFailed as exc:
            c.verdict, c.message = FAIL, str(exc) or "wrong result"
        except SkipCheck as exc:
            c.verdict, c.message = SKIPPED, str(exc)
        except (CheckTimeout, wire.Deadline):
            c.verdict, c.message = TIMEOUT, f"check ran past {limit:g} s"
        except wire.PeerGone as exc:
            c.verdict, c.message = ERROR, f"the answer's process is gone ({exc})"
        except Unbound:
            raise
        except ModuleNotFoundError as exc:  # a package the sandbox lacks: not the answer's fault
            old = old_name_message(exc, self)
            if old is not None:  # unless a file of the challenge's imports benchtui's old name
                c.verdict, c.message = ERROR, old
            else:
                package = missing_package(exc)
                c.verdict, c.value = MISSING_DEPENDENCY, package
                c.message = f"the answer imports {package!r}, which is not installed here: {describe_exception(exc)}"
                c.details["package"] = package
        except Exception as exc:  # the answer crashed: that is evidence too
            c.verdict, c.message = ERROR, describe_exception(exc)
            c.details.setdefault("traceback", getattr(exc, "remote_traceback", None) or traceback.format_exc(limit=-8))
        finally:
            if peer is not None:
                peer.deadline = None
            c.set_aside_passing_figure()
            self._record(c)

    def record(self, name: str, verdict: str, value: Any = None, threshold: Any = None,
               message: str = "", details: dict[str, Any] | None = None, requires: Iterable[str] = ()) -> Check:
        """A check recorded without a block, its verdict given."""
        if verdict not in CHECK_VERDICTS:
            raise ValueError(f"unknown verdict {verdict!r}")
        c = Check(name, threshold, value, verdict, message, details or {}, tuple(requires))
        self._record(c)
        return c

    def skip(self, name: str, reason: str, requires: Iterable[str] = ()) -> Check:
        """A ``skipped`` check, with the reason."""
        return self.record(name, SKIPPED, message=reason, requires=requires)

    def not_exercised(self, name: str, reason: str, requires: Iterable[str]) -> Check:
        """An ``info`` check saying the answer's code for ``requires`` could not be
        exercised, and exactly why (engine/challenges/coverage.py reports the reason)."""
        requires = tuple(requires)
        return self.record(name, INFO, message=reason, requires=requires,
                           details={"not_exercised": {r: reason for r in requires}})

    def info(self, name: str, value: Any = None, message: str = "", details: dict[str, Any] | None = None) -> Check:
        """A figure shown with the checks that never changes the verdict."""
        return self.record(name, INFO, value=value, message=message, details=details)

    def reading(self, name: str, value: Any, message: str = "", accepted: bool = True) -> Check:
        """A figure that says how the answer settles a point its prompt leaves
        open (``accepted``: one of the ways the prompt allows). Never a verdict;
        an audit counts a mutant that only moves it to another accepted way as
        equivalent."""
        return self.record(name, INFO, value=value, message=message,
                           details={"open_reading": {"accepted": bool(accepted)}})

    def _mark_started(self, name: str) -> None:
        """A check in flight when the run's time limit kills this process is
        named by its last ``started`` line (orchestrate.in_flight)."""
        if self._results_path is not None:
            if self.check_prefix and not name.startswith(f"{self.check_prefix}::"):
                name = f"{self.check_prefix}::{name}"
            with open(self._results_path, "a", encoding="utf-8") as fh:
                fh.write(json.dumps({"started": name}) + "\n")

    def _record(self, c: Check) -> None:
        if self.check_prefix and not c.name.startswith(f"{self.check_prefix}::"):
            c.name = f"{self.check_prefix}::{c.name}"
            c.details.setdefault("implementation", self.check_prefix)
        self._apply_prompt_version(c)
        self.checks.append(c)
        if self._results_path is not None:
            with open(self._results_path, "a", encoding="utf-8") as fh:
                fh.write(json.dumps({"check": c.as_dict()}) + "\n")

    # -- prompt versions ------------------------------------------------------------
    def _asked_by_prompt(self, name: str) -> bool:
        """Whether the answer's prompt asks for check ``name`` (universal checks: always)."""
        versions = self.version_checks.get(name.rsplit("::", 1)[-1])
        return not versions or self.prompt_version in versions

    def _apply_prompt_version(self, c: Check) -> None:
        """A check that belongs to another prompt version is a figure, never a verdict."""
        if c.verdict in (INFO, None) or self._asked_by_prompt(c.name):
            return
        versions = self.version_checks[c.name.rsplit("::", 1)[-1]]
        c.details["would_be"] = {"verdict": c.verdict, "message": c.message}
        c.details["asked_by_prompt_versions"] = versions
        mine = f"prompt version {self.prompt_version}" if self.prompt_version else "an unknown or missing prompt"
        c.message = (f"not asked by this answer's prompt ({mine}; only by {', '.join(versions)}): "
                     f"would be {c.verdict}" + (f": {c.message}" if c.message else ""))
        c.verdict = INFO


def old_name_message(exc: BaseException, suite: CheckLog) -> str | None:
    """What to do about a challenge file (its conformance.py, reference.py, an
    adapter) that imports ``engine.*``, or None when ``exc`` is about anything else."""
    if not isinstance(exc, ModuleNotFoundError) or missing_package(exc) != OLD_PACKAGE:
        return None
    root = Path(suite.challenge_dir).resolve()
    remote = getattr(exc, "remote_where", None)
    if remote is not None:  # raised in the answer's process: only the adapter there is the challenge's
        adapter = suite.adapter_path
        if adapter is None or remote.split(":")[0] != adapter.name:
            return None
        where = f"{_under(adapter.resolve(), root) or adapter.name}:{remote.split(':')[-1]}"
    else:
        found = next((f"{rel}:{frame.lineno}" for frame in reversed(traceback.extract_tb(exc.__traceback__))
                      if (rel := _under(Path(frame.filename).resolve(), root))), None)
        if found is None:
            return None
        where = found
    return (f"challenges/{suite.challenge_id}/{where} imports {exc.name}, an old internal name benchtui no longer "
            "has: import from benchtui.api instead (docs/authoring.md), or for an imported deck's challenge "
            "import the deck again (benchtui import)")


def _under(path: Path, root: Path) -> str | None:
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else None
