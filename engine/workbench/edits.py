"""Answer files edited since the last scan, told by ``stat`` alone (size and
mtime against what the scan recorded; nothing read or hashed): cheap enough for
the dashboard to look every few seconds, so a verdict on files edited while it
is open is marked stale before the next rescan hashes them and says exactly
what changed."""
from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from benchtui.store.database import Store
from benchtui.store.runs_sql import judged_file_stats


def edited_since_scan(store: Store, root: Path, run_ids: Iterable[int]) -> dict[int, str]:
    """Run id -> "kernel.py edited since the last scan" for each run whose answer
    has a file the run was judged on that is gone or no longer has the size and
    mtime the last scan recorded; runs recorded without their files are left out."""
    ids = [i for i in run_ids if i is not None]
    out: dict[int, str] = {}
    base = str(root)
    for i in range(0, len(ids), 500):
        chunk = ids[i:i + 500]
        rows = judged_file_stats(store, chunk)
        judged_on: dict[int, set[str]] = {}
        edited: dict[int, list[str]] = {}
        for run_id, files, folder, rel, size, mtime_ns in rows:
            if run_id not in judged_on:
                try:
                    judged_on[run_id] = set(json.loads(files))
                except (ValueError, TypeError):
                    judged_on[run_id] = set()
            if rel not in judged_on[run_id] or not folder:
                continue
            try:
                st = os.stat(f"{base}/{folder}/{rel}")  # a string: a Path per file cost as much as the stat
            except OSError:
                edited.setdefault(run_id, []).append(rel)  # gone since the scan
                continue
            if st.st_size != size or st.st_mtime_ns != mtime_ns:
                edited.setdefault(run_id, []).append(rel)
        for run_id, names in edited.items():
            names.sort()
            out[run_id] = (f"{names[0]} edited" if len(names) == 1 else
                           f"{len(names)} files edited ({', '.join(names[:3])}{', ...' if len(names) > 3 else ''})") \
                + " since the last scan (ctrl+r says what changed)"
    return out
