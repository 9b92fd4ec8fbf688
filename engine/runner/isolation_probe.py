"""Measure what each sandbox layer costs and print it as JSON.

    python -m engine.runner.isolation_probe [--runs 20]

For every layer that works: median and spread of `/bin/true` and of
`python -c pass` inside the layer, against the same commands started
directly (subprocess, no limits). The overhead is what a run pays on top of
the answer's own work; the project goal is under 150 ms.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchtui.runner.sandbox import Limits, probe_layers, run_sandboxed


def _direct_ms(argv: list[str], runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=True)
        samples.append((time.perf_counter() - start) * 1e3)
    return samples


def _sandboxed_ms(argv: list[str], layer: str, runs: int, tmp: Path) -> list[float]:
    work = tmp / "work"
    work.mkdir(exist_ok=True)
    limits = Limits(wall_s=30)
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        res = run_sandboxed(argv, workdir=work, limits=limits, layer=layer,
                            stdout_path=tmp / "out", stderr_path=tmp / "err")
        samples.append((time.perf_counter() - start) * 1e3)
        if res.exit_code != 0:
            raise RuntimeError(f"{layer}: {argv} exited {res.exit_code}: {(tmp / 'err').read_text()[:200]}")
    return samples


def _summary(samples: list[float]) -> dict[str, float]:
    q = statistics.quantiles(samples, n=4) if len(samples) >= 4 else [min(samples), 0, max(samples)]
    return {"median_ms": round(statistics.median(samples), 2), "iqr_ms": round(q[2] - q[0], 2),
            "min_ms": round(min(samples), 2)}


def measure(runs: int = 20) -> dict[str, Any]:
    commands = {"true": ["/bin/true"], "python_pass": [sys.executable, "-c", "pass"]}
    direct = {name: _summary(_direct_ms(argv, runs)) for name, argv in commands.items()}
    layers = {}
    with tempfile.TemporaryDirectory(prefix="benchtui-bench-") as tmp:
        for status in probe_layers():
            if not status.works:
                layers[status.name] = {"works": False, "detail": status.detail}
                continue
            row: dict[str, Any] = {"works": True, "blocks_network": status.blocks_network, "detail": status.detail}
            for name, argv in commands.items():
                stats = _summary(_sandboxed_ms(argv, status.name, runs, Path(tmp)))
                stats["overhead_ms"] = round(stats["median_ms"] - direct[name]["median_ms"], 2)
                row[name] = stats
            layers[status.name] = row
    return {"runs": runs, "direct": direct, "layers": layers}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20)
    print(json.dumps(measure(parser.parse_args().runs), indent=2))


if __name__ == "__main__":
    main()
