"""Transcripts in the store: parse once, keep entries and totals, search them all.

``index_pending`` brings every ``transcripts`` row up to date with its file;
the scanner calls it after recording the rows. ``search`` queries the FTS
index over all stored entries.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import operator
import sqlite3
import time
from pathlib import Path
from typing import Any

from engine.transcripts import FORMATS, decode, parse_text
from engine.transcripts.model import TOOL_RESULT, Branch, Entry, Transcript, TranscriptError
from engine.transcripts.render import call_summary

# Bump when parsing changes what is stored: every transcript is re-parsed once.
PARSER_VERSION = 1
STORED_TEXT_CHARS = 100_000   # per column; the viewer reads the file for more
TOOL_ARGS_CHARS = 2_000
# Transcripts parsed per transaction by index_pending: one commit per
# transcript was a third of a cold scan's indexing (bench/scale.py).
COMMIT_EVERY = 50


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def pending_rows(store) -> list[dict]:
    return store.query(
        """select t.id, t.relpath, t.sha256, t.format, a.path as answer_path
           from transcripts t join answers a on a.id = t.answer_id
           where t.parsed_sha256 is null
              or (t.sha256 is not null and t.parsed_sha256 != t.sha256)
              or coalesce(t.parser_version, 0) != ?
           order by t.id""",
        (PARSER_VERSION,),
    )


# Full-text indexing in bulk: with at least this many transcripts pending, and
# at least a third of all transcripts, the FTS triggers are dropped while the
# entries are inserted and the index is rebuilt once at the end. Row by row,
# the triggers were ~40% of a cold scan's CPU (bench/scale.py); a rebuild
# reads every stored entry once, so small rescans keep the triggers.
BULK_FTS_MIN = 200
FTS_TABLE = "transcript_entries_fts"
FTS_SUSPENDED = "fts_suspended"  # meta key: the dropped triggers' SQL while a bulk load runs


def index_pending(store, root: Path) -> int:
    """(Re)parse every stale transcript row; returns how many were parsed (ok or error)."""
    resume_fts(store)  # a bulk load that did not finish (a crash): rebuild its index first
    rows = pending_rows(store)
    bulk = len(rows) >= BULK_FTS_MIN and 3 * len(rows) >= _count(store, "transcripts")
    if bulk:
        suspend_fts(store)
    for start in range(0, len(rows), COMMIT_EVERY):
        with store.conn:  # a crash loses at most this batch, which stays pending
            for row in rows[start:start + COMMIT_EVERY]:
                index_one(store, Path(root) / (row["answer_path"] or "") / row["relpath"], row, commit=False)
    if bulk:
        resume_fts(store)
    return len(rows)


def _count(store, table: str) -> int:
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


def resume_fts(store) -> bool:
    """Rebuild the FTS index from every stored entry and put its triggers back,
    in one transaction; False when nothing was suspended."""
    row = store.conn.execute("select value from meta where key = ?", (FTS_SUSPENDED,)).fetchone()
    if row is None:
        return False
    with store.conn:
        store.conn.execute(f"insert into {FTS_TABLE}({FTS_TABLE}) values('rebuild')")
        for sql in json.loads(row[0]):
            store.conn.execute(sql)
        store.conn.execute("delete from meta where key = ?", (FTS_SUSPENDED,))
    return True


def index_one(store, path: Path, row: dict, *, commit: bool = True) -> None:
    from engine import caps

    started = time.perf_counter()
    try:
        size = path.stat().st_size
        if size > caps.TEXT_CAP_BYTES:  # never read whole: memory stays bounded by the cap
            _failed(store, row["id"], row.get("sha256"), f"{path.name}: {caps.over_cap(size)}", commit)
            return
        data = path.read_bytes()
    except OSError as exc:
        _failed(store, row["id"], row.get("sha256"), f"{path.name}: cannot read ({exc.strerror or exc})", commit)
        return
    sha = hashlib.sha256(data).hexdigest()
    fmt = row.get("format") if row.get("format") in FORMATS else None
    try:
        transcript = parse_text(decode(data, path.name), fmt, str(path))
    except TranscriptError as exc:
        _failed(store, row["id"], sha, str(exc), commit)
        return
    _store(store, row["id"], sha, transcript, time.perf_counter() - started, commit)


def _transaction(store, commit: bool):
    return store.conn if commit else contextlib.nullcontext()


def _update(store, transcript_id: int, values: dict[str, Any]) -> None:
    """A plain UPDATE: sqlite-utils' ``update`` introspects the table's columns
    and keys on every call (a fifth of indexing at bench/scale.py's size)."""
    store.conn.execute(f"update transcripts set {', '.join(f'[{k}] = ?' for k in values)} where id = ?",
                       [*values.values(), transcript_id])


def _failed(store, transcript_id: int, sha: str | None, problem: str, commit: bool = True) -> None:
    with _transaction(store, commit):
        store.execute("delete from transcript_entries where transcript_id = ?", [transcript_id])
        _update(store, transcript_id, {
            "status": "error", "problem": problem, "parsed_sha256": sha,
            "parser_version": PARSER_VERSION, "parsed_at": _now(), "entries": 0,
        })


def _cut(text: str | None) -> str | None:
    if not text:
        return None
    return text if len(text) <= STORED_TEXT_CHARS else text[:STORED_TEXT_CHARS]


def tool_text(e: Entry) -> str | None:
    """What search should find about an entry's tools: names, arguments, diffs."""
    parts = []
    for c in e.tool_calls:
        args = c.arguments if isinstance(c.arguments, str) else json.dumps(c.arguments, ensure_ascii=False, default=str)
        parts.append(f"{call_summary(c.name, c.arguments)} {args[:TOOL_ARGS_CHARS]}")
    if e.role == TOOL_RESULT:
        parts.append(e.tool_name or "")
        if e.extra.get("diff"):
            parts.append(str(e.extra["diff"]))
    return _cut("\n".join(p for p in parts if p))


def entry_rows(transcript_id: int, t: Transcript) -> list[dict[str, Any]]:
    turn_of = {}
    for turn in t.turns:
        for i in range(turn.start, turn.end):
            turn_of[i] = turn.index
    rows = []
    branches = t.branches or [Branch(leaf_id=None, active=True, fork_id=None, entries=t.entries)]
    for b, branch in enumerate(branches):
        for e in branch.entries:
            u = e.usage
            rows.append({
                "transcript_id": transcript_id, "branch": b, "position": e.index,
                "turn": turn_of.get(e.index) if b == 0 else None, "line": e.line, "role": e.role,
                "kind": e.kind, "entry_id": e.id, "parent_id": e.parent_id, "timestamp": e.timestamp,
                "text": _cut(e.text), "thinking": _cut(e.thinking), "tool_text": tool_text(e),
                "tool_names": ",".join(c.name for c in e.tool_calls) or e.tool_name,
                "tool_calls": len(e.tool_calls), "is_error": int(e.is_error), "repaired": int(e.repaired),
                "tokens_input": u.input if u else None, "tokens_output": u.output if u else None,
                "tokens_cache_read": u.cache_read if u else None,
                "tokens_cache_write": u.cache_write if u else None,
                "tokens_reasoning": u.reasoning if u else None,
                "cost": e.cost, "latency_s": e.latency_s, "duration_s": e.duration_s,
            })
    return rows


def _insert_entries(store, rows: list[dict[str, Any]]) -> None:
    """Plain executemany (every row has the same keys): sqlite-utils' per-value
    checks cost more than the inserts at bench/scale.py's size."""
    if not rows:
        return
    columns = list(rows[0])
    sql = (f"insert into transcript_entries ({', '.join(columns)}) "
           f"values ({', '.join('?' * len(columns))})")
    values = operator.itemgetter(*columns)
    store.conn.executemany(sql, [values(r) for r in rows])


def _store(store, transcript_id: int, sha: str, t: Transcript, parse_s: float, commit: bool = True) -> None:
    h, tot = t.header, t.totals
    problem = None
    if t.warnings:
        w = t.warnings[0]
        more = f" (+{len(t.warnings) - 1} more)" if len(t.warnings) > 1 else ""
        problem = f"line {w.line}: {w.kind}: {w.detail}{more}"
    with _transaction(store, commit):
        store.execute("delete from transcript_entries where transcript_id = ?", [transcript_id])
        _insert_entries(store, entry_rows(transcript_id, t))
        _update(store, transcript_id, {
            "status": "ok", "problem": problem, "format": h.format, "harness": h.harness,
            "version": h.version, "model": h.model, "provider": h.provider, "session_id": h.session_id,
            "started_at": h.started_at, "cwd": h.cwd, "title": h.title,
            "entries": len(t.entries), "branches": len(t.branches), "warnings": len(t.warnings),
            "repaired": sum(1 for e in t.entries if e.repaired),
            "tool_calls": tot.tool_calls, "tool_errors": tot.tool_errors,
            "tokens_input": tot.tokens.input, "tokens_output": tot.tokens.output,
            "tokens_cache_read": tot.tokens.cache_read, "tokens_cache_write": tot.tokens.cache_write,
            "tokens_reasoning": tot.tokens.reasoning, "cost": round(tot.cost, 6),
            "duration_s": tot.duration_s, "model_latency_s": tot.model_latency_s,
            "tool_time_s": tot.tool_time_s, "totals_json": json.dumps(tot.as_dict()),
            "warnings_json": json.dumps([w.as_dict() for w in t.warnings]),
            "parsed_sha256": sha, "parser_version": PARSER_VERSION, "parsed_at": _now(),
            "parse_s": round(parse_s, 4),
        })


def _fts_query(query: str) -> str:
    """Every word as a quoted phrase: user text never trips FTS5 syntax."""
    words = query.split()
    return " ".join('"' + w.replace('"', '""') + '"' for w in words)


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


def search(store, query: str, limit: int = 50) -> list[dict]:
    """Entries matching ``query`` across all transcripts, best first.

    The query may use FTS5 syntax (``"exact phrase"``, ``OR``, ``prefix*``);
    text that is not valid syntax is searched word by word instead.
    Each hit: model, challenge, relpath, path, transcript_id, branch (0 =
    active path), position, turn, line, role, kind, snippet, rank.
    """
    if not query.strip():
        return []
    try:
        ranked = store.query(RANK_SQL, (query, limit))
    except sqlite3.OperationalError:
        query = _fts_query(query)
        ranked = store.query(RANK_SQL, (query, limit))
    if not ranked:
        return []
    rank = {r["rowid"]: (i, r["rank"]) for i, r in enumerate(ranked)}
    rows = store.query(DETAIL_SQL.format(ids=",".join(str(int(r)) for r in rank)), (query,))
    for r in rows:
        r["path"] = str(Path(r.pop("answer_path") or "") / r["relpath"])
        r["rank"] = rank[r.pop("entry_row")][1]
    rows.sort(key=lambda r: r["rank"])
    return rows
