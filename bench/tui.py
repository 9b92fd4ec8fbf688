"""Dashboard performance, printed as JSON.

    python bench/tui.py

- startup: process start -> matrix ready (headless, demo workbench copy), beside a
  bare Textual app measured the same way in the same run (goal: <= 1.5x);
- transcript: open a ~330 KB pi transcript until its rows are shown (goal: < 150 ms);
- diff: side-by-side + unified diff of two 1,700-line files (goal: < 100 ms);
- memory: RSS after opening every transcript of the demo workbench.
"""
from __future__ import annotations

import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "tui"))

BARE = """
import sys, time
from textual.app import App
from textual.widgets import Footer, Header, Static
class Bare(App):
    def compose(self):
        yield Header(); yield Static("hello"); yield Footer()
    def on_mount(self):
        self.call_after_refresh(self.done)
    def done(self):
        print(time.time()); self.exit()
Bare().run(headless=True, size=(100, 30))
"""

MATRIX = """
import sys, time
sys.path.insert(0, {repo!r})
from tui.screens.matrix import MatrixScreen
original = MatrixScreen.on_matrix_screen_loaded
def loaded(self, message):
    original(self, message)
    self.call_after_refresh(lambda: (print(time.time()), sys.stdout.flush(), self.app.exit()))
MatrixScreen.on_matrix_screen_loaded = loaded
import tui.app
run = tui.app.BenchApp.run
tui.app.BenchApp.run = lambda self, **kw: run(self, headless=True, size=(100, 30))
from engine.cli import main
main(["--workbench", {wb!r}])  # the real `benchtui` path: CLI, store, app, rescan worker
"""


def time_child(code: str) -> float:
    env = {**os.environ, "BENCHTUI_CONFIG": "/nonexistent/keys.toml"}
    start = time.time()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    lines = [l for l in out.stdout.strip().splitlines() if l.strip()]
    if not lines:
        raise RuntimeError(f"child printed nothing: {out.stderr[-500:]}")
    return float(lines[0]) - start  # the first "ready" line


def precompile() -> str:
    """Bytecode for engine/ and tui/, as any normal install has. Textual's own
    bytecode was written by pip; without this, a machine that sets
    PYTHONDONTWRITEBYTECODE (this one does) recompiles benchtui on every start
    and the comparison would be unfair to it."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "engine"), str(REPO / "tui")], check=True)
    return "engine/ and tui/ precompiled" + (" (PYTHONDONTWRITEBYTECODE is set here)" if os.environ.get("PYTHONDONTWRITEBYTECODE") else "")


def bench_startup(wb: Path, rounds: int = 9) -> dict:
    bytecode = precompile()
    bare, matrix = [], []
    for _ in range(rounds):  # interleaved so both see the same machine state
        bare.append(time_child(BARE))
        matrix.append(time_child(MATRIX.format(repo=str(REPO), wb=str(wb))))
    b, m = statistics.median(bare), statistics.median(matrix)
    return {"bare_app_s": round(b, 3), "matrix_ready_s": round(m, 3), "ratio": round(m / b, 2), "goal_ratio": 1.5,
            "rounds": rounds, "path": "engine.cli.main(['--workbench', WB]) headless, until the matrix's first frame",
            "bytecode": bytecode}


async def _open_transcript(wb, model: str, challenge: str, relpath: str) -> float:
    from tui.app import BenchApp

    app = BenchApp(wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        start = time.perf_counter()
        app.open_transcript(model, challenge, relpath)
        while getattr(app.screen, "shown_at", None) is None:  # set after the frame with the rows is drawn
            await asyncio.sleep(0.001)
        return app.screen.shown_at - start


def bench_transcript(wb) -> dict:
    from tui_demo import pi_session

    answer = wb.root / "models" / "demo-careful" / "backwards"
    text = pi_session(turns=65, pad=3)  # ~330 KB
    (answer / "big-session.jsonl").write_text(text, encoding="utf-8")
    from engine.scan import scan_workbench
    from engine.store import Store

    with Store(wb.store_path) as store:
        scan_workbench(wb, store)
    times = [asyncio.run(_open_transcript(wb, "demo-careful", "backwards", "big-session.jsonl")) for _ in range(3)]
    return {"bytes": len(text.encode()), "open_to_shown_ms": round(min(times) * 1000, 1),
            "median_ms": round(statistics.median(times) * 1000, 1), "goal_ms": 150}


def bench_diff() -> dict:
    from tui.diffing import diff_lines

    a = [f"    value_{i} = compute(x[{i}], scale={i % 7}, bias=b[{i % 13}])  # step {i}" for i in range(1700)]
    b = list(a)
    for i in range(0, 1700, 23):
        b[i] = b[i].replace("scale", "factor")
    for i in range(5, 1700, 97):
        b.insert(i, f"    extra_{i} = 0")
    times = []
    for _ in range(5):
        start = time.perf_counter()
        d = diff_lines(a, b)
        times.append(time.perf_counter() - start)
    return {"lines": [len(a), len(b)], "changes": len(d.changes), "ms": round(statistics.median(times) * 1000, 1),
            "goal_ms": 100}


def bench_memory(wb) -> dict:
    from engine.store import Store
    from engine.transcripts import TranscriptError, load_transcript
    from tui.transcript_rows import build_rows

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    opened, failed, rows = 0, 0, 0
    with Store(wb.store_path) as store:
        found = store.query("select a.path, t.relpath from transcripts t join answers a on a.id = t.answer_id")
    kept = []
    for r in found:
        try:
            t = load_transcript(wb.root / r["path"] / r["relpath"])
        except TranscriptError:
            failed += 1
            continue
        opened += 1
        built = build_rows(t.entries, 98, set())
        rows += len(built)
        kept.append((t, built))  # all open at once, as a reviewer with many tabs would have them
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"transcripts": opened, "unreadable": failed, "rows": rows,
            "max_rss_mb": round(after / 1024, 1), "growth_mb": round((after - before) / 1024, 1)}


def main() -> None:
    from engine.workbench import find_workbench
    from tui_demo import build_demo

    with tempfile.TemporaryDirectory() as tmp:
        root = build_demo(Path(tmp) / "wb")
        os.environ.setdefault("BENCHTUI_CONFIG", str(Path(tmp) / "none.toml"))
        wb = find_workbench(str(root), None, root)
        result = {
            "startup": bench_startup(root),
            "diff": bench_diff(),
            "memory": bench_memory(wb),
            "transcript": bench_transcript(wb),
        }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
