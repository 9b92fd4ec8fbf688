"""benchtui at a hundred times the published benchmark. Prints JSON.

    python bench/scale.py [--models 50] [--challenges 200] [--keep DIR] [--rounds 3]
                          [--only scan,store,startup,keys,reports]

Generates a synthetic workbench in a scratch folder (or DIR, reused when it
already holds one of that size): M models x C challenges of the workbench's
own (scaffolded with `challenge new`; the bundled eight come too), each
answer folder with 6 files (PROMPT.md, a solution, its test, notes, a
session transcript, a CUDA file or a results JSON): 10,000 folders and
60,000 files at the default size. Transcripts are the published benchmark's
real pi sessions (27-330 KB) and the other formats' samples (Claude Code,
Codex, OpenCode), each made unique. Then the store gets one run per answer
with 8 checks and two grades per answer (a human's and a judge's).

Measures (and the goal each is held to):
- cold scan (<= 15 s; ``cold_scan_phases``: wall and CPU of each of its phases) and rescan with nothing changed (<= 2 s; ``--only rescan``
  rescans a kept store without the cold scan first);
- process start to the matrix on screen against a bare Textual app (<= 1.5x,
  the same as on the demo workbench: bench/tui.py's method);
- per-key latency in the matrix (scroll, filter, sort, palette, jump; <= 100 ms):
  ``keys_terminal``, on a real pseudo-terminal, key bytes written to the last
  byte of the redraw (bench/tui_keys.py); ``keys``, in a headless app through
  Textual's pilot, whose own floor is ~85 ms a key, with CPU time per key;
- leaderboard and each export (<= 2 s); store size;
- the dashboard's peak memory (<= 400 MB): the child that drove the keys.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
PUBLISHED = REPO.parent / "shared" / "published-benchmark" / "llm_programming_tests"
SAMPLES = REPO / "tests" / "transcripts" / "samples"
# sample file -> a token that appears in it and names the session (made unique per copy)
SAMPLE_TOKENS = {"claude_code.jsonl": "cc-1", "codex.jsonl": "cx-1", "opencode_export.json": "ses_abc",
                 "opencode_run.jsonl": "ses_run"}
VERDICTS = ("pass", "pass", "pass", "fail", "fail", "error", "timeout", "unbound", "compile_error", "skipped")
LETTERS = ("A", "A-", "B+", "B", "B-", "C+", "C", "D", "F")


# -- the workbench ---------------------------------------------------------------------
def transcript_templates() -> list[tuple[str, str, str]]:
    """(file name, text, token to make unique): real pi sessions, then the samples."""
    out = []
    for path in sorted(PUBLISHED.glob("*/*/*.jsonl")) if PUBLISHED.is_dir() else []:
        text = path.read_text(encoding="utf-8", errors="replace")
        first = json.loads(text.split("\n", 1)[0])
        out.append(("session.jsonl", text, first["id"]))
    for name, token in SAMPLE_TOKENS.items():
        out.append((name, (SAMPLES / name).read_text(encoding="utf-8"), token))
    return out


def solution_source(rng: random.Random, model: str, cid: str) -> str:
    lines = [f'"""{model}\'s answer to {cid}."""', "import numpy as np", ""]
    for i in range(rng.randint(40, 160)):
        lines += [f"def step_{i}(x, scale={rng.random():.6f}):", f"    return np.tanh(x * scale + {i})", ""]
    lines += [f"def {cid}(x):", "    z = x - x.max(axis=-1, keepdims=True)", "    e = np.exp(z)",
              "    return e / e.sum(axis=-1, keepdims=True)", ""]
    return "\n".join(lines)


def generate(root: Path, n_models: int, n_challenges: int, seed: int = 20) -> dict:
    from benchtui.authoring.new_challenge import scaffold_challenge

    rng = random.Random(seed)
    started = time.perf_counter()
    cids = [f"task_{i:03d}" for i in range(n_challenges)]
    for cid in cids:
        scaffold_challenge(root / "challenges", cid)
    prompts = {cid: (root / "challenges" / cid / "PROMPT.md").read_bytes() for cid in cids}
    templates = transcript_templates()
    pi = [t for t in templates if t[0] == "session.jsonl"]
    others = [t for t in templates if t[0] != "session.jsonl"]
    files = size = transcripts = 0
    for m in range(n_models):
        model = f"model-{m:02d}"
        for cid in cids:
            d = root / "models" / model / cid
            d.mkdir(parents=True)
            name, text, token = rng.choice(pi) if pi and rng.random() < 0.85 else rng.choice(others)
            bodies: dict[str, str | bytes] = {
                "PROMPT.md": prompts[cid],
                "solution.py": solution_source(rng, model, cid),
                "test_solution.py": f"from solution import {cid}\n\n\ndef test_{model.replace('-', '_')}():\n"
                                    f"    assert {cid} is not None\n" * 3,
                "NOTES.md": f"# {model} on {cid}\n\n" + "Design notes, trade-offs and complexity. " * rng.randint(20, 80),
                name: text.replace(token, f"{token}-{model}-{cid}"),
            }
            if rng.random() < 0.3:
                bodies["kernel.cu"] = f"// {model} {cid}\n" + "__global__ void k(float* x) { x[threadIdx.x] *= 2.f; }\n" * 60
            else:
                bodies["results.json"] = json.dumps({"model": model, "challenge": cid, "loss": rng.random(),
                                                     "steps": [rng.random() for _ in range(50)]})
            for rel, body in bodies.items():
                data = body.encode("utf-8") if isinstance(body, str) else body
                (d / rel).write_bytes(data)
                files += 1
                size += len(data)
            transcripts += 1
    (root / "models" / ".generated").write_text(json.dumps([n_models, n_challenges]))
    return {"models": n_models, "challenges": n_challenges, "answer_folders": n_models * n_challenges,
            "files": files, "transcripts": transcripts, "mb": round(size / 1e6, 1),
            "seconds": round(time.perf_counter() - started, 1)}


def seed_store(store) -> dict:
    """One run per answer with 8 checks, a human and a judge grade per answer."""
    from benchtui.grading.grades import ensure_grader, parse_grade

    rng = random.Random(7)
    answers = store.query("select model, challenge from answers where status = 'answer' order by model, challenge")
    human, judge = ensure_grader(store, "reviewer", "human"), ensure_grader(store, "judge-llm", "judge")
    runs = checks = grades = 0
    t = time.perf_counter()
    with store.conn:
        db = store.conn
        for a in answers:
            verdict = rng.choice(VERDICTS)
            cur = db.execute(
                "insert into runs (model, challenge, status, verdict, backend, device, started_at, finished_at, "
                "duration_s, message, stdout, stderr, self_status) values (?, ?, 'done', ?, 'cpu', 'cpu', "
                "'2026-01-01T00:00:00.000Z', '2026-01-01T00:00:03.000Z', 3.0, ?, 'checking...', '', 'pass')",
                (a["model"], a["challenge"], verdict, f"{verdict}: synthetic"))
            run_id = cur.lastrowid
            runs += 1
            rows = [(run_id, i, f"check_{i}", verdict if i == 3 else "pass", json.dumps(rng.random() * 1e-9),
                     json.dumps(1e-9), "", json.dumps({"shape": [4, 64]})) for i in range(7)]
            rows.append((run_id, 7, "speed", "info", json.dumps(rng.random() * 2), "null", "speedup", "{}"))
            db.executemany("insert into checks (run_id, position, name, verdict, value, threshold, message, details) "
                           "values (?, ?, ?, ?, ?, ?, ?, ?)", rows)
            checks += len(rows)
            for who in (human, judge):
                g = parse_grade(rng.choice(LETTERS))
                db.execute("insert into grades (model, challenge, dimension, letter, score, points, grader_id, "
                           "rubric_version, created_at, source) values (?, ?, 'overall', ?, ?, ?, ?, '1', "
                           "'2026-01-02T00:00:00.000Z', 'bench')",
                           (a["model"], a["challenge"], g.letter, g.score, g.points, who.id))
                grades += 1
    return {"runs": runs, "checks": checks, "grades": grades, "seconds": round(time.perf_counter() - t, 1)}


# -- measurements ------------------------------------------------------------------------
def _children_cpu() -> float:
    """CPU seconds of this process's finished children (the scan's parsing workers)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def put_under_git(root: Path) -> dict:
    """Commit the workbench (the store ignored), as a user who keeps one in git has it;
    the scan then asks git for each file's status. Reused if already committed."""
    if (root / ".git").is_dir():
        return {"reused": True}
    (root / ".gitignore").write_text("store.db*\n", encoding="utf-8")
    env = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid"}
    t = time.perf_counter()
    for argv in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-q", "-m", "workbench"]):
        subprocess.run(argv, cwd=root, env=env, check=True, capture_output=True)
    files = subprocess.run(["git", "ls-files"], cwd=root, check=True, capture_output=True, text=True).stdout.count("\n")
    return {"committed_files": files, "commit_s": round(time.perf_counter() - t, 1)}


def measure_scans(root: Path) -> dict:
    from benchtui.store.database import Store
    from benchtui.workbench.layout import find_workbench
    from benchtui.workbench.scan import scan_workbench

    for p in root.glob("store.db*"):
        p.unlink()
    wb = find_workbench(str(root), None, root)
    with Store(wb.store_path) as store:
        t, c, k = time.perf_counter(), time.process_time(), _children_cpu()
        cold = scan_workbench(wb, store)
        cold_s, cold_cpu = time.perf_counter() - t, time.process_time() - c
        cold_workers_cpu = _children_cpu() - k  # transcripts parsed in worker processes
        warm_s, warm_cpu = [], []
        for _ in range(3):
            wb = find_workbench(str(root), None, root)  # a fresh process's view: challenges read again
            t, c = time.perf_counter(), time.process_time()
            warm = scan_workbench(wb, store)
            warm_s.append(time.perf_counter() - t)
            warm_cpu.append(time.process_time() - c)
        parsed = store.query("select count(*) as n from transcripts where status = 'ok'")
        seeded = seed_store(store)
    return {"cold_scan_s": round(cold_s, 2), "cold_scan_cpu_s": round(cold_cpu, 2),
            "cold_scan_workers_cpu_s": round(cold_workers_cpu, 2), "goal_cold_s": 15,
            "cold_scan_phases": cold.phases,  # fts_rebuild is part of transcripts
            "rescan_s": round(min(warm_s), 2), "rescan_cpu_s": round(min(warm_cpu), 2),
            "rescan_all_s": [round(x, 2) for x in warm_s], "goal_rescan_s": 2,
            "rescan_hashed": warm.hashed, "rescan_unchanged": warm.unchanged, "models": cold.models, "answers": cold.answers, "files": cold.files,
            "transcripts": cold.transcripts, "transcripts_indexed": parsed[0]["n"] if parsed else None,
            "warnings": len(cold.warnings), "seeded": seeded}


def measure_rescans(root: Path, rounds: int) -> dict:
    """Rescans with nothing changed of the store a scan left (``--keep``): no cold scan first."""
    from benchtui.store.database import Store
    from benchtui.workbench.layout import find_workbench
    from benchtui.workbench.scan import scan_workbench

    wall, cpu = [], []
    with Store(find_workbench(str(root), None, root).store_path) as store:
        for _ in range(max(rounds, 3)):
            wb = find_workbench(str(root), None, root)  # a fresh process's view: challenges read again
            t, c = time.perf_counter(), time.process_time()
            r = scan_workbench(wb, store)
            wall.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
    return {"rescan_s": round(min(wall), 3), "rescan_cpu_s": round(min(cpu), 3),
            "rescan_cpu_all_s": [round(x, 3) for x in cpu], "rescan_all_s": [round(x, 2) for x in wall],
            "goal_rescan_s": 0.3, "answers": r.answers, "files": r.files, "unchanged": r.unchanged, "hashed": r.hashed}


def measure_reports(root: Path) -> dict:
    from benchtui.grading import exports as report
    from benchtui.grading.aggregates import leaderboard
    from benchtui.store.database import Store

    out = {}
    with Store(root / "store.db") as store:
        for name, fn in [("leaderboard", lambda: leaderboard(store))] + [
                (f"export_{fmt}", lambda fmt=fmt: report.export(store, fmt)) for fmt in ("markdown", "csv", "json")]:
            times, cpu = [], []
            for _ in range(3):
                t, c = time.perf_counter(), time.process_time()
                fn()
                times.append(time.perf_counter() - t)
                cpu.append(time.process_time() - c)
            out[name + "_s"] = round(min(times), 3)
            out[name + "_cpu_s"] = round(min(cpu), 3)
    out["goal_s"] = 2
    size = sum(p.stat().st_size for p in root.glob("store.db*"))
    out["store_mb"] = round(size / 1e6, 1)
    return out


def measure_edits(root: Path) -> dict:
    """The matrix's look for answer files edited since the last scan (engine/workbench/edits.py,
    every EDITS_S seconds while the dashboard is idle): one stat per file each shown verdict
    rests on. Last of the stages: it records each run on its answer's files, as benchtui does."""
    from benchtui.store.database import Store
    from benchtui.tui.store_watch import EDITS_S
    from benchtui.workbench.edits import edited_since_scan

    with Store(root / "store.db") as store:
        with store.conn:
            store.conn.execute(
                "update runs set files = (select json_group_object(f.relpath, f.sha256) from files f "
                "join answers a on a.id = f.answer_id where a.model = runs.model and a.challenge = runs.challenge)")
        ids = [i for (i,) in store.conn.execute("select id from runs")]
        files = store.conn.execute("select count(*) from files f join answers a on a.id = f.answer_id "
                                   "where a.present = 1").fetchone()[0]
        times, cpu, edited = [], [], {}
        for _ in range(3):
            t, c = time.perf_counter(), time.process_time()
            edited = edited_since_scan(store, root, ids)
            times.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
    return {"runs": len(ids), "files": files, "edited": len(edited), "look_s": round(min(times), 3),
            "look_cpu_s": round(min(cpu), 3), "every_s": EDITS_S}


KEYS = [("scroll: down", ["down"]), ("scroll: pagedown", ["pagedown"]), ("scroll: end", ["end"]),
        ("scroll: home", ["home"]), ("scroll: right", ["right"]), ("filter: f", ["f"]), ("filter: f again", ["f"]),
        ("filter: back to all", ["f"]), ("sort: s", ["s"]), ("sort: s again", ["s"]), ("sort: back", ["s"]),
        ("palette: open", ["ctrl+p"]), ("palette: type 'model-4 task_19'", list("model-4 task_19")),
        ("palette: jump (enter)", ["enter"]), ("back: escape", ["escape"]), ("leaderboard: l", ["l"]),
        ("leaderboard: back", ["escape"])]


async def _settle_workers(app) -> None:
    """Wait for the app's workers; one cancelled under us (an exclusive worker
    replaced by a newer one) is not an error of the bench."""
    from textual.worker import WorkerCancelled

    for _ in range(20):
        try:
            await app.workers.wait_for_complete()
            return
        except WorkerCancelled:
            continue


async def _floor(presses: int) -> float:
    """The harness's own cost per key: a bare Textual app, a key it ignores."""
    from textual.app import App
    from textual.widgets import Static

    class Bare(App):
        def compose(self):
            yield Static("bare")

    times = []
    async with Bare().run_test(size=(140, 45)) as pilot:
        for _ in range(presses):
            t = time.perf_counter()
            await pilot.press("down")
            await pilot.pause()
            await _settle_workers(pilot.app)
            await pilot.pause()
            times.append(time.perf_counter() - t)
    return statistics.median(times)


# what --quick presses in the headless app: a scroll and the leaderboard
QUICK_KEYS = ("scroll: down", "leaderboard: l", "leaderboard: back")


async def _drive(root: Path, repeat: int, quick: bool = False) -> dict:
    from benchtui.tui.app import BenchApp
    from benchtui.workbench.layout import find_workbench

    wb = find_workbench(str(root), None, root)
    app = BenchApp(wb, scan_on_start=True)
    lat: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}  # this process's CPU per key (all its threads)
    async with app.run_test(size=(140, 45)) as pilot:
        t = time.perf_counter()
        for _ in range(3):
            await pilot.pause()
            await _settle_workers(app)
        settle_s = time.perf_counter() - t
        print(f"settled in {settle_s:.1f} s", file=sys.stderr, flush=True)
        for _ in range(repeat):
            for label, keys in [k for k in KEYS if not quick or k[0] in QUICK_KEYS]:
                t, c = time.perf_counter(), time.process_time()
                for key in keys:
                    await pilot.press(key)
                await pilot.pause()
                await _settle_workers(app)
                await pilot.pause()
                per_key = (time.perf_counter() - t) / len(keys)
                lat.setdefault(label, []).append(per_key)
                cpu.setdefault(label, []).append((time.process_time() - c) / len(keys))
                print(f"{label}: {per_key * 1000:.0f} ms", file=sys.stderr, flush=True)
            while len(app.screen_stack) > 1:
                await pilot.press("escape")
                await pilot.pause()
        screens = type(app.screen).__name__
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    floor = await _floor(2 if quick else 5 * repeat)
    return {"startup_and_rescan_settled_s": round(settle_s, 2), "screen_at_end": screens,
            "harness_floor_ms": round(floor * 1000, 1),
            "per_key_ms": {k: round(statistics.median(v) * 1000, 1) for k, v in lat.items()},
            "worst_key_ms": round(max(statistics.median(v) for v in lat.values()) * 1000, 1),
            "per_key_cpu_ms": {k: round(statistics.median(v) * 1000, 1) for k, v in cpu.items()},
            "worst_key_cpu_ms": round(max(statistics.median(v) for v in cpu.values()) * 1000, 1),
            "goal_key_ms": 100, "peak_rss_mb": round(rss, 1), "goal_rss_mb": 400}


def measure_keys(root: Path, repeat: int, quick: bool = False) -> dict:
    """In a child process, so its peak memory is the dashboard's alone."""
    env = {**os.environ, "BENCHTUI_CONFIG": str(root / "no-keys.toml"), "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, __file__, "--child-keys", str(root), "--rounds", str(repeat)]
                         + (["--quick"] if quick else []),
                         capture_output=True, text=True, env=env, timeout=1800)
    if out.returncode != 0:
        return {"error": out.stderr[-2000:]}
    return json.loads(out.stdout)


def keys_terminal(root: Path, rounds: int, only: list[str] | None = None, quick: bool = False) -> dict:
    """Per-key latency on a real pseudo-terminal (bench/tui_keys.py): key bytes in,
    the redraw's last byte out. The headless ``keys`` stage above carries the
    pilot's own ~85 ms per key; this one a bare app's few milliseconds."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("tui_keys", REPO / "bench" / "tui_keys.py")
    tui_keys = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tui_keys)
    return tui_keys.bench_keys(root, rounds, only=only, quick=quick)


def startup(root: Path, rounds: int, quick: bool = False) -> dict:
    """bench/tui.py's start-up method on the demo workbench and on this one
    (``quick``: this one only, the copy without bytecode only: no compileall)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_tui", REPO / "bench" / "tui.py")
    bench_tui = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench_tui)
    sys.path.insert(0, str(REPO / "tests" / "tui"))
    from tui_demo import build_demo

    def first_screen_markers(root: Path) -> list:
        # bench/tui.py waits for the last column and row, which a 140x45 terminal
        # cannot show at this size: the status line's counts, the first model,
        # the first challenge and the footer's last key instead.
        marks = small_markers(root)
        from benchtui.store.database import Store
        from benchtui.store.queries import empty_bundled, load_matrix

        with Store(root / "store.db") as store:
            m = load_matrix(store)
            empty = empty_bundled(store)
        shown = [c for c in m.challenges if c.id not in empty] or m.challenges
        return [marks[0], m.models[0], shown[0].label[:22], marks[3]]

    small_markers = bench_tui.matrix_markers
    bench_tui.matrix_markers = first_screen_markers
    tmp = Path(tempfile.mkdtemp(prefix="benchtui-scale-demo-"))
    try:
        benches = {"scale": root} if quick else {"demo": build_demo(tmp / "demo"), "scale": root}
        out = bench_tui.bench_startup(benches, rounds=rounds, modes=("no_bytecode",) if quick else ("bytecode", "no_bytecode"))
        out["what"] += ("; here every workbench's markers are the status line, the first model, the first "
                        "challenge and the footer's last key (the last column and row do not fit at scale)")
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def cpu_seconds() -> dict:
    """CPU seconds so far of this process and of its finished children (the
    dashboards, scan workers and apps it started): on a shared machine a wall
    time includes waiting for a core, these do not."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"process": round(own.ru_utime + own.ru_stime, 2), "children": round(kids.ru_utime + kids.ru_stime, 2)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", type=int, default=50)
    p.add_argument("--challenges", type=int, default=200)
    p.add_argument("--keep", type=Path, help="generate into (or reuse) this folder instead of a scratch one")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--only", default="scan,rescan,reports,startup,keys,keys_terminal,edits")
    p.add_argument("--git", action="store_true",
                   help="put the workbench under git (one commit of every file but the store) first")
    p.add_argument("--child-keys", type=Path, help=argparse.SUPPRESS)
    p.add_argument("--quick", action="store_true", help="small sizes, one round, no goal asserted: the test suite runs it so the script cannot rot")
    started = time.perf_counter()
    args = p.parse_args()
    if args.quick:
        args.models, args.challenges, args.rounds = 2, 3, 1
    if args.child_keys:
        import asyncio

        print(json.dumps(asyncio.run(_drive(args.child_keys, args.rounds, args.quick))))
        return
    only = set(args.only.split(","))
    root = args.keep or Path(tempfile.mkdtemp(prefix="benchtui-scale-"))
    result: dict = {"machine": {"cpus": os.cpu_count(), "loadavg_at_start": os.getloadavg(),
                                "note": "shared machine: wall times include waiting for the CPU; *_cpu_s is this "
                                        "process's own CPU time"}}
    marker = root / "models" / ".generated"
    if marker.is_file() and json.loads(marker.read_text()) == [args.models, args.challenges]:
        result["generated"] = "reused " + str(root)
    else:
        if root.exists():
            shutil.rmtree(root)
        root.mkdir(parents=True)
        result["generated"] = generate(root, args.models, args.challenges)
    if args.git:
        result["git"] = put_under_git(root)
    stages = [("scan", lambda: measure_scans(root)), ("rescan", lambda: measure_rescans(root, args.rounds)),
              ("reports", lambda: measure_reports(root)),
              ("keys", lambda: measure_keys(root, args.rounds, args.quick)),
              ("keys_terminal", lambda: keys_terminal(root, args.rounds, ["scroll: down", "leaderboard"] if args.quick else None,
                                                      quick=args.quick)),
              ("startup", lambda: startup(root, args.rounds, args.quick)), ("edits", lambda: measure_edits(root))]
    try:
        for name, run in stages:
            if name in only or (name == "scan" and not (root / "store.db").exists()):
                try:
                    result[name] = run()
                except Exception as exc:  # one stage failing keeps the others' figures
                    result[name] = {"error": f"{type(exc).__name__}: {exc}"[:2000]}
                print(json.dumps({name: result[name]}), file=sys.stderr, flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    result["machine"]["loadavg_at_end"] = os.getloadavg()
    result["machine"]["cpu_s"] = cpu_seconds()
    result["machine"]["wall_s"] = round(time.perf_counter() - started, 1)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
