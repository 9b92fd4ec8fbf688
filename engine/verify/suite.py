"""The API a challenge's ``conformance.py`` is written against.

``conformance.run(suite)`` binds the answer (``suite.bind`` / ``suite.adapter``)
and records checks (``with suite.check(name) as c``). It runs in the checker's
sandboxed process, which never imports answer code: what ``bind`` returns is
a proxy (``engine.verify.wire``) for an object in the answer's own process.
Plain data (numbers, strings, lists, tuples, dicts, ndarrays) crosses by
value; the reference, the seed and the results file stay here. Every
finished check is appended to the private result file at once, so a run
killed for time still keeps the checks it finished.
"""
from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import math
import signal
import statistics
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from benchtui.records import verdicts as V
from benchtui.records.checks import CheckRow
from benchtui.verify import wire
from benchtui.verify.binding import Binder, Unbound
from benchtui.verify.timing.clock import Clock, Timing, clock_for, time_pair


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
    details: dict = field(default_factory=dict)
    # the prompt's requirements this check tests (ids of challenge.toml's [requirements])
    requires: tuple = ()
    # run with the measured reach once the check's body is done (``suite.check(reach=True)``)
    after_reach: list = field(default_factory=list, repr=False)
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
        and the row keeps none (engine/verify/verdicts.figure_within)."""
        if self.figure_failed or not V.figure_within(self.verdict, jsonable(self.value), jsonable(self.threshold)):
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


class Suite:
    def __init__(self, *, challenge_id: str, answer_dir: Path, challenge_dir: Path, model: str,
                 seed: int, backend: str = "cpu", thresholds: dict | None = None,
                 adapter_path: Path | None = None, results_path: Path | None = None,
                 data_dir: Path | None = None, check_timeout_s: float | None = None,
                 prompt_version: str | None = None, version_checks: dict | None = None,
                 check_prefix: str = "", prefer_file: str | None = None,
                 peer: wire.Peer | None = None, monitor=None, gpu_lock_fd: int | None = None):
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
        self._adapter = None

    # -- inputs ---------------------------------------------------------------
    def rng(self, label: str = "") -> np.random.Generator:
        """A generator from the run's secret seed and a label (stable per run)."""
        salt = int.from_bytes(hashlib.sha256(label.encode()).digest()[:8], "little")
        return np.random.default_rng([self.seed, salt])

    def threshold(self, key: str, default: Any) -> Any:
        return self.thresholds.get(key, default)

    # -- binding --------------------------------------------------------------
    def _import(self, relpath: str):
        if self.peer is None:
            raise RuntimeError("no answer process: the checker never imports answer code itself")
        return self.peer.call_op("import", relpath)

    def bind(self, *names: str, kind: str | None = None, methods=()):
        """The answer's object for the first of ``names`` found (exact, then loose)."""
        return self.binder.bind(names, kind=kind, methods=methods)

    def find(self, *names: str, kind: str | None = None, methods=()):
        """Like ``bind`` but returns None when absent."""
        d = self.binder.find(names, kind=kind, methods=methods)
        return self.binder.load(d) if d else None

    def adapter(self):
        """The reviewer's adapter module for this model, imported, or None."""
        if self.adapter_path is None:
            return None
        if self._adapter is None:
            if self.adapter_path.suffix != ".py":
                return None  # a .cu adapter is compiled, not imported (fuse)
            if self.peer is None:
                raise RuntimeError("no answer process: the checker never imports adapters itself")
            self._adapter = self.peer.call_op("adapter")
        return self._adapter

    def answer_side(self, op: str, value: Any = None):
        """Introspection run in the answer's process (``module_of``, ``source``,
        ``instances``, ``mlx_vjp``): it steers binding; anything it measures
        is labelled as coming from the answer's side."""
        if self.peer is None:
            raise RuntimeError("no answer process")
        return self.peer.call_op(op, value)

    def hold_gpu(self) -> None:
        """Take this run's GPU lock (engine/verify/gpu_lock.py) and keep it for
        the rest of the run: one GPU job at a time per device. A no-op
        without one (a CPU run, a local run)."""
        if self.gpu_lock_fd is not None:
            from benchtui.verify import gpu_lock

            gpu_lock.hold(self.gpu_lock_fd)

    def cuda_library(self, symbol: str, params: list[str], timeout_s: float = 300.0):
        """The .cu adapter built with the answer by nvcc inside the answer's
        sandbox and loaded there: (build facts, a proxy for its
        ``cuda_device.KernelHost`` or None, why it could not be loaded). This
        process never loads the answer's library. ``params`` names the entry
        point's arguments (``cuda_device.PARAM_KINDS``: "in" and "out" buffers
        of any ``cuda_device.DTYPES`` type, "int", "int64" and "float"
        scalars); timed cycles take seeded inputs of those types, made on both
        sides bit for bit (``cuda_device.seeded_values``), and several
        launches per timed window (``KernelHost.timing_setup``)."""
        if self.peer is None:
            raise RuntimeError("no answer process: the checker never loads answer code itself")
        self.hold_gpu()  # from before the answer's library loads until the run ends
        return self.peer.call_op("cuda_library", {"symbol": symbol, "params": list(params), "timeout_s": timeout_s})

    @contextlib.contextmanager
    def probing(self):
        """Around a harness's look at the answer that only shapes what the suite
        injects (beam search probes the answer's model class, then replaces the
        model with its own): an audit neither mutates the lines this reaches
        nor compares the values it returns."""
        if self.peer is None:
            yield
            return
        self.peer.call_op("probe_start")
        self.peer.probing = True
        try:
            yield
        finally:
            self.peer.probing = False
            with contextlib.suppress(Exception):
                self.peer.call_op("probe_end")

    @contextlib.contextmanager
    def contract_only(self):
        """Around a check's calls of a component the answer wrote for itself
        (beam search's own language model, dflash's own target) that the check
        judges only by the contract its prompt states, the internals being the
        answer's choice: an audit mutates the lines these calls reach, so a
        mutant that breaks the contract is killed by the check, but leaves the
        values they return out of its comparison, so one that keeps the
        contract counts as equivalent."""
        if self.peer is None:
            yield
            return
        was, self.peer.probing = self.peer.probing, True
        try:
            yield
        finally:
            self.peer.probing = was

    def reference(self):
        """The challenge's trusted ``reference.py``, imported under a private name
        (an answer may ship its own ``reference.py``)."""
        if getattr(self, "_reference", None) is None:
            from benchtui.verify.binding import load_module

            self._reference = load_module(self.challenge_dir / "reference.py", f"benchtui_reference_{self.challenge_id}")
        return self._reference

    def unbound(self, looked_for: list[str], detail: str = "") -> Unbound:
        return Unbound(looked_for, self.binder.searched(), detail)

    # -- checks ---------------------------------------------------------------
    @contextlib.contextmanager
    def check(self, name: str, threshold: Any = None, timeout_s: float | None = None,
              requires: tuple | list = (), reach: bool = False) -> Iterator[Check]:
        """Record one check. Exceptions map to verdicts: CheckFailed -> fail,
        SkipCheck -> skipped, CheckTimeout -> timeout, anything else -> error.
        Leaving the block normally is a pass unless ``c.verdict`` was set.
        ``requires``: the prompt's requirements this check tests (engine/challenges/coverage.py).
        ``reach``: measure which answer functions it reached and what the adapter
        called (engine/runner/reach.py) into ``c.details["reach"]``."""
        c = Check(name, threshold, requires=tuple(requires))
        self._mark_started(name)
        limit = timeout_s or self.check_timeout_s
        if self.peer is not None:
            self.peer.deadline = time.monotonic() + limit if limit else None
        measuring = reach and self.peer is not None
        try:
            with _alarm(limit):
                if measuring:
                    self.peer.call_op("reach_start")
                try:
                    yield c
                finally:
                    if measuring:
                        with contextlib.suppress(Exception):
                            c.details["reach"] = self.peer.call_op("reach_stop")
                        for fn in c.after_reach:
                            fn(c)
            c.verdict = c.verdict or V.PASS
        except CheckFailed as exc:
            c.verdict, c.message = V.FAIL, str(exc) or "wrong result"
        except SkipCheck as exc:
            c.verdict, c.message = V.SKIPPED, str(exc)
        except (CheckTimeout, wire.Deadline):
            c.verdict, c.message = V.TIMEOUT, f"check ran past {limit:g} s"
        except wire.PeerGone as exc:
            c.verdict, c.message = V.ERROR, f"the answer's process is gone ({exc})"
        except Unbound:
            raise
        except ModuleNotFoundError as exc:  # a package the sandbox lacks: not the answer's fault
            old = old_name_message(exc, self)
            if old is not None:  # unless a file of the challenge's imports benchtui's old name
                c.verdict, c.message = V.ERROR, old
            else:
                package = missing_package(exc)
                c.verdict, c.value = V.MISSING_DEPENDENCY, package
                c.message = f"the answer imports {package!r}, which is not installed here: {describe_exception(exc)}"
                c.details["package"] = package
        except Exception as exc:  # the answer crashed: that is evidence too
            c.verdict, c.message = V.ERROR, describe_exception(exc)
            c.details.setdefault("traceback", getattr(exc, "remote_traceback", None) or traceback.format_exc(limit=-8))
        finally:
            if self.peer is not None:
                self.peer.deadline = None
            c.set_aside_passing_figure()
            self._record(c)

    def record(self, name: str, verdict: str, value: Any = None, threshold: Any = None,
               message: str = "", details: dict | None = None, requires: tuple | list = ()) -> Check:
        if verdict not in V.CHECK_VERDICTS:
            raise ValueError(f"unknown verdict {verdict!r}")
        c = Check(name, threshold, value, verdict, message, details or {}, tuple(requires))
        self._record(c)
        return c

    def skip(self, name: str, reason: str, requires: tuple | list = ()) -> Check:
        return self.record(name, V.SKIPPED, message=reason, requires=requires)

    def not_exercised(self, name: str, reason: str, requires: tuple | list) -> Check:
        """An ``info`` check saying the answer's code for ``requires`` could not be
        exercised, and exactly why (engine/challenges/coverage.py reports the reason)."""
        return self.record(name, V.INFO, message=reason, requires=requires,
                           details={"not_exercised": {r: reason for r in requires}})

    def info(self, name: str, value: Any = None, message: str = "", details: dict | None = None) -> Check:
        """A figure shown with the checks that never changes the verdict."""
        return self.record(name, V.INFO, value=value, message=message, details=details)

    def reading(self, name: str, value: Any, message: str = "", accepted: bool = True) -> Check:
        """A figure that says how the answer settles a point its prompt leaves
        open (``accepted``: one of the ways the prompt allows). Never a verdict;
        an audit counts a mutant that only moves it to another accepted way as
        equivalent."""
        return self.record(name, V.INFO, value=value, message=message,
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
        if c.verdict in (V.INFO, None) or self._asked_by_prompt(c.name):
            return
        versions = self.version_checks[c.name.rsplit("::", 1)[-1]]
        c.details["would_be"] = {"verdict": c.verdict, "message": c.message}
        c.details["asked_by_prompt_versions"] = versions
        mine = f"prompt version {self.prompt_version}" if self.prompt_version else "an unknown or missing prompt"
        c.message = (f"not asked by this answer's prompt ({mine}; only by {', '.join(versions)}): "
                     f"would be {c.verdict}" + (f": {c.message}" if c.message else ""))
        c.verdict = V.INFO

    # -- calling the answer -----------------------------------------------------
    def call(self, fn: Callable, *args, **kwargs):
        """Call the answer; fail if it changed an input array in place.

        Arrays reach the answer's process in shared memory that this process
        still maps, so a write into an input is seen here, whatever the
        answer's process claims. ``fn`` may be a proxy or a local wrapper
        that calls proxies."""
        peer = self.peer
        if peer is None:
            raise RuntimeError("no answer process")
        was, peer.watch = peer.watch, True
        before = len(peer.mutated_log)
        try:
            result = fn(*args, **kwargs)
        finally:
            peer.watch = was
        changed = peer.mutated_log[before:]
        del peer.mutated_log[before:]
        if changed:
            raise InputMutated(f"the answer modified its input in place ({changed[0]})")
        return result

    def _stage(self, value: Any):
        """Send a value to the answer's process ahead of a measured call; the
        proxy that comes back passes it by reference (no copy in the call)."""
        if self.peer is None:
            return value
        if dataclasses.is_dataclass(value) and not isinstance(value, type):  # a bundle of inputs: stage its arrays
            return dataclasses.replace(value, **{f.name: self._stage(getattr(value, f.name))
                                                 for f in dataclasses.fields(value) if f.init})
        if not _stageable(value):
            return value  # anything else goes by value in the call
        with self.peer.reference():
            return self.peer.call_op("keep", value)

    def fetch(self, value: Any):
        """The value behind a proxy returned by reference, copied here."""
        if wire.is_proxy(value):
            return self.peer.request({"op": "fetch"}, value, by_value=True)
        return value

    def answer_memory(self) -> int:
        """Resident bytes of the answer's process now, read from the OS."""
        if self.monitor is None:
            raise SkipCheck("no memory monitor for the answer's process")
        return self.monitor.rss()

    def peak_memory(self, fn: Callable, *args, **kwargs) -> tuple[Any, int]:
        """(result, peak bytes the answer's process grew by during the call),
        read by this side from the OS (``/proc``), not reported by the answer.
        Inputs are staged and the result kept by reference during the call,
        so neither the transfer nor the inputs count."""
        staged_args = [self._stage(a) for a in args]
        staged_kwargs = {k: self._stage(v) for k, v in kwargs.items()}
        if self.monitor is None:
            raise SkipCheck("no memory monitor for the answer's process")
        base = self.monitor.reset()
        with self.peer.reference():
            result = fn(*staged_args, **staged_kwargs)
        peak = self.monitor.peak()
        return self.fetch(result), max(0, peak - base)

    def time(self, name: str, answer: Callable[[Any], Any], reference: Callable[[Any], Any],
             make_inputs: Callable[[int], Any], *, budget_s: float | None = None, **kw) -> Timing | None:
        """Time answer against reference on the same fresh inputs; records an
        ``info`` check whose value is the speedup (reference / answer).

        The answer's side is timed by this process's clock around each round
        trip, inputs staged beforehand and results kept by reference, minus
        the measured cost of an empty round trip: patching the answer
        process's clocks changes nothing."""
        budget = budget_s if budget_s is not None else float(self.thresholds.get("timing_budget_s", 1.5))
        timing = None
        with self.check(name) as c:
            base = clock_for(self.backend)
            remote = RoundTripClock(self.peer, base) if self.peer is not None else base
            timing = time_pair(answer, reference, make_inputs, clock=base, answer_clock=remote,
                               stage=self._stage if self.peer is not None else None, budget_s=budget, **kw)
            c.verdict, c.value = V.INFO, round(timing.speedup, 4)
            c.message = f"speedup {timing.speedup:.2f}x: " + timing.describe()
            c.details.update(timing.as_dict())
            if isinstance(remote, RoundTripClock):
                c.details["round_trip_overhead_s"] = remote.overhead_s
                c.details["answer_timed_by"] = "checker's clock around round trips" + (
                    " (the answer's process evaluates lazy MLX results before replying: it could skip that)"
                    if self.backend == "mlx" else "")
        return timing


def _stageable(value: Any, depth: int = 0) -> bool:
    if isinstance(value, np.ndarray):
        return True
    if type(value) in (tuple, list) and depth < 3:
        return any(_stageable(v, depth + 1) for v in value) and all(
            _stageable(v, depth + 1) or v is None or type(v) in (bool, int, float, str) for v in value)
    return False


class RoundTripClock(Clock):
    """Times the answer from the checker's side: the wall time of the round
    trips a measured call makes, minus that many empty round trips."""

    def __init__(self, peer: wire.Peer, base: Clock, samples: int = 30):
        self.peer, self.base = peer, base
        self.name = f"{base.name} around round trips"
        trips = []
        for _ in range(samples):
            start = time.perf_counter()
            peer.ping()
            trips.append(time.perf_counter() - start)
        self.overhead_s = statistics.median(trips)

    def measure(self, fn: Callable[[], Any]) -> float:
        before = self.peer.round_trips
        with self.peer.reference():
            elapsed = self.base.measure(fn)
        return max(0.0, elapsed - (self.peer.round_trips - before) * self.overhead_s)


def missing_package(exc: BaseException) -> str | None:
    """The top-level package a ModuleNotFoundError names (``mlx_lm.models`` -> ``mlx_lm``)."""
    import re

    name = getattr(exc, "name", None)
    if not name:
        found = re.search(r"No module named '([^']+)'", str(exc))
        name = found.group(1) if found else None
    return name.split(".")[0] if name else None


# benchtui's import name before it was one package: the engine's rooms were ``engine.*``
OLD_PACKAGE = "engine"


def old_name_message(exc: BaseException, suite: Suite) -> str | None:
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
        where = next((f"{rel}:{frame.lineno}" for frame in reversed(traceback.extract_tb(exc.__traceback__))
                      if (rel := _under(Path(frame.filename).resolve(), root))), None)
        if where is None:
            return None
    return (f"challenges/{suite.challenge_id}/{where} imports {exc.name}, an old internal name benchtui no longer "
            "has: import from benchtui.api instead (docs/authoring.md), or for an imported deck's challenge "
            "import the deck again (benchtui import)")


def _under(path: Path, root: Path) -> str | None:
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else None


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
def alarm(seconds: float | None, timed_out: Callable[[], BaseException]):
    """Raise ``timed_out()`` in this thread once ``seconds`` pass (SIGALRM; the
    main thread only, elsewhere no limit: the sandbox's own wall-clock limit
    is the real backstop)."""
    if not seconds or seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_alarm(signum, frame):
        raise timed_out()

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _alarm(seconds: float | None):
    """The per-check limit."""
    return alarm(seconds, CheckTimeout)
