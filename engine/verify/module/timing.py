"""What a timed window of the module harness costs without the answer's call.

The checker times each window of whole cycles of the answer's process
(each call's inputs written by the checker into the pages the answer's
process maps, after the clock started; then ``ModuleHost.cycle``: inputs
staged from those pages, the forward, the output sent back; on a GPU the
checker's own process flushes L2 before each call) with its own clock, and subtracts what the same window
costs without the answer: the checker writing the same bytes into pages of
its own and its own ``ModuleHost`` running the cycles on them with a
stand-in module that hands back the reference's outputs, each followed by a
round trip carrying a reply of the same size over a wire served by a thread
of the checker's process. Neither half runs beside the answer's code, which could otherwise
slow its own empty cycles to enlarge what is subtracted. The subtraction,
median, IQR and resolution are the shared core's (engine/verify/timing/core.py).
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
            "those replies measured in the checker; each less what the checker's timing thread waited for a CPU (the "
            "scheduler's count, its own overhead); per call")


def _stand_in(expected: Any) -> Any:
    """A module whose forward returns ``expected`` (the reference's outputs)."""
    import torch

    class Returns(torch.nn.Module):  # type: ignore[misc]  # torch stands as Any to mypy
        def forward(self, *inputs: Any) -> Any:
            return expected

    return Returns


class EmptyWindow:
    """The empty window's two halves, kept for one shape: this process's own
    host with a stand-in module, and a wire echoing its reply."""

    def __init__(self, device: str, encoded_inputs: list[Any], expected: Any, flush: Callable[[], None]):
        from benchtui.verify import wire
        from benchtui.verify.module.host import ModuleHost

        self._stack = contextlib.ExitStack()
        cache = self._stack.enter_context(tempfile.TemporaryDirectory(prefix="benchtui-empty-cycle-"))
        self.host = ModuleHost(_stand_in(expected), device, 0.0, 0.0, Path(cache))
        self.host.build([])
        self.inputs = encoded_inputs
        self.flush = flush  # the checker's own L2 flush, done before each timed call too
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

    def measure(self, calls: int, samples: int = 7) -> dict[str, Any]:
        """The empty window of ``calls`` cycles: ``samples`` of it (after one
        that warms), summarised by the core."""
        from benchtui.verify.module.contention import own_wait, read_wait

        calls = max(1, int(calls))
        self._slot(calls - 1)
        totals, harness, wire_s, waits = [], [], [], []
        for i in range(max(2, samples) + 1):
            h = w = 0.0
            queued = read_wait(own_wait)  # this thread's wait for a CPU, read outside the clock
            start = time.perf_counter()
            for j in range(calls):
                t0 = time.perf_counter()
                self.flush()
                pages, writes = self.writes[j]
                if pages is not None:
                    pages.write_many(writes)
                self.host.cycle(j, False, False)
                t1 = time.perf_counter()
                self.echo.request({"op": "echo"}, [[j], {}], by_value=True, plain=True)
                t2 = time.perf_counter()
                h, w = h + t1 - t0, w + t2 - t1
            total = time.perf_counter() - start
            after = read_wait(own_wait)
            # what this thread waited for a CPU is the checker's own overhead: off the sample, as off a window
            mine = max(0, after - queued) / 1e9 if queued is not None and after is not None else 0.0
            if i:  # the first warms the stand-in's allocations
                totals.append(total - mine)
                harness.append(h)
                wire_s.append(w)
                if queued is not None and after is not None:
                    waits.append(mine / calls)
        med = trusted_timing.median_iqr
        return trusted_timing.empty_cycle(totals, calls, harness_s=med(harness)[0], wire_s=med(wire_s)[0],
                                          run_queue_wait_s=med(waits)[0] if waits else None)

    def close(self) -> None:
        self._stack.close()
