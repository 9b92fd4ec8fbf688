"""Dashboard performance, printed as JSON.

    python bench/tui.py

    python bench/tui.py --only startup [--rounds N] [--published PATH] [--code OLD_CHECKOUT]

- startup: process start -> the matrix on a 140x45 pseudo-terminal set up as a tmux
  pane's (TERM=tmux-256color): status line, every column and row, the footer's keys.
  `benchtui` as typed, beside a one-widget Textual app (`python3 bare.py`) started
  the same way, interleaved, with and without bytecode for engine/ and tui/, on the
  demo workbench and on a scratch copy of the published benchmark (goal: <= 1.5x,
  best and median of the rounds); --code times another checkout (a before/after);
- transcript: open a ~330 KB pi transcript until its rows are shown (goal: < 150 ms);
- diff: side-by-side + unified diff of two 1,700-line files (goal: < 100 ms);
- memory: RSS after opening every transcript of the demo workbench.
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import fcntl
import json
import os
import pty
import re
import resource
import select
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "tui"))

BARE = """\
from textual.app import App
from textual.widgets import Static


class Bare(App):
    def compose(self):
        yield Static("hello from a bare app")


Bare().run()
"""
ANSI = re.compile(rb"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|P[^\x1b]*?\x1b\\|[()][0-9A-Za-z]|[=>78cMDE])")
CTRL_Q = b"\x11"  # quits both apps (Textual's own binding)


def time_in_terminal(argv: list[str], markers: list, env: dict, size=(140, 45), timeout: float = 60.0,
                     cwd: Path | None = None) -> float:
    """Seconds from spawning ``argv`` in a fresh pseudo-terminal of ``size``
    (columns, rows) until everything in ``markers`` (strings or compiled
    patterns) has been written to the terminal, escape codes removed: what a
    terminal emulator would draw. Then ctrl+q, and a kill if it lingers."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", size[1], size[0], 0, 0))
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd, start_new_session=True)
    os.close(slave)
    raw, shown = bytearray(), None
    try:
        while shown is None and time.perf_counter() - start < timeout:
            if not select.select([master], [], [], 0.5)[0]:
                if proc.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(master, 1 << 16)
            except OSError:  # the child closed the terminal
                break
            raw += chunk
            text = ANSI.sub(b"", bytes(raw)).decode("utf-8", "replace")
            if all(m in text if isinstance(m, str) else m.search(text) for m in markers):
                shown = time.perf_counter() - start
        if shown is None:
            tail = ANSI.sub(b"", bytes(raw)).decode("utf-8", "replace")[-600:]
            raise RuntimeError(f"{argv[0]} never showed {markers}: {tail!r}")
        os.write(master, CTRL_Q)
        while proc.poll() is None and time.perf_counter() - start < shown + 15:
            if select.select([master], [], [], 0.05)[0]:
                with contextlib.suppress(OSError):
                    os.read(master, 1 << 16)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        os.close(master)
    return shown


def matrix_markers(root: Path) -> list:
    """What the matrix's first frame must show: the status line with the
    store's counts, the last model's column, the last challenge's row and the
    footer's last matrix key (Textual's footer lists keys a frame late)."""
    from benchtui.store.database import Store
    from benchtui.store.queries import empty_bundled, load_matrix
    from benchtui.tui.screens.matrix import MatrixScreen
    from benchtui.workbench.layout import find_workbench

    with Store(find_workbench(str(root), None, root).store_path) as store:
        m = load_matrix(store)
        empty = empty_bundled(store)
    last_key = [b.description for b in MatrixScreen.BINDINGS if b.show][-1]
    # the matrix leaves out the bundled challenges no model has a folder for
    # (unless they are all there is) and says how many in its status line
    shown = [c for c in m.challenges if c.id not in empty] or m.challenges
    return [f"{len(m.models)} models × {len(shown)} challenges", m.models[-1], shown[-1].label[:22],
            re.compile(r"\b\S+ " + re.escape(last_key) + r"\b")]


def code_copies(tmp: Path, source: Path = REPO, modes=("bytecode", "no_bytecode")) -> dict[str, Path]:
    """Two private copies of the benchtui package (engine/ with tui/ inside, the bundled folders linked),
    put first on PYTHONPATH so `benchtui` runs them: "bytecode" precompiled,
    as a normal install has them; "no_bytecode" without any, as an editable
    install has them on a machine that sets PYTHONDONTWRITEBYTECODE (this one
    does; the children run with it, so they never write any). Copies, so the
    bench controls their bytecode without touching the working tree (others
    may be running from it) and times one snapshot of the code throughout.
    Textual's bytecode (written by pip) is there for both, and for the bare app."""
    out = {}
    for mode in modes:
        dest = tmp / mode
        package = dest / "benchtui"  # laid out as the wheel lays it out: engine/ is the package, tui/ inside it
        shutil.copytree(source / "engine", package, ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copytree(source / "tui", package / "tui", ignore=shutil.ignore_patterns("__pycache__"))
        (package / "bundled").mkdir()
        (package / "bundled" / "challenges").symlink_to(source / "challenges")
        (package / "bundled" / "demo").symlink_to(source / "models")
        if mode == "bytecode":
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(package)], check=True)
        out[mode] = dest
    return out


def bench_startup(workbenches: dict[str, Path], rounds: int = 7, size=(140, 45), code: Path = REPO,
                  term: str = "tmux-256color", colorterm: str = "", modes=("bytecode", "no_bytecode")) -> dict:
    """Process start -> first frame on a terminal, interleaved: per round and
    workbench, the bare app and benchtui, with and without bytecode (``modes``),
    in alternating order. Both are started as a person types them: the
    executables on PATH (``python3 bare.py`` and ``benchtui``)."""
    tmp = Path(tempfile.mkdtemp(prefix="benchtui-startup-"))
    bare_py = tmp / "bare.py"
    bare_py.write_text(BARE, encoding="utf-8")
    python3, benchtui = shutil.which("python3"), shutil.which("benchtui")
    if not python3 or not benchtui:
        raise RuntimeError("python3 and benchtui must be on PATH (pip install -e .)")
    # A tmux pane's terminal by default (TERM=tmux-256color, no COLORTERM: 256
    # colours, so Textual maps every colour it draws to that palette).
    base = {**os.environ, "TERM": term, "COLORTERM": colorterm, "PYTHONDONTWRITEBYTECODE": "1",
            "BENCHTUI_CONFIG": str(tmp / "no-keys.toml")}
    # COLUMNS and LINES would override the pseudo-terminal's own size in Textual
    for name in ("BENCHTUI_WORKBENCH", "TEXTUAL_COLOR_SYSTEM", "COLUMNS", "LINES") + (() if colorterm else ("COLORTERM",)):
        base.pop(name, None)
    markers = {name: matrix_markers(root) for name, root in workbenches.items()}
    times: dict[tuple[str, str], list[float]] = {}
    bare: dict[tuple[str, str], list[float]] = {}
    try:
        envs = {}
        for mode, copy in code_copies(tmp, code, modes).items():
            envs[mode] = {**base, "PYTHONPATH": os.pathsep.join(filter(None, [str(copy), os.environ.get("PYTHONPATH")]))}
            probe = subprocess.run([python3, "-c", "import benchtui, benchtui.tui; print(benchtui.__file__, benchtui.tui.__file__)"],
                                   env=envs[mode], cwd=tmp, capture_output=True, text=True, check=True).stdout.split()
            assert all(Path(f).is_relative_to(copy) for f in probe), f"benchtui would not run the copy: {probe}"
        for r in range(rounds):
            for name, root in workbenches.items():
                for mode in (modes if r % 2 == 0 else modes[::-1]):
                    runs = [("bare", [python3, str(bare_py)], ["hello from a bare app"]),
                            ("app", [benchtui, "--workbench", str(root)], markers[name])]
                    for kind, argv, want in (runs if r % 2 == 0 else runs[::-1]):
                        t = time_in_terminal(argv, want, envs[mode], size, cwd=tmp)
                        (bare if kind == "bare" else times).setdefault((name, mode), []).append(t)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    out: dict = {"what": f"process start -> the matrix on a {size[0]}x{size[1]} pseudo-terminal (status line, last "
                         "column, last row, footer keys); bare = one-Static Textual app until its text shows; "
                         "ratio = benchtui / bare",
                 "terminal": f"TERM={term} COLORTERM={colorterm}",
                 "rounds": rounds, "goal_ratio": 1.5, "python3": python3, "benchtui": benchtui,
                 "code": str(code) + ("" if code == REPO else " (--code)")}
    for (name, mode), app_t in times.items():
        bare_t = bare[(name, mode)]
        out.setdefault(name, {})[mode] = {
            "bare_best_s": round(min(bare_t), 3), "app_best_s": round(min(app_t), 3),
            "ratio_best": round(min(app_t) / min(bare_t), 2),
            "bare_median_s": round(statistics.median(bare_t), 3), "app_median_s": round(statistics.median(app_t), 3),
            "ratio_median": round(statistics.median(app_t) / statistics.median(bare_t), 2),
            "bare_all_s": sorted(round(t, 3) for t in bare_t), "app_all_s": sorted(round(t, 3) for t in app_t),
        }
    return out


def scratch_published(source: Path, dest: Path) -> Path:
    """A scratch copy of a published benchmark, scanned and with its README's
    judge grades imported, so the matrix has content (the source is never written)."""
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns("store.db*", ".git"))
    for args in (["scan"], ["grades", "import", str(dest / "README.md"), "--grader", "readme-judge"]):
        subprocess.run([shutil.which("benchtui") or "benchtui", "--workbench", str(dest), *args],
                       check=args == ["scan"], capture_output=True)
    return dest


async def _open_transcript(wb, model: str, challenge: str, relpath: str) -> float:
    from benchtui.tui.app import BenchApp

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
    from benchtui.store.database import Store
    from benchtui.workbench.scan import scan_workbench

    with Store(wb.store_path) as store:
        scan_workbench(wb, store)
    times = [asyncio.run(_open_transcript(wb, "demo-careful", "backwards", "big-session.jsonl")) for _ in range(3)]
    return {"bytes": len(text.encode()), "open_to_shown_ms": round(min(times) * 1000, 1),
            "median_ms": round(statistics.median(times) * 1000, 1), "goal_ms": 150}


async def _open_big_file(wb, model: str, challenge: str, relpath: str, text: str) -> dict:
    """Open ``relpath`` and time, with a ticker on the event loop, the plain text
    shown, the highlighting shown, and the loop's longest stall between them."""
    from benchtui.tui.app import BenchApp
    from benchtui.tui.screens.answer import AnswerScreen
    from benchtui.tui.widgets.code_view import CodeView

    app = BenchApp(wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        stalls: list[float] = []
        done = asyncio.Event()

        async def tick():
            last = time.perf_counter()
            while not done.is_set():
                await asyncio.sleep(0.005)
                now = time.perf_counter()
                stalls.append(now - last)
                last = now

        ticker = asyncio.create_task(tick())
        start = time.perf_counter()
        app.open_answer(model, challenge, relpath)
        plain_at = highlighted_at = None
        while highlighted_at is None and time.perf_counter() - start < 120:
            await asyncio.sleep(0.005)
            views = app.screen.query("#file-view") if isinstance(app.screen, AnswerScreen) else []
            view = views.first() if views else None
            if isinstance(view, CodeView) and view.text == text:
                plain_at = plain_at or time.perf_counter()
                if view.language is not None:
                    highlighted_at = time.perf_counter()
        done.set()
        await ticker
    return {"plain_ms": round((plain_at - start) * 1000, 1) if plain_at else None,
            "highlighted_ms": round((highlighted_at - start) * 1000, 1) if highlighted_at else None,
            "longest_stall_ms": round(max(stalls) * 1000, 1)}


def bench_big_file(wb, mib: int = 1, rounds: int = 3) -> dict:
    """A 1 MiB Python file opened in the answer screen: the screen's longest stall
    (tree-sitter holds the GIL while it parses and queries; the goal is that no
    stall is felt as a frozen screen)."""
    from benchtui.store.database import Store
    from benchtui.workbench.scan import scan_workbench

    answer = wb.root / "models" / "demo-careful" / "backwards"
    unit = (answer / "layernorm.py").read_text()
    size = mib * 1024 * 1024
    text = (unit * (size // len(unit) + 1))[:size]
    (answer / "big.py").write_text(text)
    with Store(wb.store_path) as store:
        scan_workbench(wb, store)
    runs = [asyncio.run(_open_big_file(wb, "demo-careful", "backwards", "big.py", text)) for _ in range(rounds)]
    return {"bytes": size, "runs": runs, "longest_stall_ms": max(r["longest_stall_ms"] for r in runs),
            "goal_stall_ms": 250}


def bench_diff() -> dict:
    from benchtui.tui.diffing import diff_lines

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
    from benchtui.store.database import Store
    from benchtui.transcripts import TranscriptError, load_transcript
    from benchtui.tui.transcript_rows import build_rows

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


PUBLISHED = REPO.parent / "shared" / "published-benchmark" / "llm_programming_tests"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("startup", "diff", "memory", "transcript", "big_file"), action="append",
                        help="run only these parts (repeatable; default: all)")
    parser.add_argument("--rounds", type=int, default=7, help="start-up rounds (default 7)")
    parser.add_argument("--code", type=Path, default=REPO,
                        help="time the engine/ and tui/ of this tree instead (an older checkout, for a before/after)")
    parser.add_argument("--term", default="tmux-256color", help="TERM for start-up (default: %(default)s, as in tmux)")
    parser.add_argument("--colorterm", default="", help="COLORTERM for start-up (default: unset; 'truecolor' for 24-bit)")
    parser.add_argument("--published", type=Path, default=PUBLISHED,
                        help="a published benchmark to time start-up on too, from a scratch copy (default: %(default)s)")
    parser.add_argument("--quick", action="store_true", help="the demo only, one round, no goal asserted: the test suite runs it so the script cannot rot")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.published = 1, None
    only = set(args.only or ("startup", "diff", "memory", "transcript", "big_file"))

    from benchtui.workbench.layout import find_workbench
    from tui_demo import build_demo

    with tempfile.TemporaryDirectory() as tmp:
        root = build_demo(Path(tmp) / "wb")
        os.environ.setdefault("BENCHTUI_CONFIG", str(Path(tmp) / "none.toml"))
        wb = find_workbench(str(root), None, root)
        result = {}
        if "startup" in only:
            benches = {"demo": root}
            if args.published and args.published.is_dir():
                benches["published"] = scratch_published(args.published, Path(tmp) / "published")
            result["startup"] = bench_startup(benches, rounds=args.rounds, code=args.code.resolve(), term=args.term,
                                              colorterm=args.colorterm)
        if "diff" in only:
            result["diff"] = bench_diff()
        if "memory" in only:
            result["memory"] = bench_memory(wb)
        if "transcript" in only:
            result["transcript"] = bench_transcript(wb)
        if "big_file" in only:
            result["big_file"] = bench_big_file(wb, rounds=1 if args.quick else 3)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
