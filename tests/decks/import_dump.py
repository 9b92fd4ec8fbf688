"""What an import left in a workbench, comparable across folders and runs: each file's
sha256 (the deck's and workbench's paths in it written as <deck> and <wb>) and every row
the import writes (deck_imports, deck_results, deck_annotations, notes), the times aside."""
from __future__ import annotations

import hashlib
import os
import sqlite3
from pathlib import Path

TABLES = ("deck_imports", "deck_results", "deck_annotations", "notes")
TIMES = {"imported_at", "created_at"}


def _plain(value, deck: Path, root: Path):
    if isinstance(value, str):
        return value.replace(str(deck), "<deck>").replace(str(root), "<wb>")
    return value


def dump(root: Path, deck: Path, *, times: bool = False) -> dict:
    """``times``: keep the stamps of when each row was written."""
    files = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        rel = Path(dirpath).relative_to(root).as_posix()
        files[rel + "/"] = None
        for name in sorted(filenames):
            if not name.startswith("store.db"):
                data = (Path(dirpath) / name).read_bytes()
                data = data.replace(os.fsencode(deck), b"<deck>").replace(os.fsencode(root), b"<wb>")
                files[f"{rel}/{name}"] = hashlib.sha256(data).hexdigest()
    tables = {}
    with sqlite3.connect(root / "store.db") as conn:
        for table in TABLES:
            cur = conn.execute(f"select * from {table} order by id")
            names = [d[0] for d in cur.description]
            tables[table] = [{k: _plain(v, deck, root) for k, v in zip(names, row) if times or k not in TIMES}
                             for row in cur]
    return {"files": files, "tables": tables}
