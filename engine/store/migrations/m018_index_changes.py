"""``index_changes``: a count of the changes to what a scan derives from the
whole index (the duplicate-content and prompt-drift warnings, the answers a
rescan cannot skip), kept by triggers, whoever writes. With the largest row id
of files, transcripts and answers (an insert raises it; a delete, which could
let an id be taken again, is counted) it tells a rescan whether the index is
as the last scan left it; that scan's results (``meta`` key ``scan_derived``)
are then taken instead of reading the files table again
(engine/store/scan_sql.py). Inserts into those three tables fire no trigger:
a trigger a row cost about 15 us, a second of a cold scan's 60,000 files.
Columns the results never read (a file's mtime, git state or line count, an
answer's digests, counts and dates) move nothing. A rescan reads
``trigger_names`` from here: sqlite-utils (and numpy with it) is imported only
for the type (a fresh process's rescan does without it)."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite_utils

# table -> the columns whose update is counted; inserts are counted only where True
WATCHED = {
    "files": (("answer_id", "relpath", "size", "sha256", "kind", "problem"), False),
    "transcripts": (("answer_id", "relpath", "sha256"), False),
    "answers": (("model", "challenge", "path", "present"), False),
    "challenges": (("prompt_sha256", "path"), True),
}


def trigger_names() -> list[str]:
    names = []
    for table, (_columns, inserts) in WATCHED.items():
        names += [f"{table}_index_delete", f"{table}_index_update"] + ([f"{table}_index_insert"] if inserts else [])
    return names


def apply(db: sqlite_utils.Database) -> None:
    db.execute("create table if not exists index_changes (id integer primary key check (id = 1), "
               "changes integer not null)")
    db.execute("insert or ignore into index_changes (id, changes) values (1, 0)")
    bump = "begin update index_changes set changes = changes + 1 where id = 1; end"
    for table, (columns, inserts) in WATCHED.items():
        if inserts:
            db.execute(f"create trigger if not exists {table}_index_insert after insert on {table} {bump}")
        db.execute(f"create trigger if not exists {table}_index_delete after delete on {table} {bump}")
        db.execute(f"create trigger if not exists {table}_index_update after update of {', '.join(columns)} "
                   f"on {table} {bump}")
