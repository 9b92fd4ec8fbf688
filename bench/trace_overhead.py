"""What the module harness's dispatcher trace costs a CPU answer's call.

Builds the answer host (engine/verify/module/host.py) in this process for a
few pure-torch modules, from a handful of ops to a few hundred a call, and
times its whole cycle (staging, the forward, the output's fetch) without and
with the trace (``cycle(slot, trace=True)``: the aten ops recorded by a torch
dispatch mode), interleaved, and prints JSON per module: the median cycle in
microseconds each way, the difference, the aten ops a call dispatched and the
cost per op. Timed calls are never traced; this is what each traced
(untimed) call adds to a run.

    python bench/trace_overhead.py [--calls 300]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
from benchtui.verify.module import tensors as T  # noqa: E402
from benchtui.verify.module.host import ModuleHost, OpTrace  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402


class Linear(nn.Module):  # KernelBench level 2's Gemm then ReLU
    def __init__(self, width):
        super().__init__()
        self.gemm = nn.Linear(width, width)

    def forward(self, x):
        return torch.relu(self.gemm(x))


class Mlp(nn.Module):  # many small ops: the trace's cost is per op
    def __init__(self, width, depth=32):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(width, width) for _ in range(depth))

    def forward(self, x):
        for layer in self.layers:
            x = torch.nn.functional.gelu(layer(x)) + x
        return x


class Count(TorchDispatchMode):
    """How many aten ops a forward dispatches."""

    ops = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops += 1
        return func(*args, **(kwargs or {}))


CASES = [("linear_relu 16x64", Linear, 64, (16, 64)), ("linear_relu 256x1024", Linear, 1024, (256, 1024)),
         ("mlp 32 layers 16x64", Mlp, 64, (16, 64))]


def measure(cls, width: int, shape: tuple, calls: int) -> dict:
    host = ModuleHost(cls, "cpu", 60.0, 0.0, cache=None)
    host.build(T.encode_tree([width]), seed=0)
    host.share(T.encode_tree([torch.randn(*shape)]), 0)
    for _ in range(10):
        host.cycle(0, False), host.cycle(0, True)
    plain, traced = [], []
    for _ in range(calls):
        for trace, into in ((False, plain), (True, traced)):
            began = time.perf_counter()
            host.cycle(0, trace)
            into.append((time.perf_counter() - began) * 1e6)
    with OpTrace(torch, kernels=False) as seen, torch.no_grad():
        host._model(*host._inputs)
    with Count() as counted, torch.no_grad():
        host._model(*host._inputs)
    ops = counted.ops
    p, t = statistics.median(plain), statistics.median(traced)
    return {"cycle_us": round(p, 1), "traced_cycle_us": round(t, 1), "added_us": round(t - p, 1),
            "added_fraction": round((t - p) / p, 3), "aten_ops_per_forward": ops,
            "distinct_ops": len(seen.ops), "added_us_per_op": round((t - p) / max(ops, 1), 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--quick", action="store_true", help="small sizes, one round, no goal asserted: the test suite runs it so the script cannot rot")
    args = parser.parse_args()
    if args.quick:
        args.calls = 10
    out = {"torch": torch.__version__, "threads": torch.get_num_threads(), "calls": args.calls}
    for name, cls, width, shape in CASES:
        out[name] = measure(cls, width, shape, args.calls)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
