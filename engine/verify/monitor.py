"""The answer process's memory as the OS sees it, read from outside.

The checker cannot see the answer's process (another sandbox, another pid
namespace), so in a sandboxed run the orchestrator, which started it,
answers the checker's questions over a small socket: ``reset`` (start a
new peak: write 5 to /proc/PID/clear_refs, reply the current RSS) and
``peak`` (reply VmHWM) and ``rss`` (VmRSS), in bytes; and ``cpu``: the CPU
time the process has used, all its threads (exited ones too), in
nanoseconds, read from its CPU-time clock (the kernel's, as
``clock_getcpuclockid`` names it), else from /proc/PID/stat; and ``wait``:
the time its main thread (the one serving the checker's calls) has spent runnable but waiting for a CPU (the
scheduler's run-queue wait, /proc/PID/schedstat), in nanoseconds.
"""
from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path


def _status_kb(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise OSError(f"no {key} for pid {pid}")


def cpu_ns(pid: int) -> int:
    """CPU time of process ``pid``, every thread of it (exited ones too), in nanoseconds:
    its CPU-time clock (MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED), what
    ``clock_getcpuclockid`` returns), else utime + stime from /proc/PID/stat (clock ticks)."""
    try:
        return time.clock_gettime_ns(((~pid) << 3) | 2)
    except OSError:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * 1_000_000_000 // os.sysconf("SC_CLK_TCK")


def run_queue_wait_ns(pid: int | str, every_thread: bool = False) -> int:
    """Time the main thread of process ``pid`` ("self" for this one; with ``every_thread``,
    its live threads together) has spent runnable but waiting for a CPU, in nanoseconds: the
    second field of each thread's /proc schedstat, kept by the scheduler."""
    tasks = sorted(Path(f"/proc/{pid}/task").iterdir()) if every_thread else [Path(f"/proc/{pid}")]
    total = 0
    for task in tasks:
        try:
            total += int((task / "schedstat").read_text().split()[1])
        except (IndexError, ValueError) as exc:
            raise OSError(f"no run-queue wait in {task}/schedstat") from exc
        except FileNotFoundError:  # a thread that exited meanwhile
            if not every_thread:
                raise
    return total


class ProcMonitor:
    """Direct /proc access to a process this one may inspect."""

    def __init__(self, pid: int):
        self.pid = pid
        self.resets = True

    def reset(self) -> int:
        try:
            Path(f"/proc/{self.pid}/clear_refs").write_text("5")
        except OSError:
            self.resets = False  # the peak then runs from the process's start
        return _status_kb(self.pid, "VmRSS") * 1024

    def peak(self) -> int:
        return _status_kb(self.pid, "VmHWM") * 1024

    def rss(self) -> int:
        return _status_kb(self.pid, "VmRSS") * 1024

    def cpu_ns(self) -> int:
        return cpu_ns(self.pid)

    def wait_ns(self) -> int:
        return run_queue_wait_ns(self.pid)


class RemoteMonitor:
    """The checker's end: asks the orchestrator."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.file = sock.makefile("rwb", buffering=0)

    def _ask(self, what: bytes) -> int:
        self.file.write(what + b"\n")
        line = self.file.readline()
        if not line or not line.strip().lstrip(b"-").isdigit():
            raise OSError(f"memory monitor: {line.decode(errors='replace').strip() or 'no answer'}")
        value = int(line)
        if value < 0:
            raise OSError("memory monitor: the answer's process is not there")
        return value

    def reset(self) -> int:
        return self._ask(b"reset")

    def peak(self) -> int:
        return self._ask(b"peak")

    def rss(self) -> int:
        return self._ask(b"rss")

    def cpu_ns(self) -> int:
        return self._ask(b"cpu")

    def wait_ns(self) -> int:
        return self._ask(b"wait")


def serve(sock: socket.socket, find_pid: Callable[[], int | None]) -> threading.Thread:
    """Answer ``reset``/``peak``/``rss``/``cpu``/``wait`` for the process ``find_pid()`` names, in a thread."""

    def loop() -> None:
        monitor: ProcMonitor | None = None
        with sock, sock.makefile("rwb", buffering=0) as fh:
            for line in fh:
                try:
                    if monitor is None:
                        pid = find_pid()
                        monitor = ProcMonitor(pid) if pid else None
                    if monitor is None:
                        value = -1
                    elif line.strip() == b"reset":
                        value = monitor.reset()
                    elif line.strip() == b"rss":
                        value = monitor.rss()
                    elif line.strip() == b"cpu":
                        value = monitor.cpu_ns()
                    elif line.strip() == b"wait":
                        value = monitor.wait_ns()
                    else:
                        value = monitor.peak()
                except OSError:
                    value = -1
                try:
                    fh.write(b"%d\n" % value)
                except OSError:
                    return

    thread = threading.Thread(target=loop, name="benchtui-monitor", daemon=True)
    thread.start()
    return thread
