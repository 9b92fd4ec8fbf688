"""The as-published gap flag's floor is measured on the run: what the timed windows waited
for a CPU (the scheduler's run-queue wait of both processes) past what the empty window
waited. On a busy machine an honest small answer's trusted time stands milliseconds above
its own tight loop with nothing hidden; a memoised answer's gap is work on fresh inputs,
which no run queue counts (engine/verify/module/contention.py)."""
from __future__ import annotations

import os
import socket

from benchtui.verify import monitor
from benchtui.verify.module import contention


def test_an_honest_gap_on_a_busy_machine_is_not_flagged_and_a_memoised_one_is():
    # as read at load 10: 3.93 ms trusted vs 0.05 ms as published, the windows queued 5.2 ms a
    # call where the empty window queued 0.4; on a quiet machine (nothing queued) the same is flagged
    busy = contention.gap_floor_ms(2.0, 5.2 - 0.4)
    assert not contention.gap_flagged(3.93, 0.05, busy)
    assert contention.gap_flagged(3.93, 0.05, contention.gap_floor_ms(2.0, 0.0))
    # a memoised answer's fresh calls (30 ms of work) stand past the same busy floor
    assert contention.gap_flagged(33.0, 0.05, busy)
    assert not contention.gap_flagged(None, 0.05, busy) and not contention.gap_flagged(33.0, 20.0, busy)


def test_the_floor_is_the_windows_wait_past_the_empty_window_s():
    reads = iter([0, 12_000_000, 12_000_000, 14_000_000, 14_000_000, 44_000_000])  # ns, both processes
    waits = contention.RunQueueWait(lambda: next(reads), own=lambda: 0)
    for calls in (2, 1, 10):
        waits.start()
        waits.stop(calls)
    assert waits.per_call_s == [0.006, 0.002, 0.003]
    assert abs(waits.floor_s(0.001) - 0.002) < 1e-12  # median 3 ms a call, less the empty window's 1 ms
    assert waits.floor_s(0.01) == 0.0  # never below nothing
    d = waits.details(0.001)
    assert d["measured"] and d["floor_ms"] == 2.0 and d["empty_window_per_call_ms"] == 1.0


def test_no_reading_no_floor_and_says_why():
    waits = contention.RunQueueWait(None)
    waits.start()
    waits.stop(4)
    assert waits.floor_s(None) == 0.0 and waits.details(None) == {
        "measured": False, "why_not": "no monitor of the answer's process in this run"}

    def gone() -> int:
        raise OSError("no such process")

    broken = contention.RunQueueWait(gone, own=lambda: 0)
    broken.start()
    assert "could not be read (no such process)" in broken.details(None)["why_not"]


def test_the_run_queue_wait_is_the_kernel_s_and_the_monitor_serves_it():
    here = monitor.run_queue_wait_ns("self")
    assert here >= 0 and monitor.run_queue_wait_ns("self", every_thread=True) >= here
    a, b = socket.socketpair()
    monitor.serve(b, lambda: os.getpid())
    assert monitor.RemoteMonitor(a).wait_ns() >= here
    a.close()
