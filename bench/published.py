"""The real published benchmark end to end: ``benchtui run --jobs 2`` over a
scratch copy of ``../shared/published-benchmark/llm_programming_tests``
(scan first, untimed). Prints JSON: wall time of the run, its CPU time (the
whole process tree, user + system) and the load average around it,
per-answer run times, and the verdict matrix.

    python bench/published.py [--no-self-check] [--jobs 2] [--source PATH] [-c CHALLENGE] [--per-answer]

The CPU time counts every process the run started, those its sandbox killed
included: this script makes itself their reaper (``PR_SET_CHILD_SUBREAPER``),
so a sandboxed process orphaned when its sandbox's helper is killed is
reaped here, its time with it, instead of by the system's init.
``--per-answer`` runs each answer alone (``--jobs 1``, one ``benchtui run``
each, after the batch) and prints each one's CPU time and verdict.

The source folder is never written to: everything happens on a copy.
"""
from __future__ import annotations

import argparse
import ctypes
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


PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h


def adopt_orphans() -> bool:
    """Make this process the reaper of every orphan below it (Linux): a process whose
    parent dies (a sandbox's helper killed at a run's end) is handed here rather than to
    init, so its CPU time reaches this process's RUSAGE_CHILDREN once :func:`reap_orphans`
    waits for it. False where the call is refused or absent."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def reap_orphans(wait_s: float = 5.0) -> int:
    """Wait for every adopted orphan that has ended, for up to ``wait_s`` for those still
    ending (a killed sandbox's processes die a moment after its helper); how many."""
    reaped, deadline = 0, time.monotonic() + wait_s
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:  # none left
            return reaped
        if pid:
            reaped += 1
        elif time.monotonic() > deadline:
            return reaped
        else:
            time.sleep(0.05)


def cpu_of_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


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
    p.add_argument("--per-answer", action="store_true",
                   help="then run each answer alone (--jobs 1) and print its CPU time and verdict")
    p.add_argument("--quick", action="store_true",
                   help="one demo answer (demo-careful's backwards) instead of the published benchmark, without "
                        "self-checks, --per-answer, no goal asserted: the test suite runs it so the script cannot rot")
    a = p.parse_args()
    quick_tmp = None
    if a.quick:
        quick_tmp = tempfile.TemporaryDirectory(prefix="benchtui-published-quick-")
        a.source = Path(quick_tmp.name) / "bench"
        shutil.copytree(REPO / "models" / "demo-careful" / "backwards", a.source / "careful" / "backwards")
        a.challenge, a.no_self_check, a.per_answer = ["backwards"], True, True
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
        adopted = adopt_orphans()
        load_before = os.getloadavg()[0]
        before = cpu_of_children()
        started = time.perf_counter()
        run = benchtui(wb, *args)
        wall = time.perf_counter() - started
        orphans = reap_orphans()
        cpu = cpu_of_children() - before
        load_after = os.getloadavg()[0]
        if run.returncode not in (0, 1):
            raise SystemExit(f"run failed: {run.stderr.strip()[-500:]}")
        runs = json.loads(run.stdout)["runs"]
        alone = per_answer(wb, runs, a.no_self_check) if a.per_answer else None
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
        # user + system CPU of `benchtui run` and every process it started, those its sandboxes
        # killed included (adopted and reaped here: `orphans_reaped`); without the adoption
        # (`cpu_counts_orphans` false) a killed sandbox's processes are missing from it
        "cpu_s": round(cpu, 2),
        "cpu_counts_orphans": adopted,
        "orphans_reaped": orphans,
        "load_1min": [round(load_before, 2), round(load_after, 2)],
        "per_answer_s_sum": round(sum(r.get("duration_s") or 0 for r in answered), 2),
        "slowest": [{"answer": f"{r['model']}/{r['challenge']}", "s": round(r.get("duration_s") or 0, 2)} for r in slowest],
        "verdicts": verdicts,
        **({"per_answer": alone} if alone is not None else {}),
    }, indent=2))


def per_answer(wb: Path, runs: list[dict], no_self_check: bool) -> list[dict]:
    """Each answered pair run again alone: its CPU time (the whole tree, `benchtui run`'s
    own start-up included), wall time, load and verdict, slowest first."""
    out = []
    for r in runs:
        if r["verdict"] == "no_answer":
            continue
        load = os.getloadavg()[0]
        before, started = cpu_of_children(), time.perf_counter()
        got = benchtui(wb, "run", "--jobs", "1", "--json", "-m", r["model"], "-c", r["challenge"],
                       *(["--no-self-check"] if no_self_check else []))
        wall = time.perf_counter() - started
        reap_orphans()
        verdict = json.loads(got.stdout)["runs"][0]["verdict"] if got.returncode in (0, 1) else f"exit {got.returncode}"
        out.append({"answer": f"{r['model']}/{r['challenge']}", "cpu_s": round(cpu_of_children() - before, 2),
                    "wall_s": round(wall, 2), "load_1min": round(load, 2), "verdict": verdict})
    return sorted(out, key=lambda x: -x["cpu_s"])


if __name__ == "__main__":
    main()
