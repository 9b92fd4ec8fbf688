"""Every GPU check not yet run on a GPU, in one command, within one device budget. Prints JSON.

    python bench/gpu_day.py --budget 480 [--out FILE]    # on a machine with an NVIDIA GPU, first thing
    python bench/gpu_day.py --rehearse [--quick]         # here, on the CPU: every step's orchestration
    python bench/gpu_day.py --stage                      # here, before the device call: ../shared into shared/

A borrowed GPU machine often comes with minutes of device time, counted from
the machine's start: this is the one script to run on it first. Each step has a budget of its
own; the steps run in order of value, each given its estimate where the time
left holds it, what is left where that still holds its least useful run, and
skipped (with the reason) otherwise; a step stopped at its budget says so
and the next one runs. It takes everything from the repository and
``../shared`` (the decks, the published benchmark), and writes one JSON
document (``--out`` too, rewritten after every step so a machine taken back
mid-run still leaves what was done).

The steps, most valuable first:

- ``machine``: the GPU, the driver, torch's CUDA (CPU);
- ``carried``: every file a later step needs is here (CPU): a deck slice not
  carried fails here, by name, not in the middle of its step;
- ``forged_figures``: the forged-figure classes of the module harness on the
  GPU path, beside an honest answer in the same step: a thread watching the
  input pages before the clock, a host that skips the L2 flush, work off the
  clock (engine/verify/module/timed.py, offclock.py);
- ``module_gpu_tests``: the module harness's GPU tests (adversarial kernels,
  the profiler's kernel names, 128-bit seeds on the device);
- ``deck_references``: ``challenge check`` of each KernelBench-Hard problem's
  reference, which runs on the GPU where torch sees one, a budget per problem;
- ``cuda_harness_tests``: the CUDA harness's GPU tests (typed seeded inputs,
  several launches per timed window) and the docs' worked CUDA example;
- ``deck_answers``: KernelBench-Hard's published answers (bench/deck_gpu_check.py,
  its own budget per problem);
- ``fuse``: the fuse acceptance check (bench/gpu_check.py --budget).

``--rehearse`` runs every step's orchestration on the CPU: the CPU steps as
on the day, each GPU step's stand-in (its files, its command parsed, its
tests collected, its forged-figure answers on the CPU) and its budget from the
plan; the GPU step itself is skipped with its reason. ``--quick`` keeps the
stand-ins to what needs no torch import (the test suite runs it).
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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = next((p for p in (REPO / "shared", REPO.parent / "shared") if p.is_dir()), REPO.parent / "shared")
KBH = SHARED / "kernelbench-hard"
KBH_PROBLEMS = KBH / "benchmarks" / "hard" / "problems-h100"
PUBLISHED = SHARED / "published-benchmark" / "llm_programming_tests"

MODULE_GPU_TESTS = ["tests/challenges/test_module_suite_gpu.py", "tests/challenges/test_module_ops.py",
                    "tests/challenges/test_module_suite_trust.py"]
CUDA_GPU_TESTS = ["tests/runner/test_cuda_harness.py", "tests/authoring/test_public_api.py"]
SCRIPTS = ["bench/deck_gpu_check.py", "bench/gpu_check.py"]
KIT = "tests/challenges/module_deck_kit.py"
# what reaches a step's own budget flag: its budget less the time to start and record
SCRIPT_MARGIN_S = 15.0


@dataclass
class Step:
    name: str
    gpu: bool
    estimate_s: float   # what a full run takes on a GPU machine
    least_s: float      # below this a run says nothing: skipped
    needs: list[Path]
    run: Callable[[float, bool], dict]   # (budget_s, on_gpu) -> figures
    stand_in: Callable[[bool], dict]     # (quick) -> what the rehearsal checked


def sh(cmd: list[str], timeout: float, env: dict | None = None) -> dict:
    """A command run from the repository, stopped at ``timeout``: its exit, its time and its output's tail."""
    start = time.perf_counter()
    full_env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    try:
        p = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=max(1.0, timeout), env=full_env,
                           check=False)
        return {"rc": p.returncode, "s": round(time.perf_counter() - start, 1), "out": p.stdout, "err": p.stderr}
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        return {"rc": None, "s": round(time.perf_counter() - start, 1), "out": out, "err": "", "stopped": True}


def tail(text: str, n: int = 1500) -> str:
    return text[-n:] if text else ""


def pytest_summary(got: dict) -> dict:
    """A pytest run's counts, from its last line."""
    last = [ln for ln in (got["out"] or "").splitlines() if ln.strip()][-1:] or [""]
    counts = {k: int(v) for v, k in re.findall(r"(\d+) (passed|failed|skipped|errors?|deselected)", last[0])}
    return {"rc": got["rc"], "s": got["s"], "counts": counts, "summary": last[0][:300],
            **({"stopped_at_budget": True} if got.get("stopped") else {}),
            **({"failures": [ln[:300] for ln in got["out"].splitlines() if ln.startswith(("FAILED", "ERROR"))]}
               if got["rc"] not in (0, None) else {})}


# -- the steps' own work ---------------------------------------------------------------------
def machine(_budget: float = 0, _gpu: bool = False) -> dict:
    smi = shutil.which("nvidia-smi")
    gpus = sh([smi, "-L"], 20)["out"].strip().splitlines() if smi else []
    probe = sh([sys.executable, "-c", "import json, torch; c = torch.cuda.is_available(); print(json.dumps("
                "{'torch': torch.__version__, 'cuda': torch.version.cuda, 'available': c, "
                "'device': torch.cuda.get_device_name(0) if c else None}))"], 120)
    try:
        torch_info = json.loads(probe["out"].strip().splitlines()[-1])
    except (ValueError, IndexError):
        torch_info = {"unreadable": tail(probe["err"], 300)}
    return {"nvidia_smi": gpus, "torch": torch_info, "python": sys.version.split()[0]}


def has_gpu(info: dict) -> bool:
    return bool(info.get("nvidia_smi")) and bool((info.get("torch") or {}).get("available"))


FORGED = '''
import json, os, statistics, sys, tempfile
from pathlib import Path
sys.path.insert(0, {repo!r})
from tests.challenges import module_deck_kit as K
from benchtui.runner.local import run_local

backend, names, dry = {backend!r}, {names!r}, {dry!r}
# a host that skips every L2 flush it does itself: the checker's own flush before each timed call stands
NO_FLUSH = "import sys\\n" + K.KB_RIGHT + """

_host = sys.modules["benchtui.verify.module.host"].ModuleHost
_host._flush_l2 = lambda self: None
"""
ANSWERS = {{"honest": K.KB_RIGHT, "precompute": K.precomputer(0.0), "no_l2_flush": NO_FLUSH,
            "off_clock": K.off_clock_worker(0.0)}}
root = Path(tempfile.mkdtemp(prefix="gpu-day-"))
K.write_challenge(root / "challenges", "kb_gemm", "kb")
answers = K.write_answers(root / "kb", {{n: ANSWERS[n] for n in names}})
out = {{}}
for name in names:
    if dry:
        out[name] = {{"written": str(answers[name] / "solution.py")}}
        continue
    r = run_local("kb_gemm", answers[name], challenges_dir=root / "challenges", seed=7, backend=backend)
    checks = {{c["name"]: c for c in r["checks"]}}
    t = (checks.get("time:shape0") or {{}}).get("details") or {{}}
    out[name] = {{"verdict": r["verdict"], "trusted_ms": t.get("trusted_ms"), "windows_ms": t.get("windows_ms"),
                 "as_published_ms": t.get("as_published_ms"), "calls_per_window": t.get("calls_per_window"),
                 "flagged": t.get("flagged"), "worked_off_the_clock": t.get("worked_off_the_clock"),
                 "below_the_answer_s_own": t.get("below_the_answer_s_own"), "off_clock": t.get("off_clock"),
                 "device": t.get("device"),
                 "not_passed": {{n: [c["verdict"], (c["message"] or "")[:200]] for n, c in checks.items()
                                if c["verdict"] not in ("pass", "info", "skipped")}}}}
print(json.dumps(out))
'''


def forged(backend: str, names: list[str], budget: float, dry: bool = False) -> dict:
    code = FORGED.format(repo=str(REPO), backend=backend, names=names, dry=dry)
    got = sh([sys.executable, "-c", code], budget, env={"OMP_NUM_THREADS": "1"})
    try:
        answers = json.loads(got["out"].strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"error": f"the forged-figure runs gave no JSON (rc {got['rc']}): {tail(got['err'], 800)}",
                "s": got["s"], **({"stopped_at_budget": True} if got.get("stopped") else {})}
    out: dict = {"answers": answers, "s": got["s"]}
    honest = (answers.get("honest") or {}).get("windows_ms")
    for name, a in answers.items():
        theirs = a.get("windows_ms")
        if name != "honest" and honest and theirs:
            a["windows_vs_honest"] = round(theirs / honest, 3)  # under 1: faster than the honest answer
    return out


def step_forged(budget: float, on_gpu: bool) -> dict:
    return forged("cuda" if on_gpu else "cpu", ["honest", "precompute", "no_l2_flush", "off_clock"], budget)


def stand_in_forged(quick: bool) -> dict:
    # the answers written and (not quick) the precompute answer run on the CPU through the same path
    return forged("cpu", ["honest", "precompute"] if not quick else ["honest", "precompute", "no_l2_flush",
                                                                      "off_clock"], 900, dry=quick)


def pytest_step(files: list[str], select: str = "gpu") -> Callable[[float, bool], dict]:
    def run(budget: float, _gpu: bool) -> dict:
        return pytest_summary(sh([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", select,
                                  "--no-header", *files], budget, env={"BENCHTUI_DECKS": str(SHARED)}))
    return run


def pytest_stand_in(files: list[str], select: str = "gpu") -> Callable[[bool], dict]:
    """The step's tests found: by name in the files (quick), else collected by pytest."""
    def stand_in(quick: bool) -> dict:
        if quick:
            found = {f: (REPO / f).read_text(encoding="utf-8").count("mark.gpu") for f in files}
            missing = [f for f, n in found.items() if not n]
            return {"gpu_marks_by_file": found, **({"error": f"no GPU test in {missing}"} if missing else {})}
        got = sh([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--collect-only", "-m", select,
                  *files], 600)
        ids = [ln for ln in got["out"].splitlines() if "::" in ln]
        return {"collected": len(ids), "ids": ids,
                **({"error": f"collection failed: {tail(got['out'], 800)}"} if got["rc"] not in (0, 5) or not ids
                   else {})}
    return stand_in


def step_deck_references(budget: float, _gpu: bool) -> dict:
    """KernelBench-Hard imported into a scratch workbench; each problem's reference checked
    (one seed, no mutants), a budget per problem from what is left."""
    wb = Path(tempfile.mkdtemp(prefix="gpu-day-deck-"))
    started = time.perf_counter()
    cli = [sys.executable, "-m", "benchtui", "--workbench", str(wb)]
    got = sh([*cli, "import", str(KBH), "--gpu", "h100", "--json"], min(120, budget))
    out: dict = {"import": {"rc": got["rc"], "s": got["s"]}, "problems": {}, "skipped": []}
    if got["rc"] != 0:
        out["error"] = f"import failed: {tail(got['err'] or got['out'], 800)}"
        return out
    problems = sorted(p.name for p in (wb / "challenges").iterdir() if (p / "challenge.toml").is_file())
    for i, cid in enumerate(problems):
        left = budget - (time.perf_counter() - started)
        share = left / (len(problems) - i)
        if share < 20:
            out["skipped"].append(f"{cid}: {left:.0f} s left for {len(problems) - i} problems")
            continue
        got = sh([*cli, "challenge", "check", cid, "--seeds", "1", "--mutants", "0", "--json"], share)
        try:
            report = json.loads(got["out"])
            items = {i["name"]: {"ok": i.get("ok"), "message": (i.get("message") or "")[:200]}
                     for i in report.get("items", [])}
            out["problems"][cid] = {"s": got["s"], "sound": report.get("sound"), "failed": report.get("failed"),
                                    "not_judged": report.get("not_judged"),
                                    "reference_passes": items.get("reference_passes")}
        except ValueError:
            out["problems"][cid] = {"s": got["s"], "rc": got["rc"], "stopped_at_budget": bool(got.get("stopped")),
                                    "output": tail(got["err"] or got["out"], 600)}
    return out


def stand_in_deck_references(quick: bool) -> dict:
    problems = sorted(p.name for p in KBH_PROBLEMS.iterdir()) if KBH_PROBLEMS.is_dir() else []
    out: dict = {"deck": str(KBH), "problems": problems}
    if not problems:
        out["error"] = f"no problems under {KBH_PROBLEMS}"
    if not quick:
        wb = Path(tempfile.mkdtemp(prefix="gpu-day-deck-"))
        got = sh([sys.executable, "-m", "benchtui", "--workbench", str(wb), "import", str(KBH), "--gpu", "h100",
                  "--json"], 600)
        out["import"] = {"rc": got["rc"], "s": got["s"],
                         "challenges": sorted(p.name for p in (wb / "challenges").glob("*") if p.is_dir())}
        if got["rc"] != 0:
            out["error"] = f"import failed: {tail(got['err'] or got['out'], 800)}"
    return out


def script_step(script: str, args: Callable[[float], list[str]]) -> Callable[[float, bool], dict]:
    def run(budget: float, _gpu: bool) -> dict:
        got = sh([sys.executable, script, *args(budget)], budget)
        try:
            doc = json.loads(got["out"][got["out"].index("{"):]) if "{" in got["out"] else None
        except ValueError:
            doc = None
        return {"rc": got["rc"], "s": got["s"], "report": doc if doc is not None else tail(got["out"] or got["err"]),
                **({"stopped_at_budget": True} if got.get("stopped") else {})}
    return run


def script_stand_in(script: str, flags: list[str]) -> Callable[[bool], dict]:
    """The script is here and takes the flags this plan passes it (its --help names them)."""
    def stand_in(quick: bool) -> dict:
        text = (REPO / script).read_text(encoding="utf-8")
        missing = [f for f in flags if f not in text]
        out: dict = {"script": script, "flags": flags}
        if not quick:
            got = sh([sys.executable, script, "--help"], 120)
            missing += [f for f in flags if f not in got["out"]]
        if missing:
            out["error"] = f"{script} does not take {sorted(set(missing))}"
        return out
    return stand_in


def plan(files_needed: dict[str, list[Path]]) -> list[Step]:
    return [
        Step("forged_figures", True, 150, 60, files_needed["forged_figures"], step_forged, stand_in_forged),
        Step("module_gpu_tests", True, 120, 45, files_needed["module_gpu_tests"], pytest_step(MODULE_GPU_TESTS),
             pytest_stand_in(MODULE_GPU_TESTS)),
        Step("deck_references", True, 120, 45, files_needed["deck_references"], step_deck_references,
             stand_in_deck_references),
        Step("cuda_harness_tests", True, 90, 40, files_needed["cuda_harness_tests"], pytest_step(CUDA_GPU_TESTS),
             pytest_stand_in(CUDA_GPU_TESTS)),
        Step("deck_answers", True, 180, 60, files_needed["deck_answers"],
             script_step("bench/deck_gpu_check.py", lambda b: ["--budget-s", f"{b - SCRIPT_MARGIN_S:.0f}"]),
             script_stand_in("bench/deck_gpu_check.py", ["--budget-s", "--deck"])),
        Step("fuse", True, 180, 60, files_needed["fuse"],
             script_step("bench/gpu_check.py", lambda b: ["--budget", "--budget-s", f"{b - SCRIPT_MARGIN_S:.0f}",
                                                          "--no-user-run"]),
             script_stand_in("bench/gpu_check.py", ["--budget", "--budget-s", "--no-user-run"])),
    ]


NEEDED = {
    "forged_figures": [REPO / KIT, REPO / "engine/runner/local.py"],
    "module_gpu_tests": [REPO / f for f in MODULE_GPU_TESTS] + [KBH],
    "deck_references": [KBH_PROBLEMS],
    "cuda_harness_tests": [REPO / f for f in CUDA_GPU_TESTS],
    "deck_answers": [REPO / "bench/deck_gpu_check.py", KBH],
    "fuse": [REPO / "bench/gpu_check.py", PUBLISHED],
}


def stage() -> dict:
    """The shared slices copied under the repository (``shared/``, untracked), as a device call carries them."""
    into = REPO / "shared"
    copied = {}
    for name in ("kernelbench", "kernelbench-hard", "published-benchmark"):
        src = SHARED / name
        if src.resolve() == (into / name).resolve() or not src.is_dir():
            copied[name] = "already there" if (into / name).is_dir() else f"not found at {src}"
            continue
        shutil.copytree(src, into / name, dirs_exist_ok=True)
        copied[name] = str(into / name)
    return {"staged": copied}


def allot(steps: list[Step], budget: float, spent: float) -> tuple[float | None, str]:
    """The next step's budget from what is left, or None and why it is skipped."""
    left = budget - spent
    step = steps[0]
    if left >= step.estimate_s:
        return step.estimate_s, ""
    if left >= step.least_s:
        return left, f"trimmed to the {left:.0f} s left (estimate {step.estimate_s:.0f} s)"
    return None, f"{left:.0f} s left of the {budget:.0f} s budget; its least useful run needs {step.least_s:.0f} s"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--budget", type=float, default=480.0, help="seconds of device time for every step together")
    p.add_argument("--rehearse", action="store_true", help="every step's orchestration on the CPU, GPU steps skipped")
    p.add_argument("--quick", action="store_true", help="with --rehearse (implied): stand-ins that import no torch")
    p.add_argument("--stage", action="store_true",
                   help="copy the shared slices the steps read into the repository's shared/ (about 10 MB), so a "
                        "device call that copies the working tree takes them along; then exit")
    p.add_argument("--out", type=Path)
    a = p.parse_args()
    if a.stage:
        print(json.dumps(stage(), indent=1))
        return 0
    rehearse = a.rehearse or a.quick
    started = time.perf_counter()
    doc: dict = {"budget_s": a.budget, "rehearse": rehearse, "quick": a.quick, "repo": str(REPO),
                 "shared": str(SHARED), "steps": []}

    def save() -> None:
        doc["wall_s"] = round(time.perf_counter() - started, 1)
        if a.out:
            a.out.write_text(json.dumps(doc, indent=1, default=str))

    info = {"python": sys.version.split()[0]} if a.quick else machine()
    doc["steps"].append({"name": "machine", "gpu": False, "status": "ok", "figures": info})
    on_gpu = has_gpu(info) and not rehearse
    steps = plan(NEEDED)
    carried = {s.name: [str(n) for n in s.needs if not n.exists()] for s in steps}
    missing = {k: v for k, v in carried.items() if v}
    doc["steps"].append({"name": "carried", "gpu": False, "status": "ok" if not missing else "missing",
                         "figures": {"missing": missing, "checked": sum(len(s.needs) for s in steps)},
                         **({"error": f"files a step needs are not here: {missing}"} if missing else {})})
    save()
    spent_device = 0.0  # the GPU steps' own time (what the plan's budgets add up to)
    for i, step in enumerate(steps):
        entry: dict = {"name": step.name, "gpu": step.gpu, "estimate_s": step.estimate_s, "least_s": step.least_s}
        budget, why = allot(steps[i:], a.budget, spent_device)
        entry["budget_s"] = None if budget is None else round(budget, 1)
        if why:
            entry["budget_note"] = why
        if missing.get(step.name):
            entry.update(status="skipped", why=f"not carried: {missing[step.name]}")
        elif rehearse:
            t0 = time.perf_counter()
            stand = step.stand_in(a.quick)
            entry.update(status="rehearsed" if "error" not in stand else "failed", stand_in=stand,
                         stand_in_s=round(time.perf_counter() - t0, 1),
                         why="a GPU step: rehearsed on the CPU (its files, its command, its budget), not run")
            if "error" in stand:
                entry["error"] = stand["error"]
            spent_device += budget or 0.0  # the plan as the day would spend it
        elif budget is None:
            entry.update(status="skipped", why=why)
        elif step.gpu and not on_gpu:
            entry.update(status="skipped", why="no NVIDIA GPU usable by torch here (see the machine step)")
        else:
            t0 = time.perf_counter()
            figures = step.run(budget, on_gpu)
            used = time.perf_counter() - t0
            spent_device += used
            entry.update(status="failed" if figures.get("error") or figures.get("rc") not in (0, None)
                         else "stopped_at_budget" if figures.get("stopped_at_budget") else "ok",
                         wall_s=round(used, 1), figures=figures)
        doc["steps"].append(entry)
        save()
    doc["plan_s"] = round(spent_device, 1)
    doc["ok"] = not any(s.get("error") for s in doc["steps"])
    save()
    print(json.dumps(doc, indent=1, default=str))
    return 0 if doc["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
