"""What a timed window of the module harness costs without the answer's call.

The checker times each window of whole cycles of the answer's process
(each call's inputs written by the checker into the pages the answer's
process maps, after the clock started; then ``ModuleHost.cycle`` requested
over the wire: inputs staged from those pages, the forward, the output sent
back and read by value; on a GPU the checker's own process flushes L2 before
each call) with its own clock, and subtracts what the same window costs
without the answer's forward. On the CPU (``ServedEmptyWindow``) that is the
same path run against a process forked from the checker's: its own
``ModuleHost`` with a stand-in module that hands back the reference's
outputs, the same bytes written into pages that process maps, the same
requests, the same replies read under the same limit. A timed call's cycle
crosses two processes, each woken once and each running the harness in its
own caches; the window it is compared with does too (measured here at about
0.25 ms a call more than the same cycle run in one process, which the
subtraction used to miss). On a GPU, where a forked process cannot use CUDA,
the window runs in the checker's process (``EmptyWindow``): its own host,
then a round trip of the same reply over a wire served by one of its
threads. Neither runs beside the answer's code, which could otherwise slow
its own empty cycles to enlarge what is subtracted. The subtraction, median,
IQR and resolution are the shared core's (engine/verify/timing/core.py).
"""
from __future__ import annotations

import contextlib
import mmap
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from benchtui.verify.timing import core as trusted_timing

TIMED_BY = ("the checker's clock around each window of whole cycles (each call's inputs written by the checker "
            "into the pages the answer maps once the clock runs, after an L2 flush by the checker's own process on a GPU; "
            "staged from them, the call, the output read back by value and decoded), minus the same window run by "
            "the checker's own host with the reference's outputs standing in for the call (on the CPU in a process "
            "forked from the checker's and called over the same wire; on a GPU in the checker's process, the wire's "
            "cost for those replies measured by a round trip to one of its threads); each less what the checker's timing thread waited for a CPU (the "
            "scheduler's count, its own overhead); per call")


def _stand_in(expected: Any) -> Any:
    """A module whose forward returns ``expected`` (the reference's outputs)."""
    import torch

    class Returns(torch.nn.Module):  # type: ignore[misc]  # torch stands as Any to mypy
        def forward(self, *inputs: Any) -> Any:
            return expected

    return Returns


class EmptyWindow:
    """The empty window in this process, kept for one shape: its own host with a stand-in
    module, and a wire echoing its reply from a thread of this process. On a GPU (a forked
    process cannot use CUDA); on the CPU the window is ``ServedEmptyWindow``."""

    def __init__(self, device: str, encoded_inputs: list[Any], expected: Any, flush: Callable[[], None],
                 limit: Any = None):
        from benchtui.verify import wire
        from benchtui.verify.module.host import ModuleHost

        self._stack = contextlib.ExitStack()
        cache = self._stack.enter_context(tempfile.TemporaryDirectory(prefix="benchtui-empty-cycle-"))
        self.host = ModuleHost(_stand_in(expected), device, 0.0, 0.0, Path(cache))
        self.host.build([])
        self.inputs = encoded_inputs
        self.flush = flush  # the checker's own L2 flush, done before each timed call too
        self.limit = limit  # the most a timed call's reply may carry, as the timed calls' replies are read
        self.slots = 0
        # per slot: the pages this side writes each call's inputs into, and what it writes
        self.writes: list[tuple[Any, list[tuple[int, Any]]]] = []
        self._maps: list[mmap.mmap] = []
        self.reply = self.host.cycle(self._slot(0))
        self.echo = self._stack.enter_context(wire.echo_peer(self.reply))

    def _slot(self, j: int) -> int:
        while self.slots <= j:
            self.host.share(self._mapped(), self.slots)
            self.slots += 1
        return j

    def _mapped(self) -> list[Any]:
        """The inputs in a sealed memfd of their own, mapped here as the answer's process
        maps its pages: the encoded inputs as views of the mapping (the slot the host
        reads), and the pages this side writes each call's values into before the call,
        as a timed window hands its inputs over (staging.py ``hand_over``)."""
        from benchtui.verify import wire_frames
        from benchtui.verify.module import tensors as T

        arrays = [x["data"] for x in self.inputs if T.is_encoded(x)]
        fd, offsets, kept = wire_frames.seal_payload(arrays, keep=True)
        if fd is None or kept is None:  # no tensor among the inputs: nothing to write
            self.writes.append((None, []))
            return list(self.inputs)
        os.close(fd)
        pages = self._stack.enter_context(contextlib.closing(wire_frames.SharedPages(kept, arrays, offsets)))
        mapping = mmap.mmap(kept, os.fstat(kept).st_size, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ | mmap.PROT_WRITE)
        self._maps.append(mapping)
        views = iter([np.frombuffer(mapping, dtype=np.uint8, count=a.nbytes, offset=off) for a, off in zip(arrays, offsets)])
        self.writes.append((pages, list(enumerate(arrays))))
        return [{**x, "data": next(views)} if T.is_encoded(x) else x for x in self.inputs]

    def sample(self, calls: int) -> tuple[float, float, float, float | None]:
        """One empty window of ``calls`` cycles: its seconds less what this thread waited for a
        CPU meanwhile, the harness's and the round trips' parts, and that wait per call (None
        where this kernel keeps none). Timed windows take one after each of theirs, so the two
        see the same machine."""
        calls = max(1, int(calls))
        self._slot(calls - 1)
        h = w = 0.0
        queued = self._waited()  # the checker's wait for a CPU, read outside the clock
        start = time.perf_counter()
        for j in range(calls):
            t0 = time.perf_counter()
            self.flush()
            pages, writes = self.writes[j]
            if pages is not None:
                pages.write_many(writes)
            t1 = self._call(j)
            t2 = time.perf_counter()
            h, w = h + t1 - t0, w + t2 - t1
        total = time.perf_counter() - start
        after = self._waited()
        if queued is None or after is None:
            return total, h, w, None
        # what the checker waited for a CPU is its own overhead: off the sample, as off a window. Of
        # two processes' waits, the longer: they may overlap, and what is taken off never exceeds
        # the time either of them was queued (never a negative window on a busy machine)
        mine = max(max(0, b - a) for a, b in zip(queued, after)) / 1e9
        return total - mine, h, w, mine / calls

    def measure(self, calls: int, samples: int = 7,
                taken: list[tuple[float, float, float, float | None]] | None = None) -> dict[str, Any]:
        """The empty window of ``calls`` cycles: ``samples`` of it (after one that warms), with
        the samples ``taken`` between timed windows, summarised by the core."""
        calls = max(1, int(calls))
        fresh = [self.sample(calls) for _ in range(max(2, samples) + 1)][1:]  # the first warms the stand-in
        every = list(taken or []) + fresh
        med = trusted_timing.median_iqr
        waits = [x[3] for x in every if x[3] is not None]
        return trusted_timing.empty_cycle([x[0] for x in every], calls, harness_s=med([x[1] for x in every])[0],
                                          wire_s=med([x[2] for x in every])[0],
                                          run_queue_wait_s=med(waits)[0] if waits else None,
                                          served_by=self.served_by, between_windows=len(taken or []))

    def _waited(self) -> tuple[int, ...] | None:
        """What this thread has waited for a CPU (ns; None where the kernel keeps no count)."""
        from benchtui.verify.module.contention import own_wait, read_wait

        mine = read_wait(own_wait)
        return None if mine is None else (mine,)

    def _call(self, j: int) -> float:
        """One empty cycle on slot ``j``: this process's host, then the wire's round trip
        for its reply. Returns the time between the two (the harness's part ends there)."""
        self.host.cycle(j, False, False)
        between = time.perf_counter()
        self.echo.request({"op": "echo"}, [[j], {}], by_value=True, plain=True, limit=self.limit)
        return between

    @property
    def served_by(self) -> str:
        return "this process's own host and a wire echoing its reply from a thread of this process"

    def close(self) -> None:
        self._stack.close()


class ServedEmptyWindow(EmptyWindow):
    """The empty window on the CPU: the checker's own host with the stand-in module, in a
    process forked from the checker's (so it holds the checker's code and the reference's
    outputs, and none of the answer's), served over the same wire and called exactly as a
    timed window calls the answer's host: each call's inputs written into pages that
    process maps, then ``cycle`` requested and its reply read by value. A timed call's
    cycle crosses two processes (a wake-up on each side, each process's own caches); the
    same path, less only the answer's forward, is what is subtracted."""

    def __init__(self, device: str, encoded_inputs: list[Any], expected: Any, flush: Callable[[], None],
                 limit: Any = None):
        import socket

        from benchtui.verify import wire
        from benchtui.verify.module.host import ModuleHost

        self._stack = contextlib.ExitStack()
        cache = self._stack.enter_context(tempfile.TemporaryDirectory(prefix="benchtui-empty-cycle-"))
        host = ModuleHost(_stand_in(expected), device, 0.0, 0.0, Path(cache))
        host.build([])
        self.inputs = encoded_inputs
        self.flush = flush
        self.limit = limit
        self.slots = 0
        self.writes = []
        self._maps = []
        here, there = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.pid = _serve_forked(host, here, there)
        there.close()
        self.peer = wire.Peer(wire.Connection(here), trusting=False)
        self._stack.callback(self._end, here)
        self.peer.deadline = time.monotonic() + SERVED_LIMIT_S  # a stand-in that never replies is not waited on
        served: Any = self.peer.call_op("host")  # a handle to the host in the forked process
        self._cycle: Any = served.cycle  # resolved once, as the timed windows resolve theirs
        self._share: Any = served.share
        self.reply = wire.call_plain(self._cycle, self._slot(0), False, False, limit=limit)

    def _mapped(self) -> list[Any]:
        """The inputs sent to the served host as a slot of its own, their pages kept here:
        this side writes each call's values into them before the call, as a timed window
        hands its inputs over (staging.py ``reserve``/``hand_over``)."""
        from benchtui.verify import wire
        from benchtui.verify.module import tensors as T

        keep: list[Any] = []
        wire.call_plain(self._share, list(self.inputs), self.slots, keep=keep)
        pages = keep[0] if keep else None
        if pages is None:  # no tensor among the inputs: nothing to write
            self.writes.append((None, []))
        else:
            self._stack.callback(pages.close)
            arrays = [x["data"] for x in self.inputs if T.is_encoded(x)]
            self.writes.append((pages, [(pages.slot(a), a) for a in arrays]))
        return list(self.inputs)

    def _slot(self, j: int) -> int:
        while self.slots <= j:
            self._mapped()
            self.slots += 1
        return j

    def _call(self, j: int) -> float:
        """One empty cycle on slot ``j``, requested of the served host as a timed call is of the
        answer's. Returns when the request went (the harness's part, the flush and the writes,
        ends there)."""
        from benchtui.verify import wire

        self.peer.deadline = time.monotonic() + SERVED_LIMIT_S  # as a check's deadline bounds a timed call
        between = time.perf_counter()
        wire.call_plain(self._cycle, j, False, False, limit=self.limit)
        return between

    def _waited(self) -> tuple[int, ...] | None:
        """What this thread and the served process have waited for a CPU (ns; None where the
        kernel keeps no count). Both are the checker's: the longer of their waits comes off each
        sample (on a busy machine they are milliseconds, which would otherwise be subtracted
        from the answer's windows); the answer's process's own wait stays in its windows."""
        from benchtui.verify.module.contention import own_wait, process_wait, read_wait

        mine, served = read_wait(own_wait), read_wait(lambda: process_wait(self.pid))
        return None if mine is None or served is None else (mine, served)

    @property
    def served_by(self) -> str:
        return "a process forked from the checker's, serving its own host over the wire"

    def _end(self, sock: Any) -> None:
        self.peer.close()
        sock.close()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            done, _ = os.waitpid(self.pid, os.WNOHANG)
            if done:
                return
            time.sleep(0.005)
        os.kill(self.pid, 9)
        os.waitpid(self.pid, 0)


def empty_window(device: str, encoded_inputs: list[Any], expected: Any, flush: Callable[[], None],
                 limit: Any = None) -> EmptyWindow:
    """The empty window for one shape: served by a forked process of the checker's on the
    CPU, in this process on a GPU (a forked process cannot use CUDA) or where this system
    cannot fork."""
    if str(device) == "cpu" and hasattr(os, "fork"):
        try:
            return ServedEmptyWindow(device, encoded_inputs, expected, flush, limit)
        except OSError:  # no process to be had (a limit on processes): the window in this process, labelled
            pass
    return EmptyWindow(device, encoded_inputs, expected, flush, limit)


# how long the served empty window's process may take over any one request (a stand-in's cycle
# takes microseconds: this bounds a checker's process that stopped answering, never a figure)
SERVED_LIMIT_S = 600.0


def _serve_forked(host: Any, here: Any, there: Any) -> int:
    """Fork a process that serves ``host`` on ``there`` until the other end says bye or
    closes; it leaves with ``os._exit``, running none of this process's exit handlers."""
    from benchtui.verify import wire

    pid = os.fork()
    if pid:
        return pid
    code = 0
    try:
        here.close()
        server = wire.Peer(wire.Connection(there), trusting=True, ops={"host": lambda _: host})
        server.serve_forever()
    except BaseException:  # noqa: BLE001 - the child leaves whatever happened; the parent sees the socket close
        code = 1
    finally:
        os._exit(code)
