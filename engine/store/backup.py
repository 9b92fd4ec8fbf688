"""``benchtui backup FILE``: a consistent copy of the store, taken with
``VACUUM INTO`` so it is safe while a run or the dashboard is writing (the
copy is one read transaction: it sees a single committed state)."""
from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path


class BackupError(Exception):
    """The copy could not be made; one line for the user."""


@dataclass(frozen=True)
class BackupResult:
    path: Path
    bytes: int
    integrity: str


def backup(store_path: Path | str, dest: Path | str) -> BackupResult:
    """Copy the store at ``store_path`` to ``dest`` (which must not exist)
    and check the copy's integrity."""
    src, dest = Path(store_path), Path(dest).expanduser()
    if not src.is_file():
        raise BackupError(f"no store at {src}")
    if dest.exists():
        raise BackupError(f"{dest} already exists; choose a new file name")
    if not dest.parent.is_dir():
        raise BackupError(f"folder {dest.parent} does not exist")
    partial = dest.with_name(dest.name + ".partial")
    partial.unlink(missing_ok=True)
    try:
        conn = sqlite3.connect(str(src), timeout=30)
        try:
            conn.execute("PRAGMA busy_timeout=30000")
            conn.execute("VACUUM INTO ?", (str(partial),))
        finally:
            conn.close()
        check = sqlite3.connect(str(partial))
        try:
            integrity = check.execute("PRAGMA integrity_check").fetchone()[0]
        finally:
            check.close()
        if integrity != "ok":
            raise BackupError(f"the copy failed its integrity check: {integrity}")
        os.replace(partial, dest)  # only a checked copy gets the name asked for
    except sqlite3.DatabaseError as exc:
        raise BackupError(f"backup failed: {exc}") from exc
    finally:
        partial.unlink(missing_ok=True)
    return BackupResult(dest, dest.stat().st_size, integrity)
