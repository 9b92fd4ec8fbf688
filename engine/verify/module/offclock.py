"""The answer's CPU time off the clock: what its process does while no call is in flight.

The checker's clock brackets its calls, so work a thread of the answer's
process does between them (on what it kept of earlier calls, or warming
something for the next) is not in any window. The kernel sees it: the
orchestrator, outside both sandboxes, reads the answer's process's CPU time
(its CPU-time clock: every thread, exited ones too) for the checker
(engine/verify/monitor.py). Over a shape's timing the checker reads it before
and after every request it makes and around every timed window: what the
process spent between one reply and the next request was spent off the
clock. Past ``ALLOWANCE_S`` an interval, summed over the shape, the shape's
time is no figure ("worked off the clock"): shown, never ranked.

On a GPU this sees the CPU side only: a kernel the answer's process leaves
running on the device between calls costs it no CPU time.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

# CPU time an idle answer's process may spend per interval between a reply and the next
# request: it frees the reply, returns to its socket and waits (a few hundred microseconds
# on a loaded machine); a thread that computes or spins meanwhile spends far more
ALLOWANCE_S = 0.002
READ_BY = ("the answer's process's CPU-time clock (all its threads, exited ones too), read from outside its sandbox "
           "by the orchestrator, before and after every request of the shape's timing")


class CpuLedger:
    """The answer's CPU time over one shape's timing: on the clock (a request in flight)
    and off it (between a reply and the next request)."""

    def __init__(self, read: Callable[[], int] | None, why_not: str = ""):
        self._read = read
        self.why_not = why_not  # why there is no reading, where there is none
        self.off_s = 0.0
        self.on_s = 0.0
        self.worst_s = 0.0
        self.intervals = 0
        self._last: int | None = None  # the clock after the last reply
        self._start: int | None = None

    def _now(self) -> int | None:
        if self._read is None:
            return None
        try:
            return int(self._read())
        except (OSError, ValueError) as exc:  # the process is gone, or the monitor cannot read it
            self._read, self.why_not = None, f"the answer's CPU time could not be read ({exc})"
            return None

    def before(self) -> None:
        """A request is about to go: the interval since the last reply closes."""
        now = self._now()
        if now is not None and self._last is not None:
            gap = max(0, now - self._last) / 1e9
            self.off_s += gap
            self.worst_s = max(self.worst_s, gap)
            self.intervals += 1
        self._start = now

    def after(self) -> None:
        """Its reply was read: an interval off the clock opens."""
        now = self._now()
        if now is not None and self._start is not None:
            self.on_s += max(0, now - self._start) / 1e9
        self._last, self._start = now, None

    @contextmanager
    def request(self) -> Iterator[None]:
        self.before()
        try:
            yield
        finally:
            self.after()

    @property
    def measured(self) -> bool:
        return self._read is not None and self.intervals > 0

    @property
    def allowance_s(self) -> float:
        return ALLOWANCE_S * max(1, self.intervals)

    def over(self) -> bool:
        """Whether the answer worked off the clock past the allowance."""
        return self.measured and self.off_s > self.allowance_s

    def details(self) -> dict[str, Any]:
        if not self.measured:
            return {"measured": False, "why_not": self.why_not or "no interval between requests was read"}
        return {"measured": True, "off_clock_cpu_ms": round(self.off_s * 1e3, 3),
                "on_clock_cpu_ms": round(self.on_s * 1e3, 3), "intervals": self.intervals,
                "worst_interval_cpu_ms": round(self.worst_s * 1e3, 3),
                "allowance_ms": round(self.allowance_s * 1e3, 3),
                "allowance_per_interval_ms": ALLOWANCE_S * 1e3, "worked_off_the_clock": self.over(),
                "read_by": READ_BY}
