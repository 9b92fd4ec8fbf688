"""The GPU check: fuse judged on this machine's NVIDIA GPU, end to end, as one JSON document.

    python bench/gpu_check.py [--runs 3] [--out FILE] [--quick]

Meant for a bare GPU machine without network (docs/gpu.md says what to carry):
1. the machine: GPU, driver, CuPy / torch, doctor's CUDA line;
2. the demo's fuse answers through the CLI (`run -c fuse --backend cuda`), sandboxed;
3. a scratch copy of the published benchmark's fuse answers, the same way;
4. the timing figures of every answer that builds (bandwidth fraction, roofline
   ratio, speed against the library baseline) over ``--runs`` runs, and their spread;
5. the GPU tests (`pytest -m gpu`): timing exploits, device faults, forgery;
6. one run as an unprivileged user, when this runs as root.
``--quick`` keeps to 2 and one run of demo-careful (a smoke test).
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

REPO = Path(__file__).resolve().parents[1]
PUBLISHED = REPO.parent / "shared" / "published-benchmark" / "llm_programming_tests"
FIGURES = ("timed_outputs", "speed", "bandwidth", "roofline", "fewer_than_k_finite", "build_library")


def cli(workbench: Path, *args: str, timeout: float = 400, env: dict | None = None, user: int | None = None) -> dict:
    prefix = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups"] if user is not None else []
    cmd = [*prefix, sys.executable, "-m", "engine", "--workbench", str(workbench), *args]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
                               **(env or {})})
    return {"rc": proc.returncode, "s": round(time.perf_counter() - start, 1), "out": proc.stdout, "err": proc.stderr[-3000:]}


def run_fuse(workbench: Path, models: list[str], jobs: int = 1, user: int | None = None) -> dict:
    args = ["run", "-c", "fuse", "--backend", "cuda", "--no-self-check", "--json", "--jobs", str(jobs)]
    for m in models:
        args += ["-m", m]
    got = cli(workbench, *args, user=user, env={"HOME": str(workbench)} if user is not None else None)
    try:
        runs = json.loads(got["out"])["runs"]
    except (ValueError, KeyError):
        return {"error": got["err"][-1500:] or got["out"][-1500:], "rc": got["rc"], "s": got["s"]}
    return {"s": got["s"], "runs": {r["model"]: {"verdict": r["verdict"], "run_id": r.get("run_id"),
                                                 "message": r.get("message", "")[:300]} for r in runs}}


def checks_of(workbench: Path, run_id: int) -> dict:
    sys.path.insert(0, str(REPO))
    from engine.store import queries
    from engine.store.database import Store
    from engine.workbench.layout import find_workbench

    wb = find_workbench(str(workbench), None, Path.cwd())
    with Store(wb.store_path) as store:
        return {c["name"]: {**c, "value": queries.stored_value(c["value"])} for c in queries.run_checks(store, run_id)}


def figures(checks: dict) -> dict:
    out = {}
    for name in FIGURES:
        c = checks.get(name)
        if c:
            out[name] = {"verdict": c["verdict"], "value": c["value"], "message": (c["message"] or "")[:400]}
    d = (checks.get("speed") or {}).get("details") or {}
    if isinstance(d, dict):
        out["timing"] = {k: d.get(k) for k in ("answer_median_s", "answer_iqr_s", "answer_wall_median_s", "roofline_s",
                                               "peak_bytes_per_s", "trials", "rows", "V", "k", "flagged")}
        out["timing"]["baseline"] = d.get("baseline")
        out["timing"]["gpu"] = (d.get("gpu") or {}).get("name")
    bad = {n: (c["verdict"], (c["message"] or "")[:300]) for n, c in checks.items() if c["verdict"] not in ("pass", "info")}
    if bad:
        out["not_passed"] = bad
    return out


def spread(values: list) -> float | None:
    values = [v for v in values if isinstance(v, (int, float))]
    if len(values) < 2:
        return None
    return round(max(values) / min(values) - 1, 4)


def machine() -> dict:
    info = {"python": sys.version.split()[0], "uid": os.geteuid()}
    try:
        info["nvidia_smi"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                                            capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        info["nvidia_smi"] = str(exc)
    for mod in ("cupy", "torch", "numpy"):
        try:
            info[mod] = __import__(mod).__version__
        except Exception as exc:  # noqa: BLE001 - recorded as found
            info[mod] = f"not importable: {exc}"[:200]
    sys.path.insert(0, str(REPO))
    from engine.host import doctor

    report = doctor.gather()
    info["doctor_cuda"] = {k: report["cuda"].get(k) for k in ("cupy", "available", "devices", "nvcc", "fit")}
    info["sandbox"] = report["sandbox"]["active"]
    return info


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--out")
    p.add_argument("--quick", action="store_true")
    p.add_argument("-k", dest="tests", default="not published and not demo_fuse", help="which GPU tests to run (pytest -k)")
    p.add_argument("--no-user-run", action="store_true", help="skip the run as an unprivileged user")
    a = p.parse_args()
    started = time.perf_counter()
    doc: dict = {"machine": machine()}

    def save() -> None:  # after every step: a run stopped at its limit keeps what it did
        if a.out:
            Path(a.out).write_text(json.dumps(doc, indent=1, default=str))
    tmp = Path(tempfile.mkdtemp(prefix="benchtui-gpu-check-"))
    os.chmod(tmp, 0o755)
    demo = tmp / "demo"
    shutil.copytree(REPO / "models", demo / "models")
    shutil.copytree(REPO / "challenges", demo / "challenges")
    cli(demo, "scan")
    models = ["demo-careful"] if a.quick else ["demo-careful", "demo-hasty", "demo-quitter"]
    doc["demo"] = run_fuse(demo, models)
    timed: dict[str, list] = {}

    def keep(workbench: Path, result: dict) -> None:
        for model, r in result.get("runs", {}).items():
            if r.get("run_id"):
                fig = figures(checks_of(workbench, r["run_id"]))
                r["checks"] = fig
                if (fig.get("timing") or {}).get("answer_median_s"):  # it built and was timed
                    timed.setdefault(model, []).append((workbench, fig))

    keep(demo, doc["demo"])
    save()
    pub = None
    if not a.quick and PUBLISHED.is_dir():
        pub = tmp / "pub"
        shutil.copytree(PUBLISHED, pub, symlinks=True)
        cli(pub, "scan")
        doc["published"] = run_fuse(pub, ["glm5", "minimax-m2.7", "opus47_1m", "qwen36"], jobs=2)
        keep(pub, doc["published"])
        save()
    if not a.quick:
        for _ in range(a.runs - 1):
            for model, entries in list(timed.items()):
                workbench = entries[0][0]
                again = run_fuse(workbench, [model])
                r = again.get("runs", {}).get(model)
                if r and r.get("run_id"):
                    entries.append((workbench, figures(checks_of(workbench, r["run_id"]))))
    doc["figures"] = {}
    for model, entries in timed.items():
        figs = [f for _, f in entries]
        doc["figures"][model] = {
            "runs": len(figs),
            "bandwidth_fraction": [f["bandwidth"]["value"] for f in figs],
            "roofline_ratio": [f["roofline"]["value"] for f in figs],
            "speed_vs_baseline": [f["speed"]["value"] for f in figs],
            "median_ms": [round((f["timing"]["answer_median_s"] or 0) * 1e3, 4) for f in figs],
            "iqr_ms": [round((f["timing"]["answer_iqr_s"] or 0) * 1e3, 4) for f in figs],
            "baseline": [(f["timing"]["baseline"] or {}).get("name") for f in figs][:1],
            "baseline_ms": [round(((f["timing"]["baseline"] or {}).get("median_s") or 0) * 1e3, 4) for f in figs],
            "roofline_ms": round((figs[0]["timing"]["roofline_s"] or 0) * 1e3, 4),
            "spread_median": spread([f["timing"]["answer_median_s"] for f in figs]),
            "gpu": figs[0]["timing"]["gpu"],
        }
    save()
    if os.geteuid() == 0 and not a.no_user_run:
        shutil.chown(tmp, 1000, 1000)
        for path in demo.rglob("*"):
            os.lchown(path, 1000, 1000)
        os.lchown(demo, 1000, 1000)
        r = run_fuse(demo, ["demo-careful"], user=1000)
        doc["as_unprivileged_user"] = {m: v["verdict"] for m, v in r.get("runs", {}).items()} or r
        save()
    tests = ["tests/runner/test_gpu_runs.py", "tests/challenges/test_challenge_fuse.py"]
    select = ["-k", "full_conformance"] if a.quick else ["-k", a.tests]
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-m", "gpu", "-q", "-p", "no:cacheprovider", "-rfEs",
                           "-o", "addopts=", *select, *tests], capture_output=True, text=True, cwd=REPO, timeout=480)
    doc["pytest_gpu"] = {"rc": proc.returncode, "s": round(time.perf_counter() - start, 1),
                         "summary": proc.stdout.strip().splitlines()[-1:] if proc.stdout.strip() else [],
                         "failures": [ln for ln in proc.stdout.splitlines() if ln.startswith(("FAILED", "ERROR", "SKIPPED"))][:20],
                         "tail": proc.stdout[-6000:] if proc.returncode else ""}
    doc["wall_s"] = round(time.perf_counter() - started, 1)
    text = json.dumps(doc, indent=1, default=str)
    if a.out:
        Path(a.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
