"""What a timed window of the module harness costs without the answer's call.

The checker times each window of whole cycles of the answer's process
(``ModuleHost.cycle``: inputs staged from the pages the checker wrote, L2
flushed, the forward, the output and the input report sent back) with its
own clock, and subtracts what the same window costs without the answer: the
checker's own ``ModuleHost`` running the cycles with a stand-in module that
hands back the reference's outputs, each followed by a round trip carrying
a reply of the same size over a wire served by a thread of the checker's
process. Neither half runs beside the answer's code, which could otherwise
slow its own empty cycles to enlarge what is subtracted. The subtraction,
median, IQR and resolution are the shared core's (engine/verify/timing/core.py).
"""
from __future__ import annotations

import contextlib
import tempfile
import time
from pathlib import Path
from typing import Any

from benchtui.verify.timing import core as trusted_timing

TIMED_BY = ("the checker's clock around each window of whole cycles (inputs staged from the pages the checker "
            "wrote, L2 flushed, the call, the output read back by value and decoded), minus the same window run by "
            "the checker's own host with the reference's outputs standing in for the call and the wire's cost for "
            "those replies measured in the checker; per call")


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

    def __init__(self, device: str, encoded_inputs: list[Any], expected: Any):
        from benchtui.verify import wire
        from benchtui.verify.module.host import ModuleHost

        self._stack = contextlib.ExitStack()
        cache = self._stack.enter_context(tempfile.TemporaryDirectory(prefix="benchtui-empty-cycle-"))
        self.host = ModuleHost(_stand_in(expected), device, 0.0, 0.0, Path(cache))
        self.host.build([])
        self.inputs = encoded_inputs
        self.slots = 0
        self.reply = self.host.cycle(self._slot(0))
        self.echo = self._stack.enter_context(wire.echo_peer(self.reply))

    def _slot(self, j: int) -> int:
        while self.slots <= j:
            self.host.share(self.inputs, self.slots)
            self.slots += 1
        return j

    def measure(self, calls: int, samples: int = 7) -> dict[str, Any]:
        """The empty window of ``calls`` cycles: ``samples`` of it (after one
        that warms), summarised by the core."""
        calls = max(1, int(calls))
        self._slot(calls - 1)
        totals, harness, wire_s = [], [], []
        for i in range(max(2, samples) + 1):
            h = w = 0.0
            start = time.perf_counter()
            for j in range(calls):
                t0 = time.perf_counter()
                self.host.cycle(j)
                t1 = time.perf_counter()
                self.echo.request({"op": "echo"}, [[j], {}], by_value=True, plain=True)
                t2 = time.perf_counter()
                h, w = h + t1 - t0, w + t2 - t1
            total = time.perf_counter() - start
            if i:  # the first warms the stand-in's allocations
                totals.append(total)
                harness.append(h)
                wire_s.append(w)
        med = trusted_timing.median_iqr
        return trusted_timing.empty_cycle(totals, calls, harness_s=med(harness)[0], wire_s=med(wire_s)[0])

    def close(self) -> None:
        self._stack.close()
