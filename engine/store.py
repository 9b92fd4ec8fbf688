"""The SQLite store (store.db): opening, migrations, small shared queries.

Every table is created by a named migration in ``engine/migrations``; each
applied migration is recorded in ``_migrations`` so re-opening is idempotent.
Areas of the engine (transcripts, runs, grades) own their own migration
modules, named ``mNNN_<what>.py``, applied in name order.
"""
from __future__ import annotations

import importlib
import pkgutil
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import sqlite_utils

from engine import migrations as _migrations_pkg


class StoreError(Exception):
    """A store that cannot be opened or migrated; the message is for the user."""


@dataclass(frozen=True)
class Migration:
    name: str
    apply: Callable[[sqlite_utils.Database], None]


def discover_migrations() -> list[Migration]:
    """All ``engine.migrations.mNNN_*`` modules, in name order."""
    found = []
    for info in pkgutil.iter_modules(_migrations_pkg.__path__):
        if info.name.startswith("m") and info.name[1:4].isdigit():
            module = importlib.import_module(f"engine.migrations.{info.name}")
            found.append(Migration(info.name, module.apply))
    return sorted(found, key=lambda m: m.name)


def now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + f".{int(time.time() * 1000) % 1000:03d}Z"


class Store:
    """A handle on store.db. Cheap to open; open one per thread."""

    def __init__(self, path: Path | str, *, migrate: bool = True):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(str(self.path), timeout=30, check_same_thread=False)
            self.db = sqlite_utils.Database(conn)
            # WAL: readers (the dashboard) never block the writer (a run).
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA foreign_keys=ON")
            self.db.execute("PRAGMA busy_timeout=30000")
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"cannot open store {self.path}: {exc}") from exc
        if migrate:
            self.migrate()

    # -- migrations ---------------------------------------------------------
    def applied_migrations(self) -> list[str]:
        if "_migrations" not in self.db.table_names():
            return []
        return [r["name"] for r in self.db["_migrations"].rows_where(order_by="id")]

    def migrate(self) -> list[str]:
        """Apply every migration not yet recorded; returns the names applied."""
        try:
            if "_migrations" not in self.db.table_names():
                self.db["_migrations"].create(
                    {"id": int, "name": str, "applied_at": str}, pk="id", not_null={"name"}
                )
                self.db["_migrations"].create_index(["name"], unique=True)
            done = set(self.applied_migrations())
            applied = []
            for migration in discover_migrations():
                if migration.name in done:
                    continue
                with self.db.conn:
                    migration.apply(self.db)
                    self.db["_migrations"].insert({"name": migration.name, "applied_at": now_iso()})
                applied.append(migration.name)
            return applied
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"cannot migrate store {self.path}: {exc}") from exc

    # -- helpers shared by every area --------------------------------------
    def query(self, sql: str, params: tuple | dict = ()) -> list[dict]:
        return list(self.db.query(sql, params))

    def transaction(self):
        """``with store.transaction():`` commits on success, rolls back on error."""
        return self.db.conn

    def close(self) -> None:
        self.db.conn.close()

    def __enter__(self) -> "Store":
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
        yield from self.db.query(f"select * from answers {where} order by model, challenge")

    def model_names(self) -> list[str]:
        return [r["name"] for r in self.db.query("select name from models where present = 1 order by name")]

    def challenge_ids(self) -> list[str]:
        return [r["id"] for r in self.db.query("select id from challenges order by position, id")]

    def set_meta(self, key: str, value: str) -> None:
        self.db["meta"].upsert({"key": key, "value": value}, pk="key")

    def get_meta(self, key: str, default: str | None = None) -> str | None:
        rows = self.query("select value from meta where key = ?", (key,))
        return rows[0]["value"] if rows else default
