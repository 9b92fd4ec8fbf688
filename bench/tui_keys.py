"""Per-key latency of the dashboard on a real pseudo-terminal. Prints JSON.

    python bench/tui_keys.py WORKBENCH [--rounds 5] [--size 140x45] [--only grades,compare]

What a person sees: ``benchtui --workbench WORKBENCH`` runs in a fresh
pseudo-terminal (a tmux pane's TERM); once the matrix is up and the start-up
rescan has finished and the terminal has been quiet for a while, each key's
bytes are written to the terminal and the bench reads what the dashboard
draws. A key's latency is the time from writing its bytes to the last byte of
the redraw it caused (the terminal then stays quiet for ``QUIET_S``); the
first byte's time is reported too. The dashboard's CPU time per key (all its
threads, from /proc) is beside it. The floor is a bare Textual app whose key
rewrites a line of text, measured the same way.

Why not Textual's pilot: ``pilot.press`` waits for idleness in 20 ms sleeps,
several per key, so its own floor is ~85 ms (bench/scale.py's headless figures
carry it), and a headless app never writes its frames to a terminal.
"""
from __future__ import annotations

import argparse
import fcntl
import json
import os
import pty
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


def _bench_tui():
    """bench/tui.py (its name would shadow the tui package on sys.path)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_tui", REPO / "bench" / "tui.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


ANSI = _bench_tui().ANSI  # escape codes, as bench/tui.py strips them
QUIET_S = 0.4  # a redraw is over once the terminal has been quiet this long
FIRST_WITHIN_S = 10.0  # a key with no redraw by then drew nothing
SETTLE_S = 2.0  # before the first key: the start-up rescan and its redraws are over
CLK_TCK = os.sysconf("SC_CLK_TCK")

# (label, [(key name, bytes an xterm-like terminal sends)]); matrix_keys adds steps
# labelled None, not timed (a name typed there goes in one write)
MATRIX_KEYS = [
    ("scroll: down", [("down", b"\x1b[B")]),
    ("scroll: pagedown", [("pagedown", b"\x1b[6~")]),
    ("scroll: end", [("end", b"\x1b[F")]),
    ("scroll: home", [("home", b"\x1b[H")]),
    ("scroll: right", [("right", b"\x1b[C")]),
    # the cursor is on the target answer (matrix_keys): open it
    ("answer: enter", [("enter", b"\r")]),
    ("answer: back", [("escape", b"\x1b")]),
    ("grades: g", [("g", b"g")]),
    ("grades: back", [("escape", b"\x1b")]),
    ("transcript: t", [("t", b"t")]),
    ("transcript: back", [("escape", b"\x1b")]),
    ("compare: c", [("c", b"c")]),
    ("compare: back", [("escape", b"\x1b")]),
    ("filter: f", [("f", b"f")]),
    ("filter: f again", [("f", b"f")]),
    ("filter: back to all", [("f", b"f")]),
    ("sort: s", [("s", b"s")]),
    ("sort: s again", [("s", b"s")]),
    ("sort: s third", [("s", b"s")]),
    ("sort: back", [("s", b"s")]),
    ("palette: open", [("ctrl+p", b"\x10")]),
    # (matrix_keys puts the typing of the target answer's name here)
    ("palette: jump (enter)", [("enter", b"\r")]),
    ("back: escape", [("escape", b"\x1b")]),
    # a query nothing matches (a typo) walks the fuzzy fallback over every target
    ("palette: open again", [("ctrl+p", b"\x10")]),
    ("palette: type 'model-4'", [(c, c.encode()) for c in "model-4"]),
    ("palette: typo 'zq' (no target)", [(c, c.encode()) for c in "zq"]),
    ("palette: close", [("escape", b"\x1b")]),
    ("leaderboard: l", [("l", b"l")]),
    ("leaderboard: back", [("escape", b"\x1b")]),
]


# keys that act on the highlighted answer (the others need no cursor placing)
TARGETED = ("answer:", "grades:", "transcript:", "compare:")


def matrix_keys(target: tuple[str, str] | None) -> list[tuple[str | None, list[tuple[str, bytes]]]]:
    """The keys of one round. ``target`` (model, challenge) is an answer with a
    transcript: the cursor is put on it (untimed, through the palette's model and
    challenge jumps) before the keys that act on the highlighted answer, so that on a
    real workbench, where many cells hold no answer or no transcript, ``t`` opens a
    transcript and each ``escape`` goes back from a screen. Without it a key that
    opens nothing (a toast instead) is followed by an escape that does nothing, and
    the bench timed the next unrelated redraw (the toast expiring, ~4.6 s)."""
    place: list = []
    query = "model-4 task_19"
    if target is not None:
        model, challenge = target
        query = f"{model}/{challenge}"
        place = [(None, [("ctrl+p", b"\x10"), ("type", f"model {model}".encode()), ("enter", b"\r")]),
                 (None, [("ctrl+p", b"\x10"), ("type", f"challenge {challenge}".encode()), ("enter", b"\r")])]
    after = {"scroll: right": place, "palette: open": [(f"palette: type '{query}'", [(c, c.encode()) for c in query])]}
    return [row for label, keys in MATRIX_KEYS for row in [(label, keys), *after.get(label, [])]]


BARE = """\
from textual.app import App
from textual.widgets import Static


class Bare(App):
    n = 0

    def compose(self):
        yield Static("hello from a bare app", id="s")

    def on_key(self, event):
        self.n += 1
        self.query_one("#s", Static).update(f"key {self.n}: {event.key}")


Bare().run()
"""


def screen_text(raw: bytes) -> str:
    """What was written, escape codes removed."""
    return ANSI.sub(b"", bytes(raw)).decode("utf-8", "replace")


class Terminal:
    """A child process on a pseudo-terminal of (columns, rows)."""

    def __init__(self, argv: list[str], env: dict, size=(140, 45), cwd=None):
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", size[1], size[0], 0, 0))
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd,
                                     start_new_session=True)
        os.close(slave)
        self.raw = bytearray()

    def read_until_quiet(self, quiet: float, limit: float = 30.0,
                         first_within: float | None = None) -> tuple[float | None, float | None]:
        """Read until nothing came for ``quiet`` seconds after the last byte (before the
        first byte: ``first_within`` seconds, default ``quiet``): (first, last) byte times."""
        first = last = None
        start = time.perf_counter()
        first_within = quiet if first_within is None else first_within
        while time.perf_counter() - start < limit:
            now = time.perf_counter()
            wait = (start + first_within - now) if last is None else (last + quiet - now)
            if wait <= 0 or not select.select([self.master], [], [], wait)[0]:
                break
            try:
                chunk = os.read(self.master, 1 << 16)
            except OSError:
                break
            now = time.perf_counter()
            self.raw += chunk
            first = first if first is not None else now
            last = now
        return first, last

    def wait_for(self, text: str, limit: float = 120.0) -> None:
        start = time.perf_counter()
        while text not in screen_text(self.raw):
            if time.perf_counter() - start > limit or self.proc.poll() is not None:
                raise RuntimeError(f"never showed {text!r}: {screen_text(self.raw)[-500:]!r}")
            self.read_until_quiet(0.2, limit=1.0)

    def cpu_s(self) -> float:
        with open(f"/proc/{self.proc.pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK

    def key(self, data: bytes, quiet: float = QUIET_S) -> dict:
        c = self.cpu_s()
        t = time.perf_counter()
        os.write(self.master, data)
        first, last = self.read_until_quiet(quiet, first_within=FIRST_WITHIN_S)
        return {"first_ms": None if first is None else (first - t) * 1000,
                "last_ms": None if last is None else (last - t) * 1000, "cpu_ms": (self.cpu_s() - c) * 1000}

    def close(self) -> None:
        try:
            os.write(self.master, b"\x11")  # ctrl+q
            self.proc.wait(timeout=10)
        except Exception:
            pass
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        os.close(self.master)


def _env(tmp: Path) -> dict:
    env = {**os.environ, "TERM": "tmux-256color", "BENCHTUI_CONFIG": str(tmp / "no-keys.toml")}
    # COLUMNS and LINES (exported by some shells, and by pytest-xdist's workers) would
    # override the pseudo-terminal's own size in Textual
    for name in ("COLORTERM", "BENCHTUI_WORKBENCH", "TEXTUAL_COLOR_SYSTEM", "COLUMNS", "LINES"):
        env.pop(name, None)
    return env


def _summary(samples: list[dict]) -> dict:
    lasts = [s["last_ms"] for s in samples if s["last_ms"] is not None]
    firsts = [s["first_ms"] for s in samples if s["first_ms"] is not None]
    return {"median_ms": round(statistics.median(lasts), 1) if lasts else None,
            "worst_ms": round(max(lasts), 1) if lasts else None,
            "first_byte_median_ms": round(statistics.median(firsts), 1) if firsts else None,
            "cpu_median_ms": round(statistics.median(s["cpu_ms"] for s in samples), 1),
            "samples": len(samples), "no_redraw": len(samples) - len(lasts)}


def pick_answer(workbench: Path) -> tuple[str, str] | None:
    """An answer with a parsed transcript, from the workbench's store (read only):
    the first by model and challenge. None when the store holds none."""
    import sqlite3

    from benchtui.workbench.layout import find_workbench  # the repository is on sys.path: bench/tui.py put it there

    store = find_workbench(str(workbench), None, workbench).store_path
    if not Path(store).is_file():
        return None
    conn = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        row = conn.execute("select a.model, a.challenge from answers a join transcripts t on t.answer_id = a.id "
                           "where a.present and t.status = 'ok' order by a.model, a.challenge limit 1").fetchone()
    finally:
        conn.close()
    return tuple(row) if row else None


# What ``quick`` keeps of a round (the test suite runs it so the script cannot rot):
# a scroll, the target answer opened and left (so the cursor placing runs) and the
# leaderboard, each with a shorter quiet window; its figures are not for quoting.
QUICK_KEYS = ["scroll: down", "answer: enter", "answer: back", "leaderboard"]
QUICK_QUIET_S = 0.15


def bench_keys(workbench: Path, rounds: int = 5, size=(140, 45), only: list[str] | None = None,
               quick: bool = False) -> dict:
    """Per-key figures on ``workbench``. ``quick``: one round of ``only`` (default
    QUICK_KEYS) with short quiet windows and two floor keys, to see the script work."""
    if quick:
        rounds, only = 1, only or QUICK_KEYS
    quiet, settle = (QUICK_QUIET_S, QUICK_QUIET_S * 2) if quick else (QUIET_S, SETTLE_S)
    tmp = Path(tempfile.mkdtemp(prefix="benchtui-keys-"))
    env = _env(tmp)
    benchtui = shutil.which("benchtui")
    if not benchtui:
        raise RuntimeError("benchtui must be on PATH (pip install -e .)")
    out: dict = {"what": f"key bytes written -> last byte of the redraw on a {size[0]}x{size[1]} pseudo-terminal "
                         f"(quiet {quiet} s after it); cpu = the dashboard's CPU time for the key",
                 "rounds": rounds, "goal_ms": 100, "quick": quick}
    try:
        # the floor: a bare Textual app redrawing a line per key
        bare_py = tmp / "bare.py"
        bare_py.write_text(BARE, encoding="utf-8")
        term = Terminal([sys.executable, str(bare_py)], env, size, cwd=tmp)
        try:
            term.wait_for("hello from a bare app")
            term.read_until_quiet(1.0)
            out["floor_bare_app"] = _summary([term.key(b"x", quiet) for _ in range(2 if quick else 5 * rounds)])
        finally:
            term.close()
        per_key: dict[str, list[dict]] = {}
        term = Terminal([benchtui, "--workbench", str(workbench)], env, size, cwd=tmp)
        started = time.perf_counter()
        try:
            term.wait_for(" models × ")
            term.wait_for("indexed ")  # the start-up rescan is over
            term.read_until_quiet(settle)
            out["settled_s"] = round(time.perf_counter() - started, 2)
            rows = [(label, keys) for label, keys in matrix_keys(("", ""))
                    if label is not None and (not only or any(label.startswith(prefix) for prefix in only))]
            # the cursor is put on a target answer only for keys that act on the highlighted one
            target = pick_answer(workbench) if any(label.startswith(TARGETED) for label, _ in rows) else None
            out["target"] = "/".join(target) if target else None
            placed = []
            rows = [(label, keys) for label, keys in matrix_keys(target)
                    if label is None or not only or any(label.startswith(prefix) for prefix in only)]
            for _ in range(rounds):
                for label, keys in rows:
                    at = len(term.raw)
                    for _name, data in keys:
                        if label is None:  # untimed: a step that puts the cursor on the target
                            term.key(data, quiet)
                        else:
                            per_key.setdefault(label, []).append(term.key(data, quiet))
                    if label is None:
                        placed.append(f"{target[0]} / {target[1]}" in screen_text(term.raw[at:]))
            # the detail line names the highlighted answer once the second (challenge) jump lands
            out["target_placed"] = all(placed[1::2]) if placed else None
        finally:
            out["dashboard_alive_at_end"] = term.proc.poll() is None
            term.close()
        out["keys"] = {label: _summary(s) for label, s in per_key.items()}
        medians = [v["median_ms"] for v in out["keys"].values() if v["median_ms"] is not None]
        out["worst_median_ms"] = max(medians) if medians else None
        out["keys_over_goal"] = sorted(k for k, v in out["keys"].items() if (v["median_ms"] or 0) > 100)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def cpu_seconds() -> dict:
    """CPU seconds so far of this process and of its finished children (the
    dashboards, scan workers and apps it started): on a shared machine a wall
    time includes waiting for a core, these do not."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"process": round(own.ru_utime + own.ru_stime, 2), "children": round(kids.ru_utime + kids.ru_stime, 2)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("workbench", type=Path, nargs="?", help="the workbench (--quick: a scratch demo one)")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--size", default="140x45")
    p.add_argument("--only", default="", help="comma-separated label prefixes, e.g. 'grades,compare'")
    p.add_argument("--quick", action="store_true",
                   help="one round of a few keys (a scroll, an answer opened, the leaderboard) with short quiet "
                        "windows on a scratch copy of the demo workbench (or WORKBENCH), no goal asserted: the test "
                        "suite runs it so the script cannot rot")
    started = time.perf_counter()
    args = p.parse_args()
    if not args.quick and args.workbench is None:
        p.error("a workbench is needed (or --quick)")
    cols, rows = (int(x) for x in args.size.split("x"))
    result = {"machine": {"cpus": os.cpu_count(), "loadavg_at_start": os.getloadavg()}}
    with tempfile.TemporaryDirectory(prefix="benchtui-keys-quick-") as tmp:
        if args.quick and args.workbench is None:
            sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "tui"))
            from tui_demo import build_demo

            args.workbench = build_demo(Path(tmp) / "demo")
        result.update(bench_keys(args.workbench.resolve(), args.rounds, (cols, rows),
                                 [x.strip() for x in args.only.split(",") if x.strip()], quick=args.quick))
    result["machine"]["loadavg_at_end"] = os.getloadavg()
    result["machine"]["cpu_s"] = cpu_seconds()
    result["machine"]["wall_s"] = round(time.perf_counter() - started, 1)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
