"""An import's store rows, set aside on disk as its runs stream in: the store's
one write transaction at the end takes them with ``insert ... select`` from
this file attached to its connection, so the import holds none of them in
memory and the store's write lock is held only for that last step."""
from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from benchtui.store import decks_sql
from benchtui.store.database import Store

SCHEMA = "deck_rows"  # its name on the store's connection
# the order deck_results rows are written in (their ids follow it): each batch's runs whose
# answer is in place, then the results the deck published without an answer, then the
# results of runs whose answer was refused
PLACED, WITHOUT_ANSWER, REFUSED = 0, 1, 2


def _columns(columns: str) -> list[str]:
    return [c.strip() for c in columns.split(",") if c.strip() not in decks_sql.STAMPS]


class RowSpool:
    """A scratch SQLite file of deck_results, deck_annotations and note rows (the stamps left
    to the store's write), in the order they are to be written."""

    def __init__(self, path: Path):
        self.path = path
        self.conn = sqlite3.connect(str(path), isolation_level=None)
        self.conn.execute("pragma journal_mode = off")  # scratch: a crash loses nothing of worth
        self.conn.execute("pragma synchronous = off")
        # columns without a type keep each value as it was bound, as the store's own insert would get it
        self.results = _columns(decks_sql.RESULT_COLUMNS)
        self.annotations = _columns(decks_sql.ANNOTATION_COLUMNS)
        self.conn.execute(f"create table results (part, {', '.join(self.results)})")
        self.conn.execute(f"create table annotations ({', '.join(self.annotations)})")
        self.conn.execute("create table notes (model, challenge, relpath, line, author, text)")
        self.conn.execute("begin")
        self._insert_result = f"insert into results values (?, {', '.join('?' * len(self.results))})"
        self._insert_annotation = f"insert into annotations values ({', '.join('?' * len(self.annotations))})"

    def add_results(self, part: int, rows: list[tuple]) -> None:
        """deck_results rows, RESULT_COLUMNS' values less the stamps."""
        self.conn.executemany(self._insert_result, ((part, *row) for row in rows))

    def add_annotations(self, rows: list[tuple]) -> None:
        self.conn.executemany(self._insert_annotation, rows)

    def add_notes(self, rows: list[tuple]) -> None:
        """(model, challenge, relpath, line, author, text) of each line note."""
        self.conn.executemany("insert into notes values (?, ?, ?, ?, ?, ?)", rows)

    def finish(self) -> None:
        """Every row is in: committed, for the store's connection to read."""
        if self.conn.in_transaction:
            self.conn.execute("commit")

    def notes(self) -> Iterator[tuple]:
        yield from self.conn.execute("select * from notes order by rowid")

    @contextmanager
    def attached(self, store: Store) -> Iterator[str]:
        """This file on ``store``'s connection (outside any transaction), as SCHEMA."""
        self.finish()
        store.conn.execute(f"attach database ? as {SCHEMA}", (str(self.path),))
        try:
            yield SCHEMA
        finally:
            with suppress(sqlite3.Error):
                store.conn.execute(f"detach database {SCHEMA}")

    def close(self) -> None:
        self.conn.close()
        with suppress(OSError):
            self.path.unlink()
