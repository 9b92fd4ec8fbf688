"""A store found sound, remembered beside it: SQLite's quick_check reads every
page (1.8 s of CPU for a 1.5 GB store), and every command checked the store
before it ran.

When a process has checked its store (or found it remembered as sound), each
of its handles records at close the store file's identity as it leaves it
(inode, size, mtime and ctime, and the WAL file's) in ``store.db-sound``. The
next check that finds the same identity takes the store as sound without
reading it. Anything that writes the file by other means than this process's
SQLite connections moves its mtime or its ctime (which nothing can set back),
and a file put in its place has another inode: the full check runs again.

What this cannot see: damage that leaves the file's stat as it was (a disk
flipping bits under an unchanged file, or a write by another program within
the same clock tick as this process's last write). SQLite still refuses a
page it cannot read when it comes to it, and removing ``store.db-sound``
has the next command check the whole store.
"""
from __future__ import annotations

import json
import os
import threading
from contextlib import suppress
from pathlib import Path

_sound: set[str] = set()  # the stores (by path) this process found sound
# the identity this process last wrote for each store: a handle closed on a store no write
# touched since leaves it unwritten (the dashboard opens and closes one per screen load);
# skipping a write can only cost a full check, never skip one
_written: dict[str, list] = {}
_lock = threading.Lock()


def mark_path(path: Path) -> Path:
    return path.with_name(path.name + "-sound")


def identity(path: Path) -> list | None:
    """The store file's and its WAL's stat, as JSON would hold it; None if the store is missing."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    try:
        wal = os.stat(path.with_name(path.name + "-wal"))
        # an empty WAL holds nothing (opening a connection makes one)
        wal_id = [wal.st_ino, wal.st_size, wal.st_mtime_ns, wal.st_ctime_ns] if wal.st_size else None
    except OSError:
        wal_id = None
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, wal_id]


def remembered_sound(path: Path) -> bool:
    """Whether the store at ``path`` is as a process that found it sound left it."""
    try:
        kept = json.loads(mark_path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    now = identity(path)
    return now is not None and kept == now


def found_sound(path: Path) -> None:
    """This process checked the store (or found it remembered): its handles record it at close."""
    with _lock:
        _sound.add(os.path.abspath(path))


def found_damaged(path: Path) -> None:
    """Forget the store as sound (in this process and beside it)."""
    with _lock:
        _sound.discard(os.path.abspath(path))
        _written.pop(os.path.abspath(path), None)
    with suppress(OSError):
        mark_path(path).unlink()


def record(path: Path) -> None:
    """After a handle on ``path`` closed: its identity now, if this process found it sound.
    Written whole (a temporary file renamed into place): handles in several threads close."""
    if os.path.abspath(path) not in _sound:
        return
    now = identity(path)
    if now is None or _written.get(os.path.abspath(path)) == now:
        return
    mark = mark_path(path)
    tmp = mark.with_name(f"{mark.name}.{os.getpid()}.{threading.get_ident()}")
    try:
        tmp.write_text(json.dumps(now), encoding="utf-8")
        os.replace(tmp, mark)
        _written[os.path.abspath(path)] = now
    except OSError:
        with suppress(OSError):
            tmp.unlink()
