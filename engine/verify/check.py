"""One check of a conformance suite: the record a check body fills (``Check``),
the exceptions that end a body with a verdict, and how a value or an exception
is written into a check's row."""
from __future__ import annotations

import contextlib
import math
import signal
import threading
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

import numpy as np
from benchtui.records.checks import CheckRow
from benchtui.records.verdicts import figure_within
from benchtui.verify import wire


class CheckFailed(AssertionError):
    """Raise (or use ``c.fail``) inside a check for a wrong result."""


class InputMutated(CheckFailed):
    """The answer modified an input array in place."""


class CheckTimeout(Exception):
    """A single check ran past its own time limit."""


class SkipCheck(Exception):
    """Raise inside a check to record it as skipped with a reason."""


@dataclass
class Check:
    name: str
    threshold: Any = None
    value: Any = None
    verdict: str | None = None
    message: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    # the prompt's requirements this check tests (ids of challenge.toml's [requirements])
    requires: tuple[str, ...] = ()
    # run with the measured reach once the check's body is done (``suite.check(reach=True)``)
    after_reach: list[Callable[[Check], None]] = field(default_factory=list, repr=False)
    # ``fail(message, value)`` named the figure that failed: it stays the row's value
    figure_failed: bool = field(default=False, repr=False)

    def not_exercised(self, requirement: str, reason: str) -> None:
        """This check reached ``requirement`` only through something other than
        the answer's own code (its adapter): it does not count as exercised."""
        self.details.setdefault("not_exercised", {})[requirement] = reason

    def fail(self, message: str, value: Any = None) -> None:
        """Fail the check; ``value``: the figure that failed (it becomes the row's value)."""
        if value is not None:
            self.value, self.figure_failed = value, True
        raise CheckFailed(message)

    def set_aside_passing_figure(self) -> None:
        """A check that failed for something other than its figure (a dtype, a crash)
        while the figure sits within its threshold: the row's value and threshold would
        read as a pass, so they move to the message and ``details["within_threshold"]``
        and the row keeps none (engine/records/verdicts.figure_within)."""
        if self.figure_failed or not figure_within(self.verdict, jsonable(self.value), jsonable(self.threshold)):
            return
        value, threshold = jsonable(self.value), jsonable(self.threshold)
        self.details["within_threshold"] = {"value": value, "threshold": threshold}
        self.message = (f"{self.message} " if self.message else "") + (
            f"(its figure {value:.3g} is within its threshold {threshold:g}: not what failed)")
        self.value = self.threshold = None

    def expect(self, condition: bool, message: str) -> None:
        if not condition:
            raise CheckFailed(message)

    def as_dict(self) -> CheckRow:
        # a check without a verdict has no place among the checks: "" is none of CHECK_VERDICTS,
        # so the orchestrator's parse_results passes the row over, as it always did
        return {"name": self.name, "verdict": self.verdict or "", "value": jsonable(self.value),
                "threshold": jsonable(self.threshold), "message": self.message,
                "details": jsonable(self.details), "requires": list(self.requires)}


def jsonable(x: Any) -> Any:
    if isinstance(x, (np.floating, np.integer, np.bool_)):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, (str, int, float, bool)) or x is None:
        return x
    return str(x)


def missing_package(exc: BaseException) -> str | None:
    """The top-level package a ModuleNotFoundError names (``mlx_lm.models`` -> ``mlx_lm``)."""
    import re

    name = getattr(exc, "name", None)
    if not name:
        found = re.search(r"No module named '([^']+)'", str(exc))
        name = found.group(1) if found else None
    return name.split(".")[0] if name else None


def describe_exception(exc: BaseException) -> str:
    remote_where = getattr(exc, "remote_where", None)
    if remote_where is not None:  # raised in the answer's process
        where = f" at {remote_where}" if remote_where else ""
        text = str(exc).strip().splitlines()
        name = getattr(exc, "remote_type", type(exc).__name__)
        return f"{name}{where}: {text[0][:300] if text else ''}".rstrip(": ")
    where = wire.where_raised(exc, traceback.extract_tb(exc.__traceback__))
    where = f" at {where}" if where else ""
    text = (exc.msg if isinstance(exc, SyntaxError) and exc.msg and exc.filename else str(exc)).strip().splitlines()
    return f"{type(exc).__name__}{where}: {text[0][:300] if text else ''}".rstrip(": ")


@contextlib.contextmanager
def alarm(seconds: float | None, timed_out: Callable[[], BaseException]) -> Iterator[None]:
    """Raise ``timed_out()`` in this thread once ``seconds`` pass (SIGALRM; the
    main thread only, elsewhere no limit: the sandbox's own wall-clock limit
    is the real backstop)."""
    if not seconds or seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_alarm(signum: int, frame: FrameType | None) -> None:
        raise timed_out()

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def check_alarm(seconds: float | None) -> contextlib.AbstractContextManager[None]:
    """The per-check limit."""
    return alarm(seconds, CheckTimeout)
