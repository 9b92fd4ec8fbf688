"""The SQLite store (store.db): opening, migrations, small shared queries.

Every table is created by a named migration in ``engine/store/migrations``; each
applied migration is recorded in ``_migrations`` so re-opening is idempotent.
Areas of the engine (transcripts, runs, grades) own their own migration
modules, named ``mNNN_<what>.py``, applied in name order.
"""
from __future__ import annotations

import importlib
import pkgutil
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from benchtui.store import migrations as _migrations_pkg
from benchtui.store import sound_mark

if TYPE_CHECKING:
    import sqlite_utils


class StoreError(Exception):
    """A store that cannot be opened or migrated; the message is for the user."""


class StoreDamaged(StoreError):
    """The store file is corrupt: say so once, hint at the backup,
    and write nothing more into it."""


# SQLite's words for a damaged file (sqlite3.DatabaseError messages).
DAMAGE_WORDS = ("malformed", "not a database", "corrupt", "disk i/o error")


def is_damage(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.DatabaseError) and any(w in str(exc).lower() for w in DAMAGE_WORDS)


def damage_message(path: Path | str, detail: str) -> str:
    detail = " ".join(str(detail).split())
    return (f"the store {path} is damaged ({detail[:160]}); nothing more was written to it. "
            f"Copy a backup made with `benchtui backup FILE` over it, or move it away and run `benchtui scan` "
            "to rebuild the index (runs, grades and notes live only in the store: `benchtui salvage FILE` "
            "first writes out the grades and notes it can still read, and `benchtui salvage --restore FILE` "
            "after the rescan puts them back)")


SQLITE_HEADER = b"SQLite format 3\x00"


def not_a_store(path: Path) -> str | None:
    """Why an existing path is no store at all (a text file, a folder) rather than a damaged
    one, said so; None for anything else (SQLite decides: a store whose header bytes were
    overwritten is damaged, and salvage reads its pages). Text never was a store."""
    if path.is_dir():
        return f"{path} is a folder, not a store: --store names the store's file (e.g. {path / 'store.db'})"
    try:
        with path.open("rb") as fh:
            head = fh.read(512)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot read the store {path}: {exc.strerror or exc}"
    if not head or head.startswith(SQLITE_HEADER) or b"\x00" in head:
        return None
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # not a character cut at the 512th byte: binary, so SQLite's to judge
            return None
    return f"{path} is not a benchtui store (a text file): --store names a store.db that `benchtui scan` made"


@dataclass(frozen=True)
class Migration:
    name: str

    @property
    def apply(self) -> Callable[[sqlite_utils.Database], None]:
        return importlib.import_module(f"benchtui.store.migrations.{self.name}").apply


# Migrations renamed since they shipped: a store records the name it applied,
# so an older store's rows are renamed before the pending ones are worked out
# (otherwise each renamed migration would run a second time).
RENAMED_MIGRATIONS = {
    "m004_grades": "m003_grades",
    "m005_run_prompt_version": "m004_run_prompt_version",
    "m006_issue19_scan": "m005_scan_warnings_latest",
    "m008_audit": "m007_audit",
    "m009_scale_indexes": "m008_scale_indexes",
    "m010_run_node": "m009_run_node",
}


def discover_migrations() -> list[Migration]:
    """All ``engine.store.migrations.mNNN_*`` modules, in name order (not imported:
    a store that is up to date never loads them)."""
    names = [info.name for info in pkgutil.iter_modules(_migrations_pkg.__path__)
             if info.name.startswith("m") and info.name[1:4].isdigit()]
    return [Migration(name) for name in sorted(names)]


def now_iso() -> str:
    # One reading of the clock: seconds and milliseconds read apart could
    # straddle a second boundary and put a later instant a second earlier.
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now * 1000) % 1000:03d}Z"


class Store:
    """A handle on store.db. Cheap to open; open one per thread.

    Reads go through plain sqlite3 (``query``/``execute``). ``db``, the
    sqlite_utils view used for writes, is created on first use: importing
    sqlite_utils costs ~0.4 s (it pulls in numpy), which the dashboard's
    start-up should not pay before it shows anything.
    """

    def __init__(self, path: Path | str, *, migrate: bool = True, check: bool = False):
        """``check``: run SQLite's quick_check first and raise :class:`StoreDamaged`
        on a corrupt file, before anything (a migration) writes into it."""
        self.path = Path(path)
        self._db: sqlite_utils.Database | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.conn = sqlite3.connect(str(self.path), timeout=30, check_same_thread=False)
            # WAL: readers (the dashboard) never block the writer (a run).
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self.conn.execute("PRAGMA foreign_keys=ON")
            self.conn.execute("PRAGMA busy_timeout=30000")
        except sqlite3.DatabaseError as exc:
            # read only once SQLite has refused the file: opening and closing another descriptor
            # on a store this process has open would drop that connection's locks
            if is_damage(exc) and (other := not_a_store(self.path)) is not None:
                raise StoreError(other) from exc  # never called damaged, never sent to salvage
            if is_damage(exc):
                sound_mark.found_damaged(self.path)
                raise StoreDamaged(damage_message(self.path, str(exc))) from exc
            raise StoreError(f"cannot open store {self.path}: {exc}") from exc
        if check:
            problem = self.check_sound()
            if problem:
                self.conn.close()
                if (other := not_a_store(self.path)) is not None:
                    raise StoreError(other)
                raise StoreDamaged(damage_message(self.path, problem))
        if migrate:
            self.migrate()

    def check_sound(self) -> str | None:
        """damage(), unless the store is as a process that found it sound left it
        (engine/store/sound_mark.py): then None without reading it."""
        if sound_mark.remembered_sound(self.path):
            sound_mark.found_sound(self.path)
            return None
        problem = self.damage()
        if problem:
            sound_mark.found_damaged(self.path)
        else:
            sound_mark.found_sound(self.path)
        return problem

    def damage(self) -> str | None:
        """The first problem SQLite's quick_check finds, or None for a sound file
        (a few ms for a store of a few MB: it reads every page once)."""
        try:
            rows = self.conn.execute("PRAGMA quick_check(1)").fetchall()
        except sqlite3.DatabaseError as exc:
            return str(exc)
        first = str(rows[0][0]) if rows else "quick_check returned nothing"
        return None if first == "ok" else first.replace("*** in database main ***", "").strip()

    @property
    def db(self) -> sqlite_utils.Database:
        if self._db is None:
            import sqlite_utils

            self._db = sqlite_utils.Database(self.conn)
        return self._db

    # -- migrations ---------------------------------------------------------
    def table_names(self) -> list[str]:
        return [r[0] for r in self.conn.execute("select name from sqlite_master where type = 'table'")]

    def applied_migrations(self) -> list[str]:
        if "_migrations" not in self.table_names():
            return []
        return [r[0] for r in self.conn.execute("select name from _migrations order by id")]

    def migrate(self) -> list[str]:
        """Apply every migration not yet recorded; returns the names applied."""
        try:
            done = set(self.applied_migrations())
            if done & RENAMED_MIGRATIONS.keys():
                with self.conn:
                    for old in done & RENAMED_MIGRATIONS.keys():
                        self.conn.execute("update _migrations set name = ? where name = ?",
                                          (RENAMED_MIGRATIONS[old], old))
                done = set(self.applied_migrations())
            pending = [m for m in discover_migrations() if m.name not in done]
            if not pending:
                return []
            if "_migrations" not in self.table_names():
                self.db["_migrations"].create(
                    {"id": int, "name": str, "applied_at": str}, pk="id", not_null={"name"}
                )
                self.db["_migrations"].create_index(["name"], unique=True)
            applied = []
            for migration in pending:
                with self.conn:
                    migration.apply(self.db)
                    self.conn.execute("insert into _migrations (name, applied_at) values (?, ?)", (migration.name, now_iso()))
                applied.append(migration.name)
            return applied
        except sqlite3.DatabaseError as exc:
            # read only once SQLite has refused the file: opening and closing another descriptor
            # on a store this process has open would drop that connection's locks
            if is_damage(exc) and (other := not_a_store(self.path)) is not None:
                raise StoreError(other) from exc  # never called damaged, never sent to salvage
            if is_damage(exc):
                sound_mark.found_damaged(self.path)
                raise StoreDamaged(damage_message(self.path, str(exc))) from exc
            raise StoreError(f"cannot migrate store {self.path}: {exc}") from exc

    # -- helpers shared by every area --------------------------------------
    def query(self, sql: str, params: tuple | dict = ()) -> list[dict]:
        cursor = self.conn.execute(sql, params)
        if cursor.description is None:
            return []
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row)) for row in cursor.fetchall()]

    def execute(self, sql: str, params: tuple | dict = ()) -> sqlite3.Cursor:
        return self.conn.execute(sql, params)

    def transaction(self):
        """``with store.transaction():`` commits on success, rolls back on error."""
        return self.conn

    def close(self) -> None:
        self.conn.close()
        sound_mark.record(self.path)  # the file as this handle left it, if found sound

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- answers ------------------------------------------------------------
    def answer_id(self, model: str, challenge: str) -> int | None:
        rows = self.query(
            "select id from answers where model = ? and challenge = ?", (model, challenge)
        )
        return rows[0]["id"] if rows else None

    def answers(self, *, present_only: bool = True) -> Iterator[dict]:
        where = "where present = 1" if present_only else ""
        yield from self.query(f"select * from answers {where} order by model, challenge")

    def model_names(self) -> list[str]:
        return [r["name"] for r in self.query("select name from models where present = 1 order by name")]

    def challenge_ids(self) -> list[str]:
        return [r["id"] for r in self.query("select id from challenges order by position, id")]

    def set_meta(self, key: str, value: str) -> None:
        with self.conn:
            self.conn.execute("insert into meta (key, value) values (?, ?) on conflict(key) do update set value = excluded.value",
                              (key, value))

    def get_meta(self, key: str, default: str | None = None) -> str | None:
        rows = self.query("select value from meta where key = ?", (key,))
        return rows[0]["value"] if rows else default
