"""What a timed window of the module harness costs without the answer's call.

The checker times each window of whole cycles of the answer's process
(each call's inputs written by the checker into the pages the answer's
process maps, after the clock started; then ``ModuleHost.cycle`` requested
over the wire: inputs staged from those pages, the forward, the output sent
back and read by value; on a GPU the checker's own process flushes L2 before
each call) with its own clock, and subtracts what the same window costs
without the answer: the checker writing the same bytes into pages of its
own and its own ``ModuleHost`` running the cycles on them with a stand-in
module that hands back the reference's outputs, each followed by a round
trip carrying a reply of the same size over a wire served by a thread of
the checker's process. One empty window is sampled after each timed window,
so the two see the same machine. Neither runs beside the answer's code,
which could otherwise slow its own empty cycles to enlarge what is
subtracted. A process of the checker's own serving the empty window (the
path a timed call crosses) was tried and over-subtracted: honest 1 ms
answers read 3-11% below their own forward and were flagged. The
subtraction, median, IQR and resolution are the shared core's
(engine/verify/timing/core.py).
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
            "the checker's own host with the reference's outputs standing in for the call and the wire's cost for "
            "those replies measured by a round trip to one of its threads, sampled after each timed window; each less what the checker's timing thread waited for a CPU (the "
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
    module, and a wire echoing its reply from a thread of this process."""

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
        # what the checker's thread waited for a CPU is its own overhead: off the sample, as off a window
        mine = max(0, after - queued) / 1e9
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

    def _waited(self) -> int | None:
        """What this thread has waited for a CPU (ns; None where the kernel keeps no count)."""
        from benchtui.verify.module.contention import own_wait, read_wait

        return read_wait(own_wait)

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


def empty_window(device: str, encoded_inputs: list[Any], expected: Any, flush: Callable[[], None],
                 limit: Any = None) -> EmptyWindow:
    """The empty window for one shape, in the checker's process."""
    return EmptyWindow(device, encoded_inputs, expected, flush, limit)
