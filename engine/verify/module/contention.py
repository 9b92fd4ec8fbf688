"""How long the timed windows waited for a CPU: the floor under the as-published gap flag.

On a busy machine a call's cycle crosses two processes, each woken and then
queued behind whatever else runs, so an honest answer's trusted time stands
milliseconds above its own tight loop (3.9 ms against 0.05 ms at load 10)
with nothing hidden. The scheduler counts that queueing: a thread's
run-queue wait (/proc/PID/schedstat). Around every timed window, outside
its clock, the checker reads it for the thread serving its calls in the
answer's process (its main thread, through the run's monitor, from outside
its sandbox) and for its own calling thread; the two take turns on the
window's path. The empty window, subtracted from each window, queued too:
the checker reads its calling thread's wait around each of its samples.

The checker's own calling thread's wait is the checker's overhead, not the
answer's: it is taken off each window's wall time and each empty sample's
(``timed.py`` ``window``, ``timing.py`` ``EmptyWindow.measure``), so a
reply that reaches a checker queued behind other jobs does not lengthen the
answer's time. The answer's own wait stays in it. What the
windows queued per call past what the empty window queued is the floor a
gap between the trusted and the as-published time must clear before it is
flagged. A memoised answer's gap is work (or a sleep) on
fresh inputs, which no run queue counts. An answer that queues its own
threads to raise the floor raises its trusted time by as much.
"""
from __future__ import annotations

import statistics
import threading
from collections.abc import Callable
from typing import Any

READ_BY = ("the scheduler's run-queue wait of the answer's process's main thread (read by the orchestrator, "
           "outside its sandbox) and of the checker's calling thread, around each timed window, per call, less the "
           "calling thread's wait per call in the empty window")


def own_wait() -> int:
    """The run-queue wait of the checker's calling thread (the one that times the windows)."""
    from benchtui.verify.monitor import run_queue_wait_ns

    return run_queue_wait_ns(f"self/task/{threading.get_native_id()}")


def read_wait(read: Callable[[], int]) -> int | None:
    """A run-queue wait read, or None where this kernel keeps none."""
    try:
        return int(read())
    except (OSError, ValueError):
        return None


# an as-published time this many times below the trusted one is flagged
GAP_FLAG = 2.0


def gap_floor_ms(min_gap_ms: float, queued_ms: float) -> float:
    """How far the trusted time may stand above the as-published one unflagged: the device's
    fixed floor, plus what the windows waited for a CPU past the empty window, per call."""
    return float(min_gap_ms) + max(0.0, float(queued_ms))


def gap_flagged(trusted_ms: float | None, published_ms: float, floor_ms: float) -> bool:
    """The as-published time far below the trusted one: ``GAP_FLAG`` times, and past ``floor_ms``."""
    return (trusted_ms is not None and published_ms > 0 and trusted_ms / published_ms > GAP_FLAG
            and trusted_ms - published_ms > floor_ms)


class RunQueueWait:
    """Per timed window, the run-queue wait of both processes per call."""

    def __init__(self, answer: Callable[[], int] | None, own: Callable[[], int] | None = None):
        self._answer = answer
        self._own = own if own is not None else own_wait
        self.per_call_s: list[float] = []
        self.checker_per_call_s: list[float] = []  # the checker's share of it
        self.why_not = "" if answer is not None else "no monitor of the answer's process in this run"
        self._start: tuple[int, int] | None = None

    def _read(self) -> tuple[int, int] | None:
        if self._answer is None:
            return None
        try:
            return int(self._answer()), int(self._own())
        except (OSError, ValueError) as exc:  # the process is gone, or no schedstat on this kernel
            self._answer, self.why_not = None, f"the run-queue wait could not be read ({exc})"
            return None

    def start(self) -> None:
        self._start = self._read()

    def stop(self, calls: int) -> None:
        end, start = self._read(), self._start
        if end is not None and start is not None:
            answer, checker = max(0, end[0] - start[0]), max(0, end[1] - start[1])
            self.per_call_s.append((answer + checker) / 1e9 / max(1, calls))
            self.checker_per_call_s.append(checker / 1e9 / max(1, calls))
        self._start = None

    def floor_s(self, empty_wait_s: float | None) -> float:
        """The median window's wait per call past the empty window's (0 where none was read)."""
        if not self.per_call_s:
            return 0.0
        return max(0.0, statistics.median(self.per_call_s) - (empty_wait_s or 0.0))

    def details(self, empty_wait_s: float | None) -> dict[str, Any]:
        if not self.per_call_s:
            return {"measured": False, "why_not": self.why_not or "no timed window was read"}
        return {"measured": True, "floor_ms": round(self.floor_s(empty_wait_s) * 1e3, 4),
                "windows_per_call_ms": [round(x * 1e3, 4) for x in self.per_call_s],
                "checker_windows_per_call_ms": [round(x * 1e3, 4) for x in self.checker_per_call_s],
                "empty_window_per_call_ms": None if empty_wait_s is None else round(empty_wait_s * 1e3, 4),
                "read_by": READ_BY}
