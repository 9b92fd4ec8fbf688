"""What the damaged-store check costs every command and the dashboard's start
(SQLite's quick_check before anything writes). Prints JSON.

    python bench/store_check.py [STORE.db ...] [--grow-mb 50]

Times `Store(path, check=True)` against `Store(path)` (best of 5) on each store
given, and on a synthetic store grown to --grow-mb MB of transcript entries:
the full check (its remembered result forgotten before each open) and the
open that finds the store as a process that checked it left it
(engine/store/sound_mark.py).
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchtui.store import sound_mark  # noqa: E402
from benchtui.store.database import Store  # noqa: E402


def best(fn, n: int = 5) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def measure(path: Path) -> dict:
    plain = best(lambda: Store(path).close())

    def full() -> None:
        sound_mark.found_damaged(path)  # forgets it: the check reads every page
        Store(path, check=True).close()

    checked = best(full)
    remembered = best(lambda: Store(path, check=True).close())  # each close leaves the mark the next open finds
    return {"store": str(path), "mib": round(path.stat().st_size / 2**20, 1), "open_s": round(plain, 4),
            "open_checked_s": round(checked, 4), "check_cost_s": round(checked - plain, 4),
            "open_checked_remembered_s": round(remembered, 4)}


def grown(folder: Path, mb: int) -> Path:
    path = folder / "grown.db"
    with Store(path) as store:
        blob = "x" * 4000
        with store.conn:
            store.conn.executemany("insert into meta (key, value) values (?, ?)",
                                   ((f"k{i}", blob) for i in range(mb * 2**20 // 4000)))
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("stores", nargs="*", type=Path)
    ap.add_argument("--grow-mb", type=int, default=50)
    ap.add_argument("--quick", action="store_true", help="small sizes, one round, no goal asserted: the test suite runs it so the script cannot rot")
    args = ap.parse_args()
    if args.quick:
        args.grow_mb = 2
    out = []
    with tempfile.TemporaryDirectory(prefix="benchtui-check-") as tmp:
        for path in args.stores:
            copy = Path(tmp) / f"{len(out)}.db"
            shutil.copyfile(path, copy)  # never touch the store measured
            out.append(measure(copy) | {"store": str(path)})
        out.append(measure(grown(Path(tmp), args.grow_mb)) | {"store": f"synthetic {args.grow_mb} MB"})
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
