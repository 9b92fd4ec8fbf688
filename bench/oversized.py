"""Memory of scanning a workbench holding a transcript over the 10 MB text cap
(one rule; memory bounded by the cap). Prints JSON.

    python bench/oversized.py [--mb 50] [--code CHECKOUT]

Builds one answer with a ~MB-sized pi session, then runs `benchtui scan` in a
fresh process (of this checkout, or --code's for a before/after) and reports
its peak RSS, wall time and what `show` says about the transcript.
Goal: peak RSS independent of the transcript's size (bounded by the cap).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def build(root: Path, mb: int) -> int:
    answer = root / "models" / "m" / "kv"
    answer.mkdir(parents=True)
    (answer / "kv.py").write_text("def prefill(k, v, lengths):\n    pass\n")
    lines = ['{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00Z","cwd":"/w"}']
    size, i = 0, 0
    while size < mb * 1024 * 1024:
        line = json.dumps({"type": "message", "id": f"{i:08x}", "parentId": f"{i - 1:08x}" if i else None,
                           "timestamp": "2026-01-01T00:00:01Z",
                           "message": {"role": "user" if i % 2 == 0 else "assistant",
                                       "content": [{"type": "text", "text": "word " * 500}], "timestamp": 1}})
        lines.append(line)
        size += len(line) + 1
        i += 1
    (answer / "session.jsonl").write_text("\n".join(lines) + "\n")
    return (answer / "session.jsonl").stat().st_size


def child_peak(cmd: list[str], env: dict) -> tuple[float, int, str]:
    """(seconds, peak RSS in KiB of the command's process, stdout)."""
    started = time.perf_counter()
    wrapper = ("import resource, subprocess, sys; p = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
               "print(p.stdout); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", wrapper, *cmd], capture_output=True, text=True, env=env, cwd=env["PYTHONPATH"])
    return time.perf_counter() - started, int(out.stderr.strip().splitlines()[-1]), out.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--mb", type=int, default=50)
    ap.add_argument("--code", type=Path, default=REPO, help="the checkout to time (default: this one)")
    ap.add_argument("--quick", action="store_true", help="a transcript just over the cap, one round, no goal asserted: the test suite runs it so the script cannot rot")
    args = ap.parse_args()
    if args.quick:
        args.mb = 11
    with tempfile.TemporaryDirectory(prefix="benchtui-oversized-") as tmp:
        root = Path(tmp) / "wb"
        size = build(root, args.mb)
        env = {**os.environ, "PYTHONPATH": str(args.code.resolve())}
        base = [sys.executable, "-m", "benchtui", "--workbench", str(root)]
        seconds, peak_kib, _ = child_peak(base + ["scan"], env)
        _, _, shown = child_peak(base + ["show", "m", "kv"], env)
        line = next((x for x in shown.splitlines() if x.startswith("transcript:")), "")
        print(json.dumps({"code": str(args.code.resolve()), "transcript_bytes": size, "scan_s": round(seconds, 2),
                          "scan_peak_rss_mib": round(peak_kib / 1024, 1), "show_says": line}, indent=2))


if __name__ == "__main__":
    main()
