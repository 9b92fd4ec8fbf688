"""The real published benchmark end to end: ``benchtui run --jobs 2`` over a
scratch copy of ``../shared/published-benchmark/llm_programming_tests``
(scan first, untimed). Prints JSON: wall time of the run, its CPU time (the
whole process tree, user + system) and the load average around it,
per-answer run times, and the verdict matrix.

    python bench/published.py [--no-self-check] [--jobs 2] [--source PATH]

The source folder is never written to: everything happens on a copy.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_SOURCE = REPO.parent / "shared" / "published-benchmark" / "llm_programming_tests"


def benchtui(workbench: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "benchtui", "--workbench", str(workbench), *args],
                          capture_output=True, text=True, env=env, check=False)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--no-self-check", action="store_true", help="skip the answers' own tests and demos")
    p.add_argument("-c", "--challenge", action="append", default=[], help="only this challenge (repeatable)")
    p.add_argument("--quick", action="store_true",
                   help="one demo answer (demo-careful's backwards) instead of the published benchmark, without "
                        "self-checks, no goal asserted: the test suite runs it so the script cannot rot")
    a = p.parse_args()
    quick_tmp = None
    if a.quick:
        quick_tmp = tempfile.TemporaryDirectory(prefix="benchtui-published-quick-")
        a.source = Path(quick_tmp.name) / "bench"
        shutil.copytree(REPO / "models" / "demo-careful" / "backwards", a.source / "careful" / "backwards")
        a.challenge, a.no_self_check = ["backwards"], True
    if not a.source.is_dir():
        print(json.dumps({"error": f"no published benchmark at {a.source}"}))
        raise SystemExit(1)
    with tempfile.TemporaryDirectory(prefix="benchtui-published-") as tmp:
        wb = Path(tmp) / "llm_programming_tests"
        shutil.copytree(a.source, wb, symlinks=True)
        scan = benchtui(wb, "scan", "--json")
        if scan.returncode:
            raise SystemExit(f"scan failed: {scan.stderr.strip()}")
        args = ["run", "--jobs", str(a.jobs), "--json"] + (["--no-self-check"] if a.no_self_check else [])
        args += [arg for cid in a.challenge for arg in ("-c", cid)]
        load_before = os.getloadavg()[0]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        run = benchtui(wb, *args)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        load_after = os.getloadavg()[0]
        if run.returncode not in (0, 1):
            raise SystemExit(f"run failed: {run.stderr.strip()[-500:]}")
        runs = json.loads(run.stdout)["runs"]
    verdicts: dict[str, dict[str, str]] = {}
    for r in runs:
        verdicts.setdefault(r["model"], {})[r["challenge"]] = r["verdict"]
    answered = [r for r in runs if r["verdict"] != "no_answer"]
    slowest = sorted(answered, key=lambda r: -(r.get("duration_s") or 0))[:5]
    print(json.dumps({
        "what": f"benchtui run --jobs {a.jobs}" + (" --no-self-check" if a.no_self_check else "")
                + "".join(f" -c {cid}" for cid in a.challenge) + f" over a scratch copy of {a.source}",
        "cpus": os.cpu_count(),
        "answers": len(answered),
        "wall_s": round(wall, 2),
        # user + system CPU of `benchtui run` and the processes it started, each counted when it is
        # reaped: a process killed with its sandbox's PID namespace is reaped outside this tree,
        # so a run or self-check its time limit stopped is missing part of its CPU here
        "cpu_s": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 2),
        "load_1min": [round(load_before, 2), round(load_after, 2)],
        "per_answer_s_sum": round(sum(r.get("duration_s") or 0 for r in answered), 2),
        "slowest": [{"answer": f"{r['model']}/{r['challenge']}", "s": round(r.get("duration_s") or 0, 2)} for r in slowest],
        "verdicts": verdicts,
    }, indent=2))


if __name__ == "__main__":
    main()
