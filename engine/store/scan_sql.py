"""The store's index of a workbench: what a scan reads back and writes
(scans, models, answers, files, challenges, transcripts rows, scan warnings).

Writes are plain SQL where a scan does many: sqlite-utils' insert and update
introspect the table on every call (a tenth of a cold scan's own CPU at
bench/scale.py's 10,000 transcripts)."""
from __future__ import annotations

import json
import sqlite3
from collections import defaultdict

from benchtui.store.database import Store

# A file's stored facts, in the order the scan compares them
FILE_COLUMNS = ("id", "relpath", "size", "mtime_ns", "sha256", "kind", "readable", "problem", "git_status", "lines")
CHALLENGE_COLUMNS = ("position", "title", "difficulty", "language", "backends", "display_names", "forbidden_imports",
                     "path", "prompt_sha256")


def start_scan(store: Store, row: dict) -> int:
    """A new scans row; its id. Plain SQL, as the rest of a scan's writes: a
    scan that needs no sqlite-utils does not import it (~0.4 s of a fresh
    process's first rescan, numpy included)."""
    with store.conn:
        return store.conn.execute(f"insert into scans ({', '.join(f'[{k}]' for k in row)}) "
                                  f"values ({', '.join('?' * len(row))})", list(row.values())).lastrowid


def finish_scan(store: Store, scan_id: int, values: dict) -> None:
    with store.conn:
        store.conn.execute(f"update scans set {', '.join(f'[{k}] = ?' for k in values)} where id = ?",
                           [*values.values(), scan_id])


def batch(store: Store):
    """``with batch(store):`` one transaction around a scan's writes."""
    return store.conn


# -- the previous index, as tuples: a rescan that finds nothing changed compares
# each file's stat with these and writes nothing (bench/scale.py: 60,000 files;
# reading them as dicts was ~1 s)
def previous_answers(store: Store) -> dict[tuple[str, str], tuple]:
    """(model, challenge) -> (id, path, status, files, transcripts, bytes, present, stat_sig, stat_walk)."""
    return {(m, c): (i, path, status, files, transcripts, size, present, sig, walk)
            for i, m, c, path, status, files, transcripts, size, present, sig, walk in store.conn.execute(
                "select id, model, challenge, path, status, files, transcripts, bytes, present, stat_sig, stat_walk "
                "from answers")}


def _in_ids(ids) -> tuple[str, list[int]]:
    """``(?, ?, ...)`` for ``ids`` and the list to bind (one query for a
    model's answers, not one per answer)."""
    ids = list(ids)
    return f"({','.join('?' * len(ids))})", ids


def previous_files(store: Store, answer_ids) -> dict[int, dict[str, tuple]]:
    """answer id -> relpath -> the file's row, a tuple of FILE_COLUMNS, for
    ``answer_ids`` (a rescan reads the rows of the answers it looks into)."""
    out: dict[int, dict[str, tuple]] = defaultdict(dict)
    if not answer_ids:
        return out
    marks, ids = _in_ids(answer_ids)
    for row in store.conn.execute(f"select answer_id, {', '.join(FILE_COLUMNS)} from files "
                                  f"where answer_id in {marks}", ids):
        out[row[0]][row[2]] = row[1:]
    return out


def previous_transcripts(store: Store, answer_ids) -> dict[int, dict[str, dict]]:
    """answer id -> relpath -> the transcript's id, answer_id, relpath, sha256,
    status and problem, for ``answer_ids``."""
    out: dict[int, dict[str, dict]] = defaultdict(dict)
    if not answer_ids:
        return out
    marks, ids = _in_ids(answer_ids)
    for i, answer_id, relpath, sha, status, problem in store.conn.execute(
            "select id, answer_id, relpath, sha256, status, problem from transcripts "
            f"where answer_id in {marks}", ids):
        out[answer_id][relpath] = {"id": i, "answer_id": answer_id, "relpath": relpath,
                                   "sha256": sha, "status": status, "problem": problem}
    return out


def unsettled_answers(store: Store) -> set[int]:
    """Answers whose stored rows a rescan cannot take as they are even when
    every file's stat matches: a file with a problem (its warning is worded
    from the file) or no stored hash (a migration asks for it to be looked at
    again), a chat export from the model's folder as a transcript, or a
    transcript row that is not its file's (missing, extra, another hash).
    The few others are skipped whole by a rescan that finds them unchanged."""
    return {r[0] for r in store.conn.execute(
        "select answer_id from files where problem is not null or sha256 = '' or sha256 is null "
        "union select answer_id from transcripts where relpath like '../%' "
        "union select f.answer_id from files f left join transcripts t "
        "  on t.answer_id = f.answer_id and t.relpath = f.relpath "
        "  where f.kind = 'transcript' and (t.id is null or t.sha256 is not f.sha256) "
        "union select t.answer_id from transcripts t left join files f "
        "  on f.answer_id = t.answer_id and f.relpath = t.relpath "
        "  where f.id is null or f.kind != 'transcript'")}


def name_kinds(store: Store, challenges=()) -> list[tuple[str | None, str, str]]:
    """(challenge, relpath, kind) of the stored files of a kind given by name
    alone (doc, prompt), each once: the challenge is None but for the files of
    ``challenges`` (those with data files, which change what a name means)."""
    out: list[tuple[str | None, str, str]] = [
        (None, rel, kind) for rel, kind in store.conn.execute(
            "select distinct relpath, kind from files where kind in ('doc', 'prompt')")]
    if challenges:
        marks, names = _in_ids(challenges)
        out += store.conn.execute(
            "select distinct a.challenge, f.relpath, f.kind from files f join answers a on a.id = f.answer_id "
            f"where f.kind in ('doc', 'prompt') and a.challenge in {marks}", names).fetchall()
    return out


def answers_holding(store: Store, relpath: str, kind: str, challenge: str | None = None) -> set[int]:
    """The answers with a file ``relpath`` stored as ``kind`` (of ``challenge``, where given)."""
    sql = "select f.answer_id from files f join answers a on a.id = f.answer_id where f.relpath = ? and f.kind = ?"
    args = [relpath, kind]
    if challenge is not None:
        sql += " and a.challenge = ?"
        args.append(challenge)
    return {r[0] for r in store.conn.execute(sql, args)}


# What duplicate_file warns about: content another model's answer holds too
_SHARED_CONTENT = "f.kind not in ('prompt', 'data') and f.size > 0 and f.sha256 != ''"


def shared_content(store: Store) -> list[tuple[str, str, str, str]]:
    """(sha256, model, challenge, relpath) of each present answer's file whose
    content a present answer of another model holds too, by model, challenge, path."""
    return store.conn.execute(
        "select f.sha256, a.model, a.challenge, f.relpath from files f join answers a on a.id = f.answer_id "
        f"where a.present = 1 and {_SHARED_CONTENT} and f.sha256 in ("
        # (the hashes held more than once, from the index alone: most files are nobody else's)
        "  select sha256 from files group by sha256 having count(*) > 1) "
        "order by a.model, a.challenge, f.relpath").fetchall()


def answer_prompts(store: Store) -> list[tuple[str, str, str, str]]:
    """(challenge, model, sha256, answer path) of each present answer's own
    PROMPT.md, for the challenges whose answers carry more than one."""
    return store.conn.execute(
        "with p as (select a.challenge, a.model, f.sha256, a.path from answers a "
        "  join files f on f.answer_id = a.id and f.relpath = 'PROMPT.md' where a.present = 1 and f.sha256 != '') "
        "select * from p where challenge in (select challenge from p group by challenge "
        "  having count(distinct sha256) > 1) order by challenge, model").fetchall()


# -- models and answers
def upsert_model(store: Store, model: str, path: str, stamp: str) -> None:
    """A model folder seen now (its display name starts as its folder name)."""
    store.conn.execute(
        "insert into models (name, display_name, path, present, first_seen, last_seen) values (?, ?, ?, 1, ?, ?) "
        "on conflict(name) do update set path = excluded.path, present = 1, last_seen = excluded.last_seen",
        (model, model, path, stamp, stamp))


def insert_answer(store: Store, model: str, challenge: str, path: str, stamp: str) -> int:
    return store.conn.execute(
        "insert into answers (model, challenge, path, status, present, first_seen, last_seen) "
        "values (?, ?, ?, 'answer', 1, ?, ?)", (model, challenge, path, stamp, stamp)).lastrowid


def update_answers(store: Store, updates: list[tuple]) -> None:
    """Each (path, status, files, transcripts, bytes, present, stat_sig, last_seen, id)."""
    if updates:
        store.conn.executemany("update answers set path = ?, status = ?, files = ?, transcripts = ?, bytes = ?, "
                               "present = ?, stat_sig = ?, last_seen = ? where id = ?", updates)


def set_stat_walks(store: Store, rows: list[tuple[str, int]]) -> None:
    """Each (stat_walk, answer id): the folder listings a rescan keeps."""
    if rows:
        store.conn.executemany("update answers set stat_walk = ? where id = ?", rows)


def mark_seen(store: Store, models: set[str], answers: set[int], scan_id: int) -> int:
    """Models and answers not seen by this scan are gone from disk: their rows
    stay (grades refer to them), marked absent, with ``last_seen`` the start of
    the last finished scan before this one (the last that found them). An
    answer on disk keeps ``last_seen`` as the scan that last wrote its row
    left it: the latest scan saw every present answer, and rewriting every
    row at each scan was the whole answers table in the WAL (2.7 MB at
    10,000 answers) for a rescan that changed nothing.
    The number of answers marked absent by this call."""
    store.conn.execute(f"update models set present = 0 where name not in ({','.join('?' * len(models)) or 'null'})",
                       list(models))
    return store.conn.execute(
        "update answers set present = 0, last_seen = coalesce((select started_at from scans where id < ? "
        "and finished_at is not null order by id desc limit 1), last_seen) "
        f"where present = 1 and id not in ({','.join('?' * len(answers)) or 'null'})",
        [scan_id, *answers]).rowcount


def replace_scan_warnings(store: Store, scan_id: int, rows: list[dict]) -> None:
    """This scan's warnings in place of older scans' (only the latest are read:
    older ones would pile up on every start)."""
    store.conn.execute("delete from scan_warnings where scan_id < ?", (scan_id,))
    if rows:
        columns = list(rows[0])
        store.conn.executemany(f"insert into scan_warnings (scan_id, {', '.join(f'[{c}]' for c in columns)}) "
                               f"values (?, {', '.join('?' * len(columns))})",
                               [(scan_id, *(row[c] for c in columns)) for row in rows])


# -- files, challenges, transcripts
def write_files(store: Store, answer_id: int, gone: list[int], updates: list[tuple], fresh: list[tuple]) -> None:
    """Delete the file rows ``gone``; ``updates``: FILE_COLUMNS[1:] then the id;
    ``fresh``: the answer id then FILE_COLUMNS[1:]."""
    if gone:
        store.conn.execute(f"delete from files where id in ({','.join('?' * len(gone))})", gone)
    if updates:
        store.conn.executemany("update files set relpath = ?, size = ?, mtime_ns = ?, sha256 = ?, kind = ?, "
                               "readable = ?, problem = ?, git_status = ?, lines = ? where id = ?", updates)
    if fresh:
        store.conn.executemany("insert into files (answer_id, relpath, size, mtime_ns, sha256, kind, readable, "
                               "problem, git_status, lines) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", fresh)


def stored_challenges(store: Store) -> dict[str, tuple]:
    """challenge id -> its row, a tuple of CHALLENGE_COLUMNS."""
    return {r[0]: tuple(r[1:]) for r in
            store.conn.execute(f"select id, {', '.join(CHALLENGE_COLUMNS)} from challenges")}


def upsert_challenges(store: Store, rows: list[tuple]) -> None:
    """Each (id, *CHALLENGE_COLUMNS)."""
    if rows:
        cols = CHALLENGE_COLUMNS
        store.conn.executemany(
            f"insert into challenges (id, {', '.join(cols)}) values ({', '.join('?' * (len(cols) + 1))}) "
            f"on conflict(id) do update set {', '.join(f'{c} = excluded.{c}' for c in cols)}", rows)


def write_transcript(store: Store, transcript_id: int | None, values: dict) -> None:
    """Update the transcript row ``transcript_id``, or insert one (None)."""
    if transcript_id is not None:
        store.conn.execute(f"update transcripts set {', '.join(f'[{k}] = ?' for k in values)} where id = ?",
                           [*values.values(), transcript_id])
    else:
        store.conn.execute(f"insert into transcripts ({', '.join(f'[{k}]' for k in values)}) "
                           f"values ({', '.join('?' * len(values))})", list(values.values()))


def delete_transcript(store: Store, transcript_id: int) -> None:
    """Remove a transcript row and anything indexed from it (child tables first)."""
    db = store.db
    for table in db.table_names():
        if table != "transcripts" and "transcript_id" in db[table].columns_dict:
            db.execute(f"delete from [{table}] where transcript_id = ?", (transcript_id,))
    db.execute("delete from transcripts where id = ?", (transcript_id,))


# -- what a scan derives from the whole index, kept while nothing it reads changes
def index_changes(store: Store) -> str | None:
    """Where the index stands for what scan_derived holds: m018's count with the
    largest file, transcript and answer ids; None without its triggers (a
    table rebuilt by a later migration loses them: every scan then reads)."""
    from benchtui.store.migrations.m018_index_changes import trigger_names

    names = trigger_names()
    try:
        row = store.conn.execute(
            "select (select changes from index_changes where id = 1), (select max(id) from files), "
            "(select max(id) from transcripts), (select max(id) from answers), "
            f"(select count(*) from sqlite_master where type = 'trigger' and name in ({','.join('?' * len(names))}))",
            names).fetchone()
    except sqlite3.OperationalError:
        return None
    if row[0] is None or row[4] != len(names):
        return None
    return ":".join(str(v) for v in row[:4])


def scan_derived(store: Store, changes: str | None) -> dict | None:
    """The last scan's derived results (``unsettled``: unsettled_answers' ids;
    ``warnings``: the duplicate and prompt-drift warnings, as dicts) when the
    index is as it left them (``changes``: index_changes now), else None."""
    if changes is None:
        return None
    row = store.conn.execute("select value from meta where key = 'scan_derived'").fetchone()
    try:
        kept = json.loads(row[0]) if row else None
    except ValueError:
        return None
    if not isinstance(kept, dict) or kept.get("changes") != changes:
        return None
    return kept


def keep_scan_derived(store: Store, changes: str | None, unsettled: set[int], warnings: list[dict]) -> None:
    """Keep this scan's derived results for the next scan, with index_changes as they stand."""
    if changes is None:
        return
    store.conn.execute("insert into meta (key, value) values ('scan_derived', ?) "
                       "on conflict(key) do update set value = excluded.value",
                       (json.dumps({"changes": changes, "unsettled": sorted(unsettled), "warnings": warnings}),))
