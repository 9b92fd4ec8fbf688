"""Cluster runs against local runs, and the store's single writer.

    python bench/cluster.py [--challenges kv,backwards] [--no-self-check] [--jobs 2] [--source PATH] [--writes 400]

1. ``benchtui run --jobs J`` over a scratch copy of the published benchmark
   (``../shared/published-benchmark/llm_programming_tests``; the source is
   never written to), then ``benchtui run --cluster local --jobs J`` over a
   second fresh copy: a Ray instance started on this machine (as many CPUs as
   it has), each answer one Ray task. Prints both wall times, the cluster's
   start-up (connect to first task), the overhead fraction with and without
   that start-up, and whether every verdict matched.
2. The driver's single writer: how many runs per second the store can record
   (each: the claim, one write transaction; the result, one transaction with
   its checks), measured on a scratch store with the real schema.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_SOURCE = REPO.parent / "shared" / "published-benchmark" / "llm_programming_tests"
sys.path.insert(0, str(REPO))


def benchtui(workbench: Path, *args: str, env: dict | None = None) -> tuple[subprocess.CompletedProcess, float, float | None]:
    """(result, wall seconds, seconds from start to the cluster's 'connected' line or None)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "benchtui", "--workbench", str(workbench), *args], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    connected = None
    err_lines: list[str] = []
    out: list[str] = []
    reader = threading.Thread(target=lambda: out.append(proc.stdout.read()), daemon=True)  # both pipes drained at once
    reader.start()
    for line in proc.stderr:
        if connected is None and line.startswith("cluster: "):
            connected = time.perf_counter() - started
        err_lines.append(line)
    proc.wait()
    reader.join()
    out = out[0] if out else ""
    wall = time.perf_counter() - started
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, "".join(err_lines)), wall, connected


def one_run(source: Path, tmp: Path, name: str, args: list[str]) -> dict:
    wb = tmp / name / "llm_programming_tests"
    shutil.copytree(source, wb, symlinks=True)
    scan, _, _ = benchtui(wb, "scan", "--json")
    if scan.returncode:
        raise SystemExit(f"scan failed: {scan.stderr.strip()[-500:]}")
    run, wall, connected = benchtui(wb, *args)
    if run.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(args)} failed ({run.returncode}): {run.stderr.strip()[-1500:]}")
    runs = json.loads(run.stdout)["runs"]
    nodes = sorted({r["node"] for r in runs if r.get("node")})
    return {"wall_s": round(wall, 2), "connected_s": round(connected, 2) if connected is not None else None,
            "runs": len(runs), "nodes": nodes, "verdicts": {f"{r['model']}/{r['challenge']}": r["verdict"] for r in runs},
            "per_answer_s_sum": round(sum(r.get("duration_s") or 0 for r in runs), 2),
            "stderr_tail": run.stderr.strip().splitlines()[-1:] if run.returncode else []}


def store_writes(n: int, checks: int = 10) -> dict:
    """Runs recorded per second by one writer, as the driver records them."""
    from benchtui.runner.orchestrate import claim_run
    from benchtui.store.database import Store, now_iso

    with tempfile.TemporaryDirectory(prefix="benchtui-store-bench-") as tmp, Store(Path(tmp) / "store.db") as store:
        started = time.perf_counter()
        for i in range(n):
            run_id, busy = claim_run(store, {"model": f"m{i % 50}", "challenge": f"c{i}", "status": "running",
                                             "backend": "cpu", "pid": os.getpid(), "started_at": now_iso(),
                                             "seed": i, "files": "{}", "versions": "{}", "message": ""})
            with store.conn:
                store.db["checks"].insert_all([{"run_id": run_id, "position": k, "name": f"check_{k}", "verdict": "pass",
                                                "value": "0.5", "threshold": "1.0", "message": "", "details": "{}"}
                                               for k in range(checks)])
                store.db["runs"].update(run_id, {"status": "done", "verdict": "pass", "finished_at": now_iso(),
                                                 "duration_s": 1.0, "stdout": "x" * 200, "message": ""})
        wall = time.perf_counter() - started
    return {"runs_recorded": n, "checks_per_run": checks, "wall_s": round(wall, 3),
            "runs_per_s": round(n / wall, 1), "transactions_per_s": round(2 * n / wall, 1)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--challenges", help="comma-separated challenge ids: run only these (default: all)")
    p.add_argument("--no-self-check", action="store_true")
    p.add_argument("--writes", type=int, default=400, help="runs to record for the store figure")
    p.add_argument("--rounds", type=int, default=1,
                   help="alternate here / cluster this many times (fresh copies each): on a shared machine, "
                        "the load drifts; the overhead is taken from the medians")
    p.add_argument("--quick", action="store_true",
                   help="one demo answer (demo-careful's backwards) without self-checks, 20 store writes, no goal "
                        "asserted: the test suite runs it (with the cluster extra) so the script cannot rot")
    a = p.parse_args()
    if a.quick:
        quick_tmp = tempfile.TemporaryDirectory(prefix="benchtui-cluster-quick-")
        a.source = Path(quick_tmp.name) / "bench"
        shutil.copytree(REPO / "models" / "demo-careful" / "backwards", a.source / "careful" / "backwards")
        a.challenges, a.no_self_check, a.writes, a.rounds = "backwards", True, 20, 1
    if not a.source.is_dir():
        print(json.dumps({"error": f"no published benchmark at {a.source}"}))
        raise SystemExit(1)
    base = ["run", "--jobs", str(a.jobs), "--json"] + (["--no-self-check"] if a.no_self_check else [])
    for c in (a.challenges or "").split(","):
        if c.strip():
            base += ["-c", c.strip()]
    locals_, clusters = [], []
    for _i in range(a.rounds):
        with tempfile.TemporaryDirectory(prefix="benchtui-cluster-bench-") as tmp:
            tmp = Path(tmp)
            locals_.append(one_run(a.source, tmp, "local", base + ["--no-cluster"]))
            clusters.append(one_run(a.source, tmp, "cluster", base + ["--cluster", "local"]))
    median = lambda xs: sorted(xs)[len(xs) // 2]  # noqa: E731
    local = min(locals_, key=lambda r: abs(r["wall_s"] - median([x["wall_s"] for x in locals_])))
    cluster = min(clusters, key=lambda r: abs(r["wall_s"] - median([x["wall_s"] for x in clusters])))
    startup = cluster["connected_s"] or 0.0
    same = all(r["verdicts"] == locals_[0]["verdicts"] for r in locals_ + clusters)
    print(json.dumps({
        "what": f"benchtui run over the published benchmark: --jobs {a.jobs} here vs --cluster local (Ray on this machine)",
        "challenges": a.challenges or "all",
        "self_check": not a.no_self_check,
        "cpus": os.cpu_count(),
        "load_avg_1m_at_end": round(os.getloadavg()[0], 2),
        "rounds": a.rounds,
        "local_walls_s": [r["wall_s"] for r in locals_],
        "cluster_walls_s": [r["wall_s"] for r in clusters],
        "cluster_startup_s": [r["connected_s"] for r in clusters],
        "local": {k: v for k, v in local.items() if k != "verdicts"},
        "cluster": {k: v for k, v in cluster.items() if k != "verdicts"},
        "overhead_fraction": round((cluster["wall_s"] - local["wall_s"]) / local["wall_s"], 3),
        "overhead_fraction_after_startup": round((cluster["wall_s"] - startup - local["wall_s"]) / local["wall_s"], 3),
        "same_verdicts": same,
        "verdict_differences": {} if same else {k: [r["verdicts"].get(k) for r in locals_ + clusters]
                                                for k in sorted(set().union(*(r["verdicts"] for r in locals_ + clusters)))
                                                if len({r["verdicts"].get(k) for r in locals_ + clusters}) > 1},
        "store": store_writes(a.writes),
    }, indent=2))


if __name__ == "__main__":
    main()
