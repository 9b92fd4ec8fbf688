"""Engine figures, printed as JSON:

- sandbox overhead per run: a run's wall time minus the child's own work
  (the child reports how long conformance took), per isolation layer;
- a full demo-matrix run with --jobs 1 and --jobs 2 (goal: jobs 2 < 0.6x jobs 1);
- the timer's self-consistency: the reference timed against itself
  (goal: speedup within 0.9-1.1).

    python bench/engine.py [--skip-matrix]
"""
from __future__ import annotations

import argparse
import json
import shutil
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
from benchtui.runner import sandbox  # noqa: E402
from benchtui.runner.orchestrate import run_answers  # noqa: E402
from benchtui.store.database import Store  # noqa: E402
from benchtui.verify.binding import load_module  # noqa: E402
from benchtui.verify.timing.clock import time_pair  # noqa: E402
from benchtui.workbench.layout import find_workbench  # noqa: E402
from benchtui.workbench.scan import scan_workbench  # noqa: E402


def make_workbench(tmp: Path) -> Path:
    root = tmp / "wb"
    shutil.copytree(REPO / "models", root / "models")
    shutil.copytree(REPO / "challenges", root / "challenges")
    return root


def sandbox_overhead(tmp: Path, n: int = 10) -> dict:
    """Bare process start inside each layer vs outside, and the per-run
    overhead of the whole pipeline on a small answer."""
    out = {}
    py = [sys.executable, "-c", "pass"]
    work = tmp / "sb"
    work.mkdir()
    direct = []
    import subprocess

    for _ in range(n):
        t = time.perf_counter()
        subprocess.run(py, check=True)
        direct.append(time.perf_counter() - t)
    out["python_-c_pass_direct_ms"] = round(statistics.median(direct) * 1e3, 2)
    for status in sandbox.probe_layers():
        if not status.works:
            out[f"{status.name}_python_ms"] = None
            continue
        samples = []
        for _ in range(n):
            res = sandbox.run_sandboxed(py, workdir=work, limits=sandbox.Limits(wall_s=30), layer=status.name,
                                        stdout_path=tmp / "o.txt", stderr_path=tmp / "e.txt")
            samples.append(res.wall_s)
        out[f"{status.name}_python_ms"] = round(statistics.median(samples) * 1e3, 2)
        out[f"{status.name}_overhead_ms"] = round((statistics.median(samples) - statistics.median(direct)) * 1e3, 2)
    return out


def pipeline_overhead(root: Path, model: str = "demo-careful", challenge: str = "backwards", n: int = 5) -> dict:
    """A whole sandboxed run (scratch copy, hashes, sandbox, store writes)
    against the same child process started directly, without any of that:
    the difference is what benchtui adds over the answer's own work."""
    import subprocess

    wb = find_workbench(str(root), None, Path.cwd())
    with Store(wb.store_path) as store:
        scan_workbench(wb, store)
    ch = wb.challenges[challenge]
    runs, direct = [], []
    for i in range(n):
        events = run_answers(wb, [(model, challenge)], self_check=False, seed=1000 + i)
        with Store(wb.store_path) as store:
            runs.append(store.db["runs"].get(events[0].run_id)["duration_s"])
        with tempfile.TemporaryDirectory() as tmp:
            # the same two processes (checker and answer server, a socket between them), no sandbox
            work = Path(tmp) / "answer"
            shutil.copytree(root / "models" / model / challenge, work)
            ours, theirs = socket.socketpair()
            job = {"challenge_id": challenge, "challenge_dir": str(ch.path), "answer_dir": str(work), "model": model,
                   "seed": 1000 + i, "backend": "cpu", "thresholds": ch.thresholds,
                   "forbidden_imports": list(ch.forbidden_imports), "adapter_path": None,
                   "results_path": str(Path(tmp) / "results.jsonl"), "answer_fd": ours.fileno()}
            (Path(tmp) / "job.json").write_text(json.dumps(job))
            env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "OPENBLAS_NUM_THREADS": "1"}
            t = time.perf_counter()
            server = subprocess.Popen([sys.executable, "-m", "benchtui.runner.answer_server", str(theirs.fileno()), str(work)],
                                      cwd=work, env=env, pass_fds=[theirs.fileno()])
            child = subprocess.run([sys.executable, "-m", "benchtui.runner.child", str(Path(tmp) / "job.json")], cwd=work,
                                   env=env, capture_output=True, text=True, pass_fds=[ours.fileno()])
            if child.returncode:
                raise SystemExit(f"direct checker failed: {child.stderr[-2000:]}")
            server.wait()
            direct.append(time.perf_counter() - t)
            ours.close()
            theirs.close()
    run_s, direct_s = statistics.median(runs), statistics.median(direct)
    return {"answer": f"{model}/{challenge}", "sandboxed_run_s": round(run_s, 3), "direct_two_processes_s": round(direct_s, 3),
            "overhead_ms": round((run_s - direct_s) * 1e3, 1), "runs": n, "goal_overhead_ms_max": 150}


WIRE_ANSWER = "def identity(x):\n    return x\n\ndef shape_of(x):\n    return list(x.shape)\n"


def wire_overhead(n: int = 15) -> dict:
    """What crossing the trust boundary costs per call: an empty round trip, a
    small call, and a 4096x4096 float32 input and output (64 MiB each way),
    by value and staged (input sent ahead, result kept by reference)."""
    from benchtui.runner.local import local_answer_process

    def median_ms(fn) -> float:
        fn()
        samples = []
        for _ in range(n):
            t = time.perf_counter()
            fn()
            samples.append(time.perf_counter() - t)
        return round(statistics.median(samples) * 1e3, 3)

    big = np.random.default_rng(0).standard_normal((4096, 4096)).astype(np.float32)
    small = np.ones((4, 8, 64), np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "w.py").write_text(WIRE_ANSWER)
        with local_answer_process(Path(tmp)) as (peer, _):
            mod = peer.call_op("import", "w.py")
            identity, shape_of = mod.identity, mod.shape_of
            copy_ms = median_ms(lambda: big.copy())
            out = {"empty_round_trip_ms": median_ms(peer.ping),
                   "small_array_call_ms": median_ms(lambda: identity(small)),
                   "in_process_copy_64MiB_ms": copy_ms,
                   "call_4096x4096_f32_in_only_ms": median_ms(lambda: shape_of(big)),
                   "call_4096x4096_f32_in_and_out_ms": median_ms(lambda: identity(big))}
            with peer.reference():
                staged = peer.call_op("keep", big)
                out["staged_call_4096x4096_ms"] = median_ms(lambda: identity(staged))
    return out


def matrix(root: Path) -> dict:
    wb = find_workbench(str(root), None, Path.cwd())
    with Store(wb.store_path) as store:
        scan_workbench(wb, store)
        pairs = [(a["model"], a["challenge"]) for a in store.answers()]
    out = {"answers": len(pairs)}
    for jobs in (1, 2):
        t = time.perf_counter()
        events = run_answers(wb, pairs, jobs=jobs, self_check=True)
        out[f"jobs{jobs}_s"] = round(time.perf_counter() - t, 2)
        out[f"jobs{jobs}_verdicts"] = {f"{e.model}/{e.challenge}": e.verdict for e in events}
    out["ratio_jobs2_over_jobs1"] = round(out["jobs2_s"] / out["jobs1_s"], 3)
    out["goal_ratio_max"] = 0.6
    return out


def timer_self_consistency(repeats: int = 5) -> dict:
    ref = load_module(REPO / "challenges" / "backwards" / "reference.py", "bench_ref_backwards")
    rng = np.random.default_rng(0)

    def make(trial):
        x = rng.standard_normal((8, 512, 1024)).astype(np.float32)
        return x, np.ones(1024, np.float32), np.zeros(1024, np.float32)

    fn = lambda a: ref.forward(a[0], a[1], a[2], 1e-5)  # noqa: E731
    speedups = [time_pair(fn, fn, make, budget_s=1.0).speedup for _ in range(repeats)]
    return {"speedups": [round(s, 4) for s in speedups], "min": round(min(speedups), 4), "max": round(max(speedups), 4),
            "within_0.9_1.1": all(0.9 <= s <= 1.1 for s in speedups)}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--skip-matrix", action="store_true")
    p.add_argument("--quick", action="store_true", help="without the demo matrix, one round, no goal asserted: the test suite runs it so the script cannot rot")
    args = p.parse_args()
    args.skip_matrix = args.skip_matrix or args.quick
    out = {"layer": sandbox.choose_layer("auto")}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        root = make_workbench(tmp)
        n = 1 if args.quick else None  # one sample of each: only that the figures still come out
        out["sandbox"] = sandbox_overhead(tmp, **({"n": 2} if n else {}))
        out["pipeline"] = pipeline_overhead(root, **({"n": n} if n else {}))
        out["wire"] = wire_overhead(**({"n": 2} if n else {}))
        out["timer"] = timer_self_consistency(**({"repeats": n} if n else {}))
        if not args.skip_matrix:
            out["matrix"] = matrix(root)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
