"""Wall time of `benchtui audit` on a workbench that has been run.

    python bench/audit.py --workbench PATH [--jobs 2] [--mutants N] [-c CHALLENGE]... [--fresh]

Runs ``benchtui audit --json`` on PATH (a scratch copy of the published
benchmark after ``benchtui run``, or the demo workbench copy) and prints JSON:
the wall time, how many mutants ran, how many the reached lines offered in
all (before the ``--mutants`` cap), seconds per mutant, the extrapolated
wall time of auditing every mutant on the same jobs, and the per-challenge
scores. ``--fresh`` ignores the cache (a cold audit).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--workbench", type=Path, help="a workbench that has been run (--quick: a scratch one)")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--mutants", type=int)
    p.add_argument("-c", "--challenge", action="append", default=[])
    p.add_argument("--fresh", action="store_true")
    p.add_argument("--quick", action="store_true",
                   help="one mutant of one demo answer (demo-careful's backwards, run first), no goal asserted: the "
                        "test suite runs it so the script cannot rot")
    a = p.parse_args()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    quick_tmp = None
    if a.quick:
        quick_tmp = tempfile.TemporaryDirectory(prefix="benchtui-audit-quick-")
        a.workbench = Path(quick_tmp.name) / "bench"
        shutil.copytree(REPO / "models" / "demo-careful" / "backwards", a.workbench / "careful" / "backwards")
        a.mutants, a.challenge = 1, ["backwards"]
        for argv in (["scan"], ["run", "-c", "backwards", "--no-self-check"]):
            subprocess.run([sys.executable, "-m", "benchtui", "--workbench", str(a.workbench), *argv],
                           capture_output=True, env=env, check=argv[0] == "scan")
    elif a.workbench is None:
        p.error("--workbench is needed (or --quick)")
    args = ["--workbench", str(a.workbench), "audit", "--json", "--jobs", str(a.jobs)]
    args += ["--mutants", str(a.mutants)] if a.mutants else []
    args += ["--fresh"] if a.fresh else []
    for c in a.challenge:
        args += ["-c", c]
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "benchtui", *args], capture_output=True, text=True, env=env, check=False)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        print(json.dumps({"error": proc.stderr.strip().splitlines()[-1:] or proc.returncode}))
        raise SystemExit(1)
    report = json.loads(proc.stdout)["challenges"]
    cached = sum("(cached)" in line for line in proc.stderr.splitlines() if line.startswith("["))
    ran = sum(c["mutants"] for c in report)
    available = sum(a["available"] or 0 for c in report for a in c["answers"])
    fresh_ran = max(ran - cached, 0)
    per_mutant = wall / fresh_ran if fresh_ran else None
    print(json.dumps({
        "workbench": str(a.workbench), "jobs": a.jobs, "mutants_cap_per_answer": a.mutants,
        "wall_s": round(wall, 1), "mutants_run": ran, "mutants_from_cache": cached,
        "mutants_available": available,
        "wall_s_per_mutant": round(per_mutant, 2) if per_mutant else None,
        "extrapolated_wall_s_all_available": round(per_mutant * available, 0) if per_mutant else None,
        "answers": sum(len(c["answers"]) for c in report),
        "challenges": {c["challenge"]: {"score": c["score"], "killed": c["killed"], "survived": c["survived"],
                                        "likely_equivalent": c["equivalent"], "mutants": c["mutants"]} for c in report},
    }, indent=2))


if __name__ == "__main__":
    main()
