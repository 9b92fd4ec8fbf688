"""The store's transcript index: the rows the indexer reads and writes, the
full-text index's bulk-load switch, and the search over it.

The parsing itself lives in engine/transcripts/index.py; what it stores, and
how, is here.
"""
from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import Any

FTS_TABLE = "transcript_entries_fts"
FTS_SUSPENDED = "fts_suspended"  # meta key: the dropped triggers' SQL while a bulk load runs


def pending_rows(store, parser_version: int) -> list[dict]:
    """Transcript rows never parsed, changed on disk since, or parsed by another parser version."""
    return store.query(
        """select t.id, t.relpath, t.sha256, t.format, a.path as answer_path
           from transcripts t join answers a on a.id = t.answer_id
           where t.parsed_sha256 is null
              or (t.sha256 is not null and t.parsed_sha256 != t.sha256)
              or coalesce(t.parser_version, 0) != ?
           order by t.id""",
        (parser_version,),
    )


def count_rows(store, table: str) -> int:
    return store.conn.execute(f"select count(*) from [{table}]").fetchone()[0]


def suspend_fts(store) -> None:
    """Drop the triggers that keep the FTS index in step with transcript_entries,
    recording their SQL (and that the index is stale) in one transaction."""
    triggers = store.conn.execute(
        "select name, sql from sqlite_master where type = 'trigger' and tbl_name = 'transcript_entries' "
        "and sql like ? order by name", (f"%{FTS_TABLE}%",)).fetchall()
    if not triggers:
        return  # already suspended, or no FTS here
    with store.conn:
        store.conn.execute("insert into meta (key, value) values (?, ?) on conflict(key) do update set "
                           "value = excluded.value", (FTS_SUSPENDED, json.dumps([sql for _, sql in triggers])))
        for name, _ in triggers:
            store.conn.execute(f"drop trigger [{name}]")


def resume_fts(store, rebuild_hashsize: int, default_hashsize: int) -> bool:
    """Rebuild the FTS index from every stored entry and put its triggers back,
    in one transaction; False when nothing was suspended. The rebuild runs with
    ``rebuild_hashsize``, then the setting goes back to ``default_hashsize``."""
    row = store.conn.execute("select value from meta where key = ?", (FTS_SUSPENDED,)).fetchone()
    if row is None:
        return False
    with store.conn:
        store.conn.execute(f"insert into {FTS_TABLE}({FTS_TABLE}, rank) values('hashsize', ?)", (rebuild_hashsize,))
        store.conn.execute(f"insert into {FTS_TABLE}({FTS_TABLE}) values('rebuild')")
        store.conn.execute(f"insert into {FTS_TABLE}({FTS_TABLE}, rank) values('hashsize', ?)", (default_hashsize,))
        store.conn.execute(f"delete from [{FTS_TABLE}_config] where k = 'hashsize'")
        for sql in json.loads(row[0]):
            store.conn.execute(sql)
        store.conn.execute("delete from meta where key = ?", (FTS_SUSPENDED,))
    return True


def batch(store):
    """``with batch(store):`` one transaction around several transcripts' writes."""
    return store.conn


def replace_entries(store, transcript_id: int, columns: Sequence[str], entries: list[tuple]) -> None:
    """A transcript's entries, as tuples of ``columns``, in place of those stored."""
    store.execute("delete from transcript_entries where transcript_id = ?", [transcript_id])
    if entries:
        store.conn.executemany(_insert_entry(tuple(columns)), [(transcript_id, *e) for e in entries])


@functools.cache
def _insert_entry(columns: tuple[str, ...]) -> str:
    return (f"insert into transcript_entries (transcript_id, {', '.join(columns)}) "
            f"values ({', '.join('?' * (len(columns) + 1))})")


def update_transcript(store, transcript_id: int, values: dict[str, Any]) -> None:
    """A plain UPDATE: sqlite-utils' ``update`` introspects the table's columns
    and keys on every call (a fifth of indexing at bench/scale.py's size)."""
    store.conn.execute(f"update transcripts set {', '.join(f'[{k}] = ?' for k in values)} where id = ?",
                       [*values.values(), transcript_id])


# Two steps: rank with the FTS index alone, then build snippets for the top hits only
# (snippet() over every match costs far more than the ranking).
RANK_SQL = """
select rowid, rank from transcript_entries_fts
where transcript_entries_fts match ? order by rank limit ?
"""
DETAIL_SQL = """
select e.id as entry_row, e.transcript_id, e.branch, e.position, e.turn, e.line, e.role, e.kind,
       snippet(transcript_entries_fts, -1, '[', ']', '…', 12) as snippet,
       t.relpath, a.model, a.challenge, a.path as answer_path
from transcript_entries_fts
join transcript_entries e on e.id = transcript_entries_fts.rowid
join transcripts t on t.id = e.transcript_id
join answers a on a.id = t.answer_id
where transcript_entries_fts match ? and transcript_entries_fts.rowid in ({ids})
"""


RANK_IN_ANSWERS_SQL = """
select f.rowid, f.rank from transcript_entries_fts f
join transcript_entries e on e.id = f.rowid
join transcripts t on t.id = e.transcript_id
join answers a on a.id = t.answer_id
where transcript_entries_fts match ? {where} order by f.rank limit ?
"""


def ranked_entries(store, query: str, limit: int, models=(), challenges=()) -> list[dict]:
    """rowid and rank of the best ``limit`` entries matching the FTS5 ``query``
    (sqlite3.OperationalError for a query that is not FTS5 syntax), only in the
    answers of ``models`` and ``challenges`` where either is given: filtered
    before the limit, so a narrow search still gets its ``limit`` best hits."""
    if not models and not challenges:
        return store.query(RANK_SQL, (query, limit))
    where, params = _answers_where(models, challenges)
    return store.query(RANK_IN_ANSWERS_SQL.format(where=where), (query, *params, limit))


def _answers_where(models, challenges) -> tuple[str, list]:
    where, params = "", []
    for column, names in (("model", models), ("challenge", challenges)):
        if names:
            where += f" and a.{column} in ({','.join('?' * len(names))})"
            params += list(names)
    return where, params


def entries_at_cap(store, chars: int, models=(), challenges=()) -> int:
    """How many indexed entries hold a column cut at ``chars`` characters (their text
    past it is not in the index), in the answers of ``models`` and ``challenges``."""
    where, params = _answers_where(models, challenges)
    return store.conn.execute(
        "select count(*) from transcript_entries e join transcripts t on t.id = e.transcript_id "
        "join answers a on a.id = t.answer_id where (length(e.text) >= ? or length(e.thinking) >= ? "
        f"or length(e.tool_text) >= ?){where}", (chars, chars, chars, *params)).fetchone()[0]


def unindexed_transcripts(store, models=(), challenges=()) -> int:
    """Transcripts the index holds no entries of, because they could not be read or parsed."""
    where, params = _answers_where(models, challenges)
    return store.conn.execute(
        "select count(*) from transcripts t join answers a on a.id = t.answer_id "
        f"where t.status = 'error'{where}", params).fetchone()[0]


def entry_hits(store, query: str, rowids) -> list[dict]:
    """The entries ``rowids`` with a snippet of where ``query`` matches, their transcript and answer."""
    return store.query(DETAIL_SQL.format(ids=",".join(str(int(r)) for r in rowids)), (query,))


def transcript_relpaths(store, model: str, challenge: str) -> list[str]:
    """The relpaths of an answer's indexed transcripts, in name order."""
    return [r["relpath"] for r in store.query(
        "select t.relpath from transcripts t join answers a on a.id = t.answer_id "
        "where a.model = ? and a.challenge = ? order by t.relpath", (model, challenge))]


def entry_span(store, transcript_id: int) -> tuple[int | None, int | None]:
    """The lowest and highest entry position indexed for a transcript ((None, None): none)."""
    return store.conn.execute("select min(position), max(position) from transcript_entries "
                              "where transcript_id = ?", (transcript_id,)).fetchone()
