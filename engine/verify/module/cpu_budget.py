"""How long an answer's first calls on the CPU may take, and what it means when
they take longer.

The decks size their problems for a GPU; on the CPU an honest answer can be too
slow for the run's time limit. That is said only from calls that finished: once
the first calls have run past their share of what is left of the limit, the
time they took, projected over every call the checks make, is past the limit,
and the run stops as ``skipped`` with the projection shown (a GPU would judge
it). A call that does not return at all is no evidence of speed: it gets what
is left of the limit (less a margin for the checker to record it) and is then a
``timeout``, however the answer's process treats signals, since the checker's
own clock and the wire's deadline stop it, not the answer.
"""
from __future__ import annotations

import time
from dataclasses import dataclass


@dataclass
class CpuBudget:
    limit_s: float       # the run's time limit
    left_s: float        # what was left of it when the first calls started
    calls_now: int       # the first calls (the deck's seeds at the first shape)
    calls_in_run: int    # the calls the checks make at every shape, over all shapes
    started: float = 0.0

    @classmethod
    def for_run(cls, limit_s: float | None, run_started: float, calls_now: int, calls_per_shape: int,
                shapes: int) -> CpuBudget | None:
        if not limit_s:
            return None
        left = max(limit_s - (time.monotonic() - run_started), 1.0)
        return cls(float(limit_s), left, max(calls_now, 1), max(calls_per_shape * shapes, 1), time.monotonic())

    @property
    def share_s(self) -> float:
        """The first calls' share of what is left: past it, the calls cannot finish in the limit."""
        return max(self.left_s * self.calls_now / self.calls_in_run, 1.0)

    @property
    def margin_s(self) -> float:
        return min(15.0, max(6.0, 0.25 * self.left_s))  # the checker records the timeout and exits in it

    @property
    def call_s(self) -> float:
        """What one call may take before it is a timeout: what is left of the limit, less the margin."""
        return max(self.left_s - self.margin_s, 1.0)

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def projection_s(self, done: int, elapsed: float) -> float:
        return elapsed / max(done, 1) * self.calls_in_run

    def details(self, done: int, elapsed: float) -> dict:
        return {"cpu_budget_s": round(self.share_s, 2), "call_budget_s": round(self.call_s, 2), "calls_done": done,
                "elapsed_s": round(elapsed, 2), "calls_in_run": self.calls_in_run,
                **({"projected_s": round(self.projection_s(done, elapsed), 1)} if done else {})}

    def too_slow(self, done: int, label: str) -> str | None:
        """After a finished call: why the run cannot finish in its limit, or None. Past the first
        calls' share, or where one more call at their pace would pass the call budget (so the
        next call would be a timeout) and their projection is past the limit."""
        elapsed = self.elapsed()
        if not done:
            return None
        next_late = elapsed + elapsed / done > self.call_s and self.projection_s(done, elapsed) > self.left_s
        if elapsed <= self.share_s and not next_late:
            return None
        return (f"too slow for this CPU: the answer's first {done} call(s) at {label} finished in {elapsed:.1f} s "
                f"({elapsed / done:.2f} s a call); the run's {self.calls_in_run} calls project to "
                f"{self.projection_s(done, elapsed):.0f} s, past the {self.left_s:.0f} s left of its {self.limit_s:g} s "
                "limit, so its checks would not finish in it; nothing was judged. Run it with --backend cuda on a "
                "machine with a GPU, or with a longer --timeout")

    def stalled(self, done: int, label: str) -> str:
        return (f"a call at {label} did not return within {self.call_s:.1f} s (what was left of the run's "
                f"{self.limit_s:g} s limit, less {self.margin_s:.0f} s to record it), after {done} call(s) returned: "
                "a call that does not return is a timeout; too slow for this CPU is said only from calls that finished")

