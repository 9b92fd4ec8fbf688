"""What the module harness's trusted time resolves on this machine's CPU.

Writes a small KernelBench-shaped challenge (a Linear then a ReLU) and right
answers to it that spend about 1 ms, 10 ms and 100 ms a call in their forward,
two of each kind (``--kind``): ``spin`` keeps its CPU busy for that long (a
loop on the clock: as a CPU kernel computes) and ``sleep`` sleeps (its CPU
given away, the process woken when the time is up: on a VM or a busy machine
that wake-up, and the caches others cooled meanwhile, land on the harness's
work after the forward, which no empty window reproduces). Runs each through
the module harness on the CPU (the local path: the checks here, the answer in
a child process), and prints JSON, per answer:

- ``trusted_ms``: the checker's figure (its clock around windows of whole
  cycles, less the empty window, per call; null when at or below the
  resolution);
- ``answer_forward_median_ms``: the answer's own forward, timed in its
  process (its word, shown beside);
- ``resolution_ms`` and ``calls_per_window``: the empty window's jitter per
  call, and how many calls a window took;
- ``empty_cycle_ms``: what was subtracted per window;
- ``off_clock``: the answer's CPU time while no call was in flight (the
  kernel's count, read around every request of the shape's timing) and its
  allowance; and, once, ``cpu_time_read_us``: what one such read costs here
  (the local path reads /proc directly; a sandboxed run asks the
  orchestrator over a socket), the accounting's cost outside the clock;
- ``run_queue_wait``: what the windows and the empty window waited for a
  CPU per call (the scheduler's count; the checker's share beside it), the
  gap flag's floor, and once, ``run_queue_wait_read_us``: what its reads
  cost, outside the clock. On a busy machine this is where a small call's
  trusted time goes past its forward.

With ``--large-mib N`` (and in ``--quick``, the fast one alone at 1 MiB under a cap of 4 MiB),
``large_inputs``: a fast answer on large inputs (KernelBench's LeakyReLU at
64 rows of N MiB in all, an answer that hands back its own input where no
value is negative: right on every input, no work on the deck's) and the
honest one, each with its verdict, trusted time (or why there is none),
calls a window and what limited them, and the checker's memory: what the
fullest window held (counted by the checker) and its resident memory then,
and its peak resident memory (``ru_maxrss``: this process's, which ran the
checker).

    python bench/timing_resolution.py [--windows 10] [--ms 1 10 100] [--kind spin sleep] [--large-mib 64]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

REFERENCE = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.relu(self.gemm(x))


def get_inputs():
    return [torch.rand(16, 64)]


def get_init_inputs():
    return [64, 32]
'''

WAITS = {
    "sleep": "time.sleep({seconds!r})",
    "spin": "until = time.perf_counter() + {seconds!r}\n        while time.perf_counter() < until:\n            pass",
}

ANSWER = '''import time

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)

    def forward(self, x):
        {wait}
        return torch.clamp_min(torch.addmm(self.gemm.bias, x, self.gemm.weight.t()), 0.0)
'''

TOML = '''id = "timing_resolution"
title = "Gemm_ReLU (timing resolution)"
difficulty = "EASY"
language = "python"
backends = ["cpu"]

[thresholds]
timed_calls = {windows}
published_warmup = 1
published_calls = 3
build_timeout_s = 120

[module]
deck = "kernelbench"
problem = "level2/timing_resolution"
answer_file = "solution.py"
answer_class = "ModelNew"
weights = "seeded"
seeds = [42]
num_correct_trials = 1
num_perf_trials = 100
regime = "compute"
precision = "fp32"
flops_formula = "2 * 16 * 64 * 32"
'''


# KernelBench level 1's 20_LeakyReLU at 64 rows of {cols} values
LARGE_REFERENCE = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, negative_slope: float = 0.01):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x):
        return torch.nn.functional.leaky_relu(x, negative_slope=self.negative_slope)


def get_inputs():
    return [torch.rand(64, {cols})]


def get_init_inputs():
    return []
'''

LARGE_ANSWERS = {
    "returns_its_input": '''import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, negative_slope: float = 0.01):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x):
        if bool((x >= 0).all()):
            return x
        return torch.nn.functional.leaky_relu(x, negative_slope=self.negative_slope)
''',
    "honest": '''import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, negative_slope: float = 0.01):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x):
        return torch.nn.functional.leaky_relu(x, negative_slope=self.negative_slope)
''',
}

LARGE_TOML = '''id = "large_inputs"
title = "LeakyReLU (large inputs)"
difficulty = "EASY"
language = "python"
backends = ["cpu"]

[thresholds]
timed_calls = {windows}
published_warmup = 1
published_calls = 3
build_timeout_s = 120
{cap}
[module]
deck = "kernelbench"
problem = "level1/20_LeakyReLU"
answer_file = "solution.py"
answer_class = "ModelNew"
weights = "seeded"
seeds = [42]
num_correct_trials = 1
num_perf_trials = 100
regime = "memory"
precision = "fp32"
'''


def write_large(root: Path, windows: int, mib: float, cap_bytes: int | None,
                names: list[str]) -> tuple[Path, dict[str, Path]]:
    """The LeakyReLU challenge at ``mib`` MiB a call (``cap_bytes``: its window cap, else the default) and its answers."""
    challenge = root / "challenges" / "large_inputs"
    challenge.mkdir(parents=True)
    (challenge / "conformance.py").write_text("from benchtui.verify.module.suite import run  # noqa: F401\n")
    (challenge / "PROMPT.md").write_text("# large_inputs\n\nWrite solution.py.\n")
    (challenge / "reference.py").write_text(LARGE_REFERENCE.format(cols=max(1, int(mib * (1 << 20) / 4 / 64))))
    cap = f"window_bytes_max = {cap_bytes}\n" if cap_bytes else ""
    (challenge / "challenge.toml").write_text(LARGE_TOML.format(windows=windows, cap=cap))
    answers = {}
    for name in names:
        folder = root / "large_answers" / name
        folder.mkdir(parents=True)
        (folder / "solution.py").write_text(LARGE_ANSWERS[name])
        answers[name] = folder
    return root / "challenges", answers


def large_inputs(root: Path, windows: int, mib: float, cap_bytes: int | None, names: list[str]) -> dict:
    """Each large-input answer's verdict, figure and the checker's memory (see the module's doc)."""
    from benchtui.runner.local import run_local

    challenges, answers = write_large(root, windows, mib, cap_bytes, names)
    rows = {}
    for name, folder in answers.items():
        start = time.perf_counter()
        result = run_local("large_inputs", folder, challenges_dir=challenges, seed=int.from_bytes(os.urandom(8), "little"))
        checks = {c["name"]: c for c in result["checks"]}
        t = (checks.get("time:shape0") or {}).get("details") or {}
        own = t.get("answer_side_ms") or []
        rows[name] = {
            "verdict": result["verdict"], "trusted_ms": t.get("trusted_ms"),
            "answer_forward_median_ms": statistics.median(own) if own else None,
            "resolution_ms": t.get("resolution_ms"), "trusted_samples_ms": t.get("trusted_samples_ms"),
            "empty_cycle_ms": _ms((t.get("empty_cycle") or {}).get("s")) if t else None,
            "calls_per_window": t.get("calls_per_window"), "window_sizing": t.get("window_sizing"),
            "no_figure": t.get("no_figure"), "checker_window_memory": t.get("checker_window_memory"),
            "checker_peak_rss_mib": t.get("checker_peak_rss_mib"),
            "message": (checks.get("time:shape0") or {}).get("message"),
            "load_average_1min": os.getloadavg()[0], "wall_s": round(time.perf_counter() - start, 1),
        }
    return {"mib_a_call": mib, "window_bytes_max": cap_bytes or "default", "answers": rows}


def write(root: Path, windows: int, ms_list: list[float],
          kinds: tuple[str, ...] = ("sleep",)) -> tuple[Path, dict[tuple[str, float], Path]]:
    challenge = root / "challenges" / "timing_resolution"
    challenge.mkdir(parents=True)
    (challenge / "conformance.py").write_text("from benchtui.verify.module.suite import run  # noqa: F401\n")
    (challenge / "PROMPT.md").write_text("# timing_resolution\n\nWrite solution.py.\n")
    (challenge / "reference.py").write_text(REFERENCE)
    (challenge / "challenge.toml").write_text(TOML.format(windows=windows))
    answers = {}
    for kind in kinds:
        for ms in ms_list:
            folder = root / "answers" / f"{kind}_{ms:g}ms"
            folder.mkdir(parents=True)
            wait = WAITS[kind].format(seconds=ms / 1e3)
            (folder / "solution.py").write_text(ANSWER.replace("{wait}", wait))
            answers[(kind, ms)] = folder
    return root / "challenges", answers


def cpu_read_us(reads: int = 2000) -> float:
    """Median microseconds of one read of a process's CPU time (the off-the-clock accounting's read)."""
    from benchtui.verify.monitor import ProcMonitor

    monitor, times = ProcMonitor(os.getpid()), []
    for _ in range(reads):
        start = time.perf_counter()
        monitor.cpu_ns()
        times.append(time.perf_counter() - start)
    return round(statistics.median(times) * 1e6, 2)


def wait_read_us(reads: int = 2000) -> dict:
    """Median microseconds of one read of the run-queue wait, as the gap flag's floor reads it
    around each timed window: the answer's main thread (the local path's read; a sandboxed run
    asks the orchestrator over a socket) and the checker's own threads."""
    from benchtui.verify.module.contention import own_wait
    from benchtui.verify.monitor import ProcMonitor

    monitor, out = ProcMonitor(os.getpid()), {}
    for name, read in (("answer_main_thread", monitor.wait_ns), ("checker_threads", own_wait)):
        times = []
        for _ in range(reads):
            start = time.perf_counter()
            read()
            times.append(time.perf_counter() - start)
        out[name] = round(statistics.median(times) * 1e6, 2)
    return out


def _ms(seconds):
    """Seconds as milliseconds; a figure the check could not give (too few windows
    for a spread: stored as text) as it is."""
    return seconds * 1e3 if isinstance(seconds, (int, float)) else seconds


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--windows", type=int, default=10, help="timed windows per answer (default 10)")
    p.add_argument("--ms", type=float, nargs="+", default=[1.0, 10.0, 100.0], help="each answer's time a call")
    p.add_argument("--kind", nargs="+", choices=sorted(WAITS), default=["spin", "sleep"],
                   help="how each answer spends its time: spin (busy, as a CPU kernel) and/or sleep")
    p.add_argument("--quick", action="store_true", help="small sizes, one round, no goal asserted: the test suite runs it so the script cannot rot")
    p.add_argument("--large-mib", type=float, default=None,
                   help="also run a fast and an honest answer on inputs of this many MiB a call (the deck's: 64)")
    a = p.parse_args()
    cap_bytes = None
    if a.quick:
        a.windows, a.ms, a.kind = 2, [1.0], ["spin"]
        # the large-input path at 1 MiB a call, its window capped at one call's bytes (4 MiB)
        a.large_mib, cap_bytes = 1.0, 4 << 20
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from benchtui.runner.local import run_local

    rows = []
    with tempfile.TemporaryDirectory(prefix="benchtui-timing-resolution-") as tmp:
        challenges, answers = write(Path(tmp), a.windows, a.ms, tuple(a.kind))
        for (kind, ms), folder in answers.items():
            start = time.perf_counter()
            result = run_local("timing_resolution", folder, challenges_dir=challenges, seed=int.from_bytes(os.urandom(8), "little"))
            checks = {c["name"]: c for c in result["checks"]}
            t = (checks.get("time:shape0") or {}).get("details") or {}
            own = t.get("answer_side_ms") or []
            trusted = t.get("trusted_ms")
            forward = statistics.median(own) if own else None
            rows.append({
                "answer_ms_a_call": ms, "kind": kind, "verdict": result["verdict"],
                "trusted_ms": trusted, "answer_forward_median_ms": forward,
                "trusted_over_forward": trusted / forward if trusted and forward else None,
                "resolution_ms": t.get("resolution_ms"), "calls_per_window": t.get("calls_per_window"),
                "windows": (t.get("trusted") or {}).get("windows"),
                "empty_cycle_ms": _ms((t.get("empty_cycle") or {}).get("s", 0.0)) if t else None,
                "empty_window_served_by": (t.get("empty_cycle") or {}).get("served_by"),
                "trusted_iqr_ms": _ms((t.get("trusted") or {}).get("iqr_s", 0.0)) if t else None,
                "off_clock": t.get("off_clock"),
                "run_queue_wait": t.get("run_queue_wait"),
                "message": (checks.get("time:shape0") or {}).get("message"),
                "wall_s": round(time.perf_counter() - start, 1),
            })
        # the quick mode runs the fast answer alone (the honest one is the full run's comparison)
        names = ["returns_its_input"] if a.quick else list(LARGE_ANSWERS)
        large = large_inputs(Path(tmp) / "large", a.windows, a.large_mib, cap_bytes, names) if a.large_mib else None
    doc = {"device": "cpu", "windows": a.windows, "load_average_1min": os.getloadavg()[0],
           "cpu_time_read_us": cpu_read_us(), "run_queue_wait_read_us": wait_read_us(), "answers": rows}
    if large is not None:
        doc["large_inputs"] = large
    print(json.dumps(doc, indent=2))
    verdicts = [r["verdict"] for r in rows] + [r["verdict"] for r in (large or {}).get("answers", {}).values()]
    return 0 if all(v == "pass" for v in verdicts) else 1


if __name__ == "__main__":
    raise SystemExit(main())
