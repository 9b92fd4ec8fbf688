"""``benchtui salvage OUT``: what SQLite can still read of a damaged store's
hand-made rows (grades, graders, notes, name aliases), written out as JSON,
with the rows it could not read named by the ids around them.

Each table is read row by row in id order (``rowid > ?``): a read that meets a
damaged page fails, and the smallest id past which reading works again is
found by bisection, so the rows lost are exactly those behind the damage.
Where the file's header (its first 100 bytes: the format, the page size) is
damaged, a scratch copy with the header's first 32 bytes rewritten is read
instead; where the schema page itself is unreadable, the sqlite3 shell's
``.recover`` (when installed) rebuilds what it can into a scratch database first."""
from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from benchtui.store.database import now_iso

TABLES = ("graders", "grades", "notes", "name_aliases")  # what a person made; the rest a scan or run remakes
MAX_ID = 2 ** 62


class SalvageError(Exception):
    """Nothing could be written; one line for the user."""


@dataclass
class Salvage:
    source: str
    method: str = "page by page"
    tables: dict[str, list[dict]] = field(default_factory=dict)
    unreadable: list[dict] = field(default_factory=list)  # {table, after_id, next_id, error}

    def to_dict(self) -> dict:
        return {"source": self.source, "salvaged_at": now_iso(), "method": self.method, "tables": self.tables,
                "hand_grades": hand_grades(self.tables), "unreadable": self.unreadable}


def _open(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    db.row_factory = sqlite3.Row
    return db


def _next_row(db: sqlite3.Connection, table: str, after: int) -> dict | None:
    row = db.execute(f'select rowid as _rowid_, * from "{table}" where rowid > ? order by rowid limit 1', (after,)).fetchone()
    return dict(row) if row else None


def _readable_past(db: sqlite3.Connection, table: str, bad: int) -> tuple[int | None, str]:
    """The smallest id past which reading works again (None: never), and the error."""
    error = ""
    ok = None
    step = 1
    while bad + step < MAX_ID:  # gallop out of the damage, then bisect back to its edge
        try:
            _next_row(db, table, bad + step)
            ok = bad + step
            break
        except sqlite3.DatabaseError as exc:
            error = error or str(exc)
            step *= 2
    if ok is None:
        return None, error
    lo = bad + step // 2 if step > 1 else bad  # fails at lo, works at ok
    while ok - lo > 1:
        mid = (lo + ok) // 2
        try:
            _next_row(db, table, mid)
            ok = mid
        except sqlite3.DatabaseError:
            lo = mid
    return ok, error


def read_table(db: sqlite3.Connection, table: str) -> tuple[list[dict], list[dict]]:
    """(rows read, unreadable stretches) of one table."""
    rows, gaps, after = [], [], 0
    while True:
        try:
            row = _next_row(db, table, after)
        except sqlite3.DatabaseError as exc:
            resume, error = _readable_past(db, table, after)
            try:
                following = _next_row(db, table, resume) if resume is not None else None
            except sqlite3.DatabaseError:
                following = None
            gaps.append({"table": table, "after_id": after, "next_id": following["_rowid_"] if following else None,
                         "error": error or str(exc)})
            if following is None:
                break
            row = following
        if row is None:
            break
        after = row.pop("_rowid_")
        rows.append(row)
    return rows, gaps


def _recover(path: Path, scratch: Path) -> Path:
    """The sqlite3 shell's ``.recover`` of ``path`` loaded into a new database."""
    shell = shutil.which("sqlite3")
    if shell is None:
        raise SalvageError("the store's schema is unreadable and the sqlite3 shell (for .recover) is not installed: "
                           "nothing could be salvaged")
    dump = subprocess.run([shell, str(path), ".recover"], capture_output=True, text=True, timeout=600)
    out = scratch / "recovered.db"
    load = subprocess.run([shell, str(out)], input=dump.stdout, capture_output=True, text=True, timeout=600)
    if not out.is_file():
        raise SalvageError(f"sqlite3 .recover could not rebuild the store ({(dump.stderr or load.stderr).strip()[:200]}): "
                           "nothing could be salvaged")
    return out


SQLITE_MAGIC = b"SQLite format 3\x00"
PAGE_SIZES = (4096, 1024, 2048, 8192, 16384, 32768, 65536, 512)  # the default first


def _header(page_size: int, whole: bool = False) -> bytes:
    """The first 32 bytes of a database file with ``page_size`` pages: its magic, the page size,
    file format 1 (rollback journal), no reserved bytes, the fixed payload fractions, and a
    change counter of 0 with a page count of 0, so SQLite takes the size from the file.
    ``whole``: all 100 bytes, the rest as benchtui's stores have them (schema format 4, UTF-8,
    no free list, no auto-vacuum)."""
    size = 1 if page_size == 65536 else page_size
    first = SQLITE_MAGIC + size.to_bytes(2, "big") + bytes([1, 1, 0, 64, 32, 32]) + bytes(8)
    if not whole:
        return first
    rest = bytearray(68)
    rest[44 - 32:48 - 32] = (4).to_bytes(4, "big")  # schema format
    rest[56 - 32:60 - 32] = (1).to_bytes(4, "big")  # UTF-8
    return first + bytes(rest)


def _rewrite_header(path: Path, scratch: Path) -> tuple[Path, int] | None:
    """A copy of ``path`` with its file header (which holds no row) rewritten, its first 32 bytes
    and then all 100, at the first page size under which its schema reads and holds a hand-made
    table; None if none does. Everything after the header is the store's own."""
    data = bytearray(path.read_bytes())
    if len(data) < 512:
        return None
    out = scratch / "header-rewritten.db"
    original = bytes(data[:100])
    for whole, page_size in [(w, p) for w in (False, True) for p in PAGE_SIZES]:
        if len(data) % page_size:
            continue
        data[:100] = _header(page_size, whole) + original[100 if whole else 32:]
        out.write_bytes(bytes(data))
        try:
            db = _open(out)
            try:
                names = {r[0] for r in db.execute("select name from sqlite_master where type = 'table'")}
            finally:
                db.close()
        except sqlite3.DatabaseError:
            continue
        if names & set(TABLES):
            return out, page_size
    return None


def salvage(path: Path | str) -> Salvage:
    path = Path(path)
    if not path.is_file():
        raise SalvageError(f"no store at {path}")
    result = Salvage(str(path))
    with tempfile.TemporaryDirectory(prefix="benchtui-salvage-") as tmp:
        db = _open(path)
        try:
            names = {r[0] for r in db.execute("select name from sqlite_master where type = 'table'")}
        except sqlite3.DatabaseError as exc:
            db.close()
            # a damaged file header (its first bytes overwritten) hides every intact page behind it
            rewritten = _rewrite_header(path, Path(tmp))
            if rewritten is not None:
                db = _open(rewritten[0])
                result.method = (f"page by page, its file header rewritten ({rewritten[1]}-byte pages): "
                                 f"the header was unreadable ({exc})")
            else:
                db = _open(_recover(path, Path(tmp)))
                result.method = f"sqlite3 .recover (the schema was unreadable: {exc})"
            names = {r[0] for r in db.execute("select name from sqlite_master where type = 'table'")}
            if not names & set(TABLES):
                db.close()
                raise SalvageError(f"the store's schema is unreadable ({exc}) and sqlite3 .recover found none of "
                                   f"its tables ({', '.join(TABLES)}): nothing could be salvaged") from exc
        try:
            for table in TABLES:
                if table not in names:
                    result.unreadable.append({"table": table, "after_id": None, "next_id": None,
                                              "error": "the table is not in the readable schema"})
                    continue
                rows, gaps = read_table(db, table)
                result.tables[table] = rows
                result.unreadable.extend(gaps)
        finally:
            db.close()
    return result


def hand_grades(tables: dict[str, list[dict]]) -> list[dict]:
    """The current grades by people: each grader's newest valid grade per answer and dimension."""
    kinds = {g["id"]: (g.get("name"), g.get("kind")) for g in tables.get("graders", [])}
    superseded = {g.get("supersedes") for g in tables.get("grades", []) if g.get("supersedes")}
    current: dict[tuple, dict] = {}
    for g in sorted(tables.get("grades", []), key=lambda g: g["id"]):
        name, kind = kinds.get(g.get("grader_id"), (None, None))
        if kind != "human" or g.get("invalidated_at") or g["id"] in superseded:
            continue
        current[(g["model"], g["challenge"], g["dimension"], name)] = {
            "model": g["model"], "challenge": g["challenge"], "dimension": g["dimension"], "letter": g.get("letter"),
            "score": g.get("score"), "grader": name, "grader_kind": kind, "note": g.get("note"),
            "created_at": g.get("created_at"), "grade_id": g["id"]}
    return sorted(current.values(), key=lambda g: (g["model"], g["challenge"], g["dimension"], g["grader"] or ""))


def write(result: Salvage, out: Path | str) -> Path:
    out = Path(out).expanduser()
    if out.exists():
        raise SalvageError(f"{out} already exists; choose a new file name")
    if not out.parent.is_dir():
        raise SalvageError(f"folder {out.parent} does not exist")
    out.write_text(json.dumps(result.to_dict(), indent=2, default=str) + "\n", encoding="utf-8")
    return out
