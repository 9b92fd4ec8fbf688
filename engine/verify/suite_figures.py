"""The suite's third job: figures about the answer that its own process cannot
bend. Time is read by this process's clock around round trips (inputs staged
beforehand, results kept by reference, the cost of an empty round trip taken
off); memory is read from the OS by a monitor outside the answer's process."""
from __future__ import annotations

import dataclasses
import statistics
import time
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np
from benchtui.records.verdicts import INFO
from benchtui.verify import wire
from benchtui.verify.check import SkipCheck
from benchtui.verify.suite_answer import AnswerReach
from benchtui.verify.timing.clock import Clock, Timing, clock_for, time_pair


class MemoryMonitor(Protocol):
    """Reads the answer's process's memory from the OS (engine/verify/monitor.py)."""

    def reset(self) -> int: ...

    def peak(self) -> int: ...

    def rss(self) -> int: ...


class Figures(AnswerReach):
    """Timing and memory figures for a ``Suite``."""

    backend: str
    thresholds: dict[str, Any]
    monitor: MemoryMonitor | None

    def _stage(self, value: Any) -> Any:
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

    def answer_memory(self) -> int:
        """Resident bytes of the answer's process now, read from the OS."""
        if self.monitor is None:
            raise SkipCheck("no memory monitor for the answer's process")
        return self.monitor.rss()

    def peak_memory(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, int]:
        """(result, peak bytes the answer's process grew by during the call),
        read by this side from the OS (``/proc``), not reported by the answer.
        Inputs are staged and the result kept by reference during the call,
        so neither the transfer nor the inputs count."""
        staged_args = [self._stage(a) for a in args]
        staged_kwargs = {k: self._stage(v) for k, v in kwargs.items()}
        if self.monitor is None:
            raise SkipCheck("no memory monitor for the answer's process")
        if self.peer is None:
            raise RuntimeError("no answer process")
        base = self.monitor.reset()
        with self.peer.reference():
            result = fn(*staged_args, **staged_kwargs)
        peak = self.monitor.peak()
        return self.fetch(result), max(0, peak - base)

    def time(self, name: str, answer: Callable[[Any], Any], reference: Callable[[Any], Any],
             make_inputs: Callable[[int], Any], *, budget_s: float | None = None, **kw: Any) -> Timing | None:
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
            c.verdict, c.value = INFO, round(timing.speedup, 4)
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
