"""Chunk-by-chunk trace of what the dashboard writes after each key. Prints text.

    python bench/tui_trace.py WORKBENCH KEY [KEY ...] [--size 140x45] [--quiet 0.6]

Each KEY is a name from KEYS below or a literal string (typed byte by byte as
one key each: on the matrix, a letter is a key binding, and `r` then `s`
starts runs). For every key: each chunk read from the pseudo-terminal, as
milliseconds after the key's bytes were written and its size in bytes, then
the dashboard's CPU time for the key. Uses bench/tui_keys.py's Terminal; the
dashboard is `benchtui` on PATH (PYTHONPATH picks the code it runs).
TRACE_TEXT=1 also prints each chunk's text; TRACE_RAW=1 each small chunk's
bytes (which cells a late, small frame redraws).
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import select
import shutil
import tempfile
import time
from pathlib import Path

spec = importlib.util.spec_from_file_location("tui_keys", Path(__file__).with_name("tui_keys.py"))
tui_keys = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tui_keys)

KEYS = {"ctrl+p": b"\x10", "enter": b"\r", "escape": b"\x1b", "down": b"\x1b[B", "up": b"\x1b[A",
        "right": b"\x1b[C", "left": b"\x1b[D", "home": b"\x1b[H", "end": b"\x1b[F",
        "pagedown": b"\x1b[6~", "pageup": b"\x1b[5~", "tab": b"\t", "backspace": b"\x7f"}


def trace(term, data: bytes, quiet: float, limit: float) -> list[tuple[float, int]]:
    chunks = []
    c = term.cpu_s()
    t = time.perf_counter()
    os.write(term.master, data)
    last = None
    while True:
        now = time.perf_counter()
        wait = (t + 10 - now) if last is None else min(last + quiet, t + limit) - now
        if wait <= 0 or not select.select([term.master], [], [], wait)[0]:
            break
        chunk = os.read(term.master, 1 << 16)
        last = time.perf_counter()
        term.raw += chunk
        chunks.append(((last - t) * 1000, len(chunk)))
        if os.environ.get("TRACE_RAW") and len(chunk) < 3000:
            print("  RAW", chunk[:400])
        if os.environ.get("TRACE_TEXT"):
            print(f"  {(last - t) * 1000:.0f} ms {len(chunk)} B: {tui_keys.screen_text(chunk)[:160]!r}")
    return chunks, (term.cpu_s() - c) * 1000


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("workbench", type=Path, nargs="?", help="the workbench (--quick: a scratch demo one)")
    p.add_argument("keys", nargs="*")
    p.add_argument("--quick", action="store_true",
                   help="the keys down and escape on a scratch copy of the demo workbench: the test suite runs it "
                        "so the script cannot rot")
    p.add_argument("--size", default="140x45")
    p.add_argument("--quiet", type=float, default=0.4)
    p.add_argument("--limit", type=float, default=2.0, help="stop reading a key after this many seconds")
    args = p.parse_args()
    size = tuple(int(x) for x in args.size.split("x"))
    tmp = Path(tempfile.mkdtemp(prefix="benchtui-trace-"))
    if args.quick:
        import sys

        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "tui"))
        from tui_demo import build_demo

        args.workbench, args.keys = build_demo(tmp / "demo"), args.keys or ["down", "escape"]
    elif args.workbench is None or not args.keys:
        p.error("a workbench and at least one key are needed (or --quick)")
    term = tui_keys.Terminal([shutil.which("benchtui"), "--workbench", str(args.workbench.resolve())],
                             tui_keys._env(tmp), size, cwd=tmp)
    try:
        term.wait_for(" models × ")
        term.wait_for("indexed ")
        term.read_until_quiet(tui_keys.SETTLE_S)
        print(f"load {os.getloadavg()[0]:.2f}")
        for key in args.keys:
            for name, data in ([(key, KEYS[key])] if key in KEYS else [(c, c.encode()) for c in key]):
                chunks, cpu = trace(term, data, args.quiet, args.limit)
                total = sum(n for _, n in chunks)
                print(f"{name!r}: {len(chunks)} chunks, {total} bytes, last {chunks[-1][0] if chunks else 0:.0f} ms, "
                      f"cpu {cpu:.0f} ms: " + " ".join(f"{ms:.0f}:{n}" for ms, n in chunks), flush=True)
    finally:
        term.close()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
