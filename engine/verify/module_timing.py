"""What a timed cycle of the module harness costs without the answer's call.

The checker times each whole cycle of the answer's process (``ModuleHost.cycle``:
inputs written into their storage, L2 flushed, the forward, the output and the
input check sent back) with its own clock, and subtracts what the same cycle
costs without the answer: the checker's own ``ModuleHost`` running the cycle
with a stand-in module that hands back the reference's outputs, plus the
wire's cost for a request and a reply of the same size, served by a thread
of the checker's process. Neither half runs beside the answer's code, which
could otherwise slow its own empty cycles to enlarge what is subtracted.
"""
from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

TIMED_BY = ("the checker's clock around each whole cycle (inputs written in place, L2 flushed, the call, the output "
            "and the input check back) minus the same cycle run by the checker's own host with the reference's "
            "outputs standing in for the call, and the wire's cost for that request and reply measured in the checker")


def _stand_in(expected: Any):
    """A module whose forward returns ``expected`` (the reference's outputs)."""
    import torch

    class Returns(torch.nn.Module):
        def forward(self, *inputs):
            return expected

    return Returns


def empty_cycle(suite, device: str, encoded_inputs: list, expected: Any, samples: int = 7) -> dict:
    """Median seconds of a cycle without the answer: this process's own host
    running it with a stand-in module (``harness_s``), plus a round trip
    carrying the same inputs and bringing back the same output (``wire_s``)."""
    from benchtui.verify import wire
    from benchtui.verify.module_host import ModuleHost

    with tempfile.TemporaryDirectory(prefix="benchtui-empty-cycle-") as cache:
        host = ModuleHost(_stand_in(expected), device, 0.0, 0.0, Path(cache))
        host.build([])
        times, reply = [], None
        for _ in range(max(2, samples) + 1):  # the first one warms the stand-in's allocations
            start = time.perf_counter()
            reply = host.cycle(encoded_inputs, True)
            times.append(time.perf_counter() - start)
    harness_s = statistics.median(times[1:])
    peer = getattr(suite, "peer", None)
    wire_s = wire.echo_round_trip_s(reply, samples=samples, request=encoded_inputs) if peer is not None else 0.0
    return {"s": harness_s + wire_s, "harness_s": harness_s, "wire_s": wire_s}
