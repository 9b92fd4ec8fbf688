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

``--budget`` is the acceptance check in one call of at most 5 minutes
(``--budget-s``), its steps in order of value, each skipped (and said) when
the time left cannot hold it: the demo's fuse verdicts; the planted timing
exploits beside an honest kernel (each flagged, failed or no faster than it;
the checker-measured median against the answer's events); demo-careful's
figures over 3 runs and their spread; the published fuse verdicts; a
persisting L2 window on an input that fits in L2; the typed harness's GPU
test (bfloat16 and int32 seeded inputs, two launches per timed window); the
second CUDA challenge (paged_attention): demo-careful right with roofline
figures, demo-hasty failing a context that ends on a block boundary.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PUBLISHED = next((p for p in (REPO / "shared" / "published-benchmark" / "llm_programming_tests",
                               REPO.parent / "shared" / "published-benchmark" / "llm_programming_tests") if p.is_dir()),
                 REPO.parent / "shared" / "published-benchmark" / "llm_programming_tests")
FIGURES = ("timed_outputs", "speed", "bandwidth", "roofline", "fewer_than_k_finite", "build_library")


def cli(workbench: Path, *args: str, timeout: float = 400, env: dict | None = None, user: int | None = None) -> dict:
    prefix = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups"] if user is not None else []
    cmd = [*prefix, sys.executable, "-m", "benchtui", "--workbench", str(workbench), *args]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
                               **(env or {})})
    return {"rc": proc.returncode, "s": round(time.perf_counter() - start, 1), "out": proc.stdout, "err": proc.stderr[-3000:]}


def run_fuse(workbench: Path, models: list[str], jobs: int = 1, user: int | None = None, timeout: float = 400) -> dict:
    args = ["run", "-c", "fuse", "--backend", "cuda", "--no-self-check", "--json", "--jobs", str(jobs)]
    for m in models:
        args += ["-m", m]
    got = cli(workbench, *args, user=user, env={"HOME": str(workbench)} if user is not None else None, timeout=timeout)
    try:
        runs = json.loads(got["out"])["runs"]
    except (ValueError, KeyError):
        return {"error": got["err"][-1500:] or got["out"][-1500:], "rc": got["rc"], "s": got["s"]}
    return {"s": got["s"], "runs": {r["model"]: {"verdict": r["verdict"], "run_id": r.get("run_id"),
                                                 "message": r.get("message", "")[:300]} for r in runs}}


def checks_of(workbench: Path, run_id: int) -> dict:
    sys.path.insert(0, str(REPO))
    from benchtui.store import queries
    from benchtui.store.database import Store
    from benchtui.workbench.layout import find_workbench

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
        out["timing"] = {k: d.get(k) for k in ("answer_median_s", "answer_iqr_s", "events_median_s", "events_iqr_s",
                                               "events_disagree", "empty_cycle", "roofline_s", "peak_bytes_per_s",
                                               "trials", "rows", "V", "k", "flagged")}
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


def pytest_counts(stdout: str, rc: int) -> dict:
    """pytest's summary as counts: a step that ran no test is not a pass, whatever pytest's
    return code says (it is 0 when every test skipped)."""
    counts = {k: 0 for k in ("passed", "failed", "skipped", "error", "deselected")}
    tail = stdout.strip().splitlines()[-1:] or [""]
    for n, word in re.findall(r"(\d+) (passed|failed|skipped|errors?|deselected)", tail[0]):
        counts["error" if word.startswith("error") else word] += int(n)
    counts["rc"] = rc
    counts["ok"] = rc == 0 and counts["passed"] > 0 and counts["failed"] == counts["error"] == counts["skipped"] == 0
    return counts


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
    from benchtui.commands import doctor

    report = doctor.gather()
    info["doctor_cuda"] = {k: report["cuda"].get(k) for k in ("cupy", "available", "devices", "nvcc", "fit")}
    info["sandbox"] = report["sandbox"]["active"]
    return info


EXPLOITS = ("other_stream", "replay", "skip_after_warmup", "patched_timer", "ctor_patch")


def exploit_workbench(root: Path, names: list[str], **thresholds) -> Path:
    """The GPU tests' workbench (tests/runner/gpu_workbench.py), scanned."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from tests.runner import gpu_workbench

    gpu_workbench.exploit_workbench(root, names, **thresholds)
    cli(root, "scan")
    return root


def judge_exploits(result: dict, workbench: Path) -> dict:
    """Each planted exploit: flagged, failed, or no faster than the honest kernel."""
    runs = result.get("runs", {})
    figs = {m: figures(checks_of(workbench, r["run_id"])) for m, r in runs.items() if r.get("run_id")}
    honest = figs.get("x-honest", {})
    base = (honest.get("roofline") or {}).get("value")
    t = honest.get("timing") or {}
    out = {"honest": {"verdict": runs.get("x-honest", {}).get("verdict"), "roofline": base,
                      "checker_median_ms": round((t.get("answer_median_s") or 0) * 1e3, 4),
                      "events_median_ms": round((t.get("events_median_s") or 0) * 1e3, 4),
                      "checker_over_events": round(t["answer_median_s"] / t["events_median_s"], 4)
                      if t.get("answer_median_s") and t.get("events_median_s") else None,
                      "empty_cycle": t.get("empty_cycle")}}
    for model, f in figs.items():
        if model == "x-honest":
            continue
        value = (f.get("roofline") or {}).get("value")
        verdict = runs[model]["verdict"]
        ft = f.get("timing") or {}
        out[model] = {"verdict": verdict, "roofline": value, "flagged": ft.get("flagged"),
                      "events_disagree": ft.get("events_disagree"),
                      "events_median_ms": round((ft.get("events_median_s") or 0) * 1e3, 4),
                      "timed_outputs": (f.get("timed_outputs") or {}).get("verdict"),
                      "ok": bool(value is None or verdict == "fail" or (base and value >= 0.9 * base))}
    return out


def budget(a) -> dict:
    """The acceptance check, in order of value, within ``a.budget_s``."""
    started = time.perf_counter()
    left = lambda: a.budget_s - (time.perf_counter() - started)  # noqa: E731
    doc: dict = {"machine": machine(), "budget_s": a.budget_s, "skipped": []}

    def save() -> None:
        doc["wall_s"] = round(time.perf_counter() - started, 1)
        if a.out:
            Path(a.out).write_text(json.dumps(doc, indent=1, default=str))

    def step(name: str, need_s: float, fn) -> None:
        if left() < need_s:
            doc["skipped"].append(f"{name}: {left():.0f} s left, needs about {need_s:.0f} s")
            return
        t0 = time.perf_counter()
        try:
            doc[name] = fn()
        except Exception as exc:  # noqa: BLE001 - recorded, the next step still runs
            doc[name] = {"error": f"{type(exc).__name__}: {exc}"[:800]}
        doc.setdefault("step_s", {})[name] = round(time.perf_counter() - t0, 1)
        save()

    tmp = Path(tempfile.mkdtemp(prefix="benchtui-gpu-check-"))
    os.chmod(tmp, 0o755)
    demo = tmp / "demo"
    shutil.copytree(REPO / "models", demo / "models")
    shutil.copytree(REPO / "challenges", demo / "challenges")
    cli(demo, "scan")
    careful: list = []

    def demo_step():
        got = run_fuse(demo, ["demo-careful", "demo-hasty", "demo-quitter"], jobs=3, timeout=max(30, left() - 5))
        r = got.get("runs", {}).get("demo-careful", {})
        if r.get("run_id"):
            careful.append(figures(checks_of(demo, r["run_id"])))
        return got

    step("demo", 60, demo_step)

    def exploits_step():
        root = exploit_workbench(tmp / "exploits", ["honest", *EXPLOITS])
        got = run_fuse(root, ["x-honest", *[f"x-{n}" for n in EXPLOITS]], jobs=2, timeout=max(30, left() - 5))
        return {"runs": {m: r.get("verdict") for m, r in got.get("runs", {}).items()} or got,
                "judged": judge_exploits(got, root) if got.get("runs") else None}

    step("exploits", 100, exploits_step)

    def honest_step():
        for _ in range(2):
            r = run_fuse(demo, ["demo-careful"], timeout=max(30, left() - 5)).get("runs", {}).get("demo-careful", {})
            if r.get("run_id"):
                careful.append(figures(checks_of(demo, r["run_id"])))
        t = [f.get("timing") or {} for f in careful]
        return {"runs": len(careful), "roofline": [(f.get("roofline") or {}).get("value") for f in careful],
                "bandwidth": [(f.get("bandwidth") or {}).get("value") for f in careful],
                "speed": [(f.get("speed") or {}).get("value") for f in careful],
                "checker_median_ms": [round((x.get("answer_median_s") or 0) * 1e3, 4) for x in t],
                "events_median_ms": [round((x.get("events_median_s") or 0) * 1e3, 4) for x in t],
                "spread_checker_median": spread([x.get("answer_median_s") for x in t]),
                "spread_events_median": spread([x.get("events_median_s") for x in t]),
                "gpu": t[0].get("gpu") if t else None}

    step("honest_over_3_runs", 60, honest_step)

    def published_step():
        if not PUBLISHED.is_dir():
            return {"error": f"no published benchmark at {PUBLISHED}"}
        pub = tmp / "pub"
        shutil.copytree(PUBLISHED, pub, symlinks=True)
        cli(pub, "scan")
        got = run_fuse(pub, ["glm5", "minimax-m2.7", "opus47_1m", "qwen36"], jobs=4, timeout=max(30, left() - 5))
        r = got.get("runs", {}).get("opus47_1m", {})
        if r.get("run_id"):
            r["checks"] = figures(checks_of(pub, r["run_id"]))
        return got

    step("published", 60, published_step)

    def l2_step():
        root = exploit_workbench(tmp / "l2", ["honest", "l2_persist"], timing_rows=256, timing_V=32768)
        got = run_fuse(root, ["x-honest", "x-l2_persist"], jobs=2, timeout=max(30, left() - 5))
        return judge_exploits(got, root) if got.get("runs") else got

    step("l2_fits", 40, l2_step)

    def gpu_tests(*args: str, floor_s: float):
        """pytest -m gpu on ``args``, counted: a step that ran no test is not ok."""
        def run_them():
            proc = subprocess.run([sys.executable, "-m", "pytest", "-m", "gpu", "-q", "-p", "no:cacheprovider", "-rfEs",
                                   "-o", "addopts=", *args], capture_output=True, text=True, cwd=REPO,
                                  timeout=max(floor_s, left() - 3))
            return {**pytest_counts(proc.stdout, proc.returncode), "tail": proc.stdout[-3000:]}
        return run_them

    step("typed_harness", 25, gpu_tests("tests/runner/test_cuda_harness.py", floor_s=20))
    # both demo answers built side by side and checked in one process (no sandbox, no CLI): the shortest
    # path that judges them; the full sandboxed run is the non-budget pytest's full_conformance test
    step("paged_attention_demo", 20, gpu_tests("-k", "demo_answers_on_the_gpu",
                                               "tests/challenges/test_challenge_paged_attention.py", floor_s=15))
    # the kernel decks' module harness on the GPU (torch): each adversarial kernel caught by its own check
    step("module_suite_gpu", 30, gpu_tests("tests/challenges/test_module_suite_gpu.py", floor_s=15))
    save()
    return doc


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--out")
    p.add_argument("--quick", action="store_true")
    p.add_argument("-k", dest="tests", default="not published and not demo_fuse", help="which GPU tests to run (pytest -k)")
    p.add_argument("--no-user-run", action="store_true", help="skip the run as an unprivileged user")
    p.add_argument("--budget", action="store_true", help="the acceptance check within --budget-s seconds")
    p.add_argument("--budget-s", type=float, default=285.0)
    a = p.parse_args()
    if a.budget:
        print(json.dumps(budget(a), indent=1, default=str))
        return 0
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
    if not a.quick:  # --quick stays the fuse smoke test
        tests.append("tests/challenges/test_challenge_paged_attention.py")
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
