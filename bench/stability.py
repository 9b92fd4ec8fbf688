"""Verdict stability and threshold margins on the real published benchmark.

Runs ``benchtui run --jobs 2 --no-self-check`` N times over one scratch copy
of ``../shared/published-benchmark/llm_programming_tests``, each run with a
fresh secret seed, and prints JSON:

- ``stable``: whether every answer got the same verdict in every run (the
  runs that differ are listed under ``unstable``), with each cell's verdict
  and requirement coverage (``covers``);
- ``margins``: for each check that compares a measured value with a
  threshold (value <= threshold passes), per answer: the values over the
  runs, the smallest margin (threshold - value, relative to the threshold),
  the noise (max - min of the values, relative to the threshold), and
  ``within_noise`` when the margin's size is not larger than the noise
  (a pass or a fail that could flip with it);
- the wall time of each run.

    python bench/stability.py [--runs 5] [--jobs 2] [--source PATH] [-c CHALLENGE ...]

``-c`` (repeatable) restricts every run to those challenges, as
``benchtui run -c`` does.

The source folder is never written to.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_SOURCE = REPO.parent / "shared" / "published-benchmark" / "llm_programming_tests"
# checks whose value is a size to stay under: everything else with a numeric
# threshold is an error against a tolerance, the same direction
RATED = {"pass", "fail"}


def benchtui(workbench: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "benchtui", "--workbench", str(workbench), *args],
                          capture_output=True, text=True, env=env, check=False)


def number(x):
    if isinstance(x, bool) or x is None:
        return None
    if isinstance(x, (int, float)) and math.isfinite(x):
        return float(x)
    return None


def margins(all_runs: list[list[dict]]) -> list[dict]:
    values: dict[tuple[str, str, str], list[float]] = {}
    limits: dict[tuple[str, str, str], float] = {}
    floors: set[tuple[str, str, str]] = set()
    for runs in all_runs:
        for r in runs:
            for c in r["checks"]:
                v, t = number(c.get("value")), number(c.get("threshold"))
                if c["verdict"] not in RATED or v is None or t is None or t <= 0:
                    continue
                key = (r["model"], r["challenge"], c["name"])
                values.setdefault(key, []).append(v)
                limits[key] = t
                # a pass above its threshold or a fail under it: the threshold is a floor
                if (c["verdict"] == "pass") == (v > t):
                    floors.add(key)
    out = []
    for key, vals in sorted(values.items()):
        t = limits[key]
        if key in floors and min(vals) > 0:
            # a floor on a change (smoke_model_sees_order: 1e-5) sees values spread over decades:
            # margin and noise in decades, not in multiples of a tiny threshold
            margin, noise, scale = math.log10(min(vals) / t), math.log10(max(vals) / min(vals)), "log10"
        else:
            sign = -1.0 if key in floors else 1.0
            margin = min(sign * (t - v) / t for v in vals)
            noise, scale = (max(vals) - min(vals)) / t, "relative to the threshold"
        out.append({"answer": f"{key[0]}/{key[1]}", "check": key[2], "threshold": t,
                    "direction": "at_least" if key in floors else "at_most", "scale": scale,
                    "values": [float(f"{v:.4g}") for v in vals], "margin": round(margin, 4),
                    "noise": round(noise, 4), "runs": len(vals),
                    # near the threshold on either side: a verdict that could flip with the noise
                    "within_noise": bool(abs(margin) <= noise) if len(vals) > 1 else None})
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("-c", "--challenge", action="append", default=[],
                   help="only this challenge (repeatable; default all)")
    p.add_argument("--quick", action="store_true",
                   help="two runs of one demo answer (demo-careful's backwards), no goal asserted: the test suite "
                        "runs it so the script cannot rot")
    a = p.parse_args()
    if a.quick:
        quick_tmp = tempfile.TemporaryDirectory(prefix="benchtui-stability-quick-")
        a.source = Path(quick_tmp.name) / "bench"
        shutil.copytree(REPO / "models" / "demo-careful" / "backwards", a.source / "careful" / "backwards")
        a.runs, a.challenge = 2, ["backwards"]
    if not a.source.is_dir():
        print(json.dumps({"error": f"no published benchmark at {a.source}"}))
        raise SystemExit(1)
    all_runs, walls = [], []
    with tempfile.TemporaryDirectory(prefix="benchtui-stability-") as tmp:
        wb = Path(tmp) / "llm_programming_tests"
        shutil.copytree(a.source, wb, symlinks=True)
        scan = benchtui(wb, "scan", "--json")
        if scan.returncode:
            raise SystemExit(f"scan failed: {scan.stderr.strip()}")
        for _ in range(a.runs):
            started = time.perf_counter()
            only = [arg for cid in a.challenge for arg in ("-c", cid)]
            run = benchtui(wb, "run", "--jobs", str(a.jobs), "--json", "--no-self-check", *only)
            walls.append(round(time.perf_counter() - started, 1))
            if run.returncode not in (0, 1):
                raise SystemExit(f"run failed: {run.stderr.strip()[-500:]}")
            all_runs.append([r for r in json.loads(run.stdout)["runs"] if r["verdict"] != "no_answer"])
    cells: dict[str, list[str]] = {}
    covers: dict[str, list[str]] = {}
    for runs in all_runs:
        for r in runs:
            cells.setdefault(f"{r['model']}/{r['challenge']}", []).append(r["verdict"])
            covers.setdefault(f"{r['model']}/{r['challenge']}", []).append(r.get("covers") or "")
    unstable = {cell: v for cell, v in cells.items() if len(set(v)) > 1}
    durations: dict[str, list[float]] = {}
    for runs in all_runs:
        for r in runs:
            durations.setdefault(f"{r['model']}/{r['challenge']}", []).append(round(r.get("duration_s") or 0, 1))
    slowest = sorted(durations.items(), key=lambda kv: -max(kv[1]))[:6]
    table = margins(all_runs)
    print(json.dumps({
        "what": f"{a.runs} runs of benchtui run --jobs {a.jobs} --no-self-check"
                + "".join(f" -c {cid}" for cid in a.challenge)
                + f" over a scratch copy of {a.source}, fresh seeds",
        "runs": a.runs, "answers": len(cells), "stable": not unstable, "unstable": unstable,
        "verdicts": {cell: {"verdict": v[0] if len(set(v)) == 1 else v, "covers": sorted(set(covers[cell]))}
                     for cell, v in sorted(cells.items())},
        "wall_s": walls,
        "slowest_answers_s": dict(slowest),
        "margins_within_noise": [m for m in table if m["within_noise"]],
        "margins": table,
    }, indent=1))


if __name__ == "__main__":
    main()
