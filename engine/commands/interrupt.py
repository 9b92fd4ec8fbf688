"""Ctrl-C on `benchtui run` on this machine, in two steps, each said at once.

The first lets the runs in flight finish (their verdicts are good evidence)
and starts no more; the second stops them, recorded as interrupted with the
time they had run; a third stops benchtui itself."""
from __future__ import annotations

import signal
import sys
import threading
from contextlib import contextmanager


class InFlight:
    """The runs started and not yet ended, counted from the runner's events."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: set[tuple[str, str]] = set()

    def on_event(self, event) -> None:
        with self._lock:
            if event.kind == "started":
                self._running.add((event.model, event.challenge))
            elif event.kind in ("finished", "error", "cancelled", "busy"):
                self._running.discard((event.model, event.challenge))

    def __len__(self) -> int:
        with self._lock:
            return len(self._running)


@contextmanager
def two_step_interrupt(drain: threading.Event, cancel: threading.Event, flight: InFlight, caught: list[str], *,
                       enabled: bool = True):
    """SIGINT/SIGTERM: the first sets ``drain``, the second ``cancel``, a third raises
    KeyboardInterrupt. ``caught`` gets each signal's name."""
    if not enabled or threading.current_thread() is not threading.main_thread():
        yield caught
        return

    def handler(signum, frame):
        name = signal.Signals(signum).name
        caught.append(name)
        if len(caught) == 1:
            drain.set()
            say(f"benchtui: {name}: finishing {runs(len(flight))}; Ctrl-C again to stop them")
        elif len(caught) == 2:
            cancel.set()
            say(f"benchtui: {name}: stopping {runs(len(flight))} (recorded as interrupted); Ctrl-C again to quit at once")
        else:
            raise KeyboardInterrupt

    old = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield caught
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def interrupt_report(signal_name: str, events) -> list[str]:
    """What an interrupted `run` did, from the runner's final events: the runs that
    finished (with their verdicts), those stopped, and those that never started."""
    from benchtui.records.verdicts import INTERRUPTED

    finished = [e for e in events if e.kind in ("finished", "error", "busy") and e.verdict != INTERRUPTED]
    stopped = [e for e in events if e.kind == "finished" and e.verdict == INTERRUPTED]
    never = [e for e in events if e.kind == "cancelled"]
    lines = [f"benchtui: interrupted ({signal_name}): {len(finished)} finished, {len(stopped)} stopped, "
             f"{len(never)} never started"]
    if finished:
        lines.append("  finished: " + named(finished, lambda e: f" ({e.verdict or e.kind})"))
    if stopped:
        lines.append("  stopped (recorded as interrupted; the verdicts shown stay the last finished runs): "
                     + named(stopped, lambda e: f" after {e.duration_s:.1f} s" if e.duration_s is not None else ""))
    if never:
        lines.append("  never started: " + named(never, lambda e: ""))
    return lines


def named(events, extra, most: int = 6) -> str:
    """``model/challenge (extra)``, the first ``most`` of them, then how many more."""
    shown = [f"{e.model}/{e.challenge}{extra(e)}" for e in events[:most]]
    return ", ".join(shown) + (f" and {len(events) - most} more" if len(events) > most else "")


def runs(n: int) -> str:
    return f"{n} run" + ("" if n == 1 else "s")


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
