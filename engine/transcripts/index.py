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
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

from benchtui.store import transcripts_sql
from benchtui.text import caps
from benchtui.transcripts import FORMATS, decode, parse_text
from benchtui.transcripts.model import TOOL_RESULT, Branch, Entry, Transcript, TranscriptError
from benchtui.transcripts.render import call_summary

# Bump when parsing changes what is stored: every transcript is re-parsed once.
PARSER_VERSION = 2  # 2: a tool call's arguments indexed whole (to the column's cap), not their first 2,000 characters
STORED_TEXT_CHARS = 100_000   # per column; the viewer reads the file for more; search says what it cut
# A tool call's arguments (a whole file written) are searched as far as any text is: a search
# that misses the line a compiler failed on, 2 KB into a written file, misleads.
TOOL_ARGS_CHARS = STORED_TEXT_CHARS
# Transcripts parsed per transaction by index_pending: one commit per
# transcript was a third of a cold scan's indexing (bench/scale.py).
COMMIT_EVERY = 50


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def pending_rows(store) -> list[dict]:
    return transcripts_sql.pending_rows(store, PARSER_VERSION)


# Full-text indexing in bulk: with at least this many transcripts pending, and
# at least a third of all transcripts, the FTS triggers are dropped while the
# entries are inserted and the index is rebuilt once at the end. Row by row,
# the triggers were ~40% of a cold scan's CPU (bench/scale.py); a rebuild
# reads every stored entry once, so small rescans keep the triggers.
BULK_FTS_MIN = 200
FTS_TABLE = transcripts_sql.FTS_TABLE
FTS_REBUILD_HASHSIZE = 64 << 20
FTS_DEFAULT_HASHSIZE = 1 << 20  # FTS5's own default (FTS5_DEFAULT_HASHSIZE)
FTS_SUSPENDED = transcripts_sql.FTS_SUSPENDED  # meta key: the dropped triggers' SQL while a bulk load runs


def index_pending(store, root: Path, *, phases: dict[str, dict[str, float]] | None = None) -> int:
    """(Re)parse every stale transcript row; returns how many were parsed (ok or error).
    ``phases``: where the time of a bulk load's FTS rebuild is recorded (the scan's PhaseClock figures)."""
    resume_fts(store)  # a bulk load that did not finish (a crash): rebuild its index first
    rows = pending_rows(store)
    bulk = len(rows) >= BULK_FTS_MIN and 3 * len(rows) >= _count(store, "transcripts")
    if bulk:
        suspend_fts(store)
    jobs = [(Path(root) / (row["answer_path"] or "") / row["relpath"], row.get("sha256"), row.get("format"))
            for row in rows]
    workers = index_workers(len(rows))
    prepared = _prepared_in_pool(jobs, workers) if workers > 1 else (prepare(*job) for job in jobs)
    try:
        for start in range(0, len(rows), COMMIT_EVERY):
            with transcripts_sql.batch(store):  # a crash loses at most this batch, which stays pending
                for row in rows[start:start + COMMIT_EVERY]:
                    write_prepared(store, row["id"], next(prepared), commit=False)
    finally:
        prepared.close()
    if bulk:
        started, cpu = time.perf_counter(), time.process_time()
        resume_fts(store)
        if phases is not None:
            phases["fts_rebuild"] = {"wall_s": round(time.perf_counter() - started, 3),
                                     "cpu_s": round(time.process_time() - cpu, 3), "workers_cpu_s": 0.0}
    return len(rows)


# Parsing runs in worker processes when there is a lot of it: at bench/scale.py's
# size parsing is about half of indexing, and this process keeps writing while
# the workers parse. BENCHTUI_INDEX_WORKERS=1 parses here.
INDEX_WORKERS = int(os.environ.get("BENCHTUI_INDEX_WORKERS", "0") or 0) or min(4, os.cpu_count() or 1)
POOL_MIN = 200  # fewer transcripts than this are parsed here


def index_workers(pending: int) -> int:
    """Worker processes for ``pending`` transcripts: 1 (none) for a few, and
    whenever this process runs other threads (the dashboard scans from a
    worker thread). The workers are forked (no re-import of the caller's
    __main__, which spawning needs and a script without a main guard would
    re-run), and forking a process with threads can deadlock its children."""
    import multiprocessing
    import threading

    if pending < POOL_MIN or INDEX_WORKERS < 2 or threading.active_count() > 1:
        return 1
    return INDEX_WORKERS if "fork" in multiprocessing.get_all_start_methods() else 1


def _prepared_in_pool(jobs: list[tuple], workers: int):
    """prepare(*job) for each job, in order, from ``workers`` forked processes
    (they only read and parse files: never the store), at most a few jobs
    ahead of the writer so memory stays bounded. A pool that breaks (a worker
    killed) leaves the rest to this process."""
    import multiprocessing
    from collections import deque
    from concurrent.futures import BrokenExecutor, ProcessPoolExecutor

    ahead = 8 * workers
    pending = iter(jobs)
    queue: deque = deque()  # (job, future), oldest first
    broken = False
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"))
    try:
        def feed(n: int) -> None:
            nonlocal broken
            for job in pending:
                try:
                    queue.append((job, pool.submit(prepare, *job)))
                except BrokenExecutor:
                    broken = True
                    queue.append((job, None))
                    return
                n -= 1
                if n <= 0:
                    return

        feed(ahead)
        while queue:
            job, future = queue.popleft()
            if not broken:
                feed(1)  # keep the pool fed
            try:
                result = future.result() if future is not None else prepare(*job)
            except BrokenExecutor:
                broken = True
                result = prepare(*job)
            yield result
            if broken and not queue:
                for job in pending:
                    yield prepare(*job)
    finally:
        for _, future in queue:
            if future is not None:
                future.cancel()
        pool.shutdown(wait=True, cancel_futures=True)


def _count(store, table: str) -> int:
    return transcripts_sql.count_rows(store, table)


suspend_fts = transcripts_sql.suspend_fts


def resume_fts(store) -> bool:
    """Rebuild the FTS index from every stored entry and put its triggers back,
    in one transaction; False when nothing was suspended.

    A larger in-memory hash for the rebuild: FTS5 flushes a segment each time
    its pending terms pass `hashsize` (1 MB by default) and merges those
    segments as it goes; at 64 MB the rebuild of bench/scale.py's 500 MB of
    entry text took a third less CPU. The index answers the same; the setting
    is put back so later row-by-row writes are as before."""
    return transcripts_sql.resume_fts(store, FTS_REBUILD_HASHSIZE, FTS_DEFAULT_HASHSIZE)


def index_one(store, path: Path, row: dict, *, commit: bool = True) -> None:
    write_prepared(store, row["id"], prepare(path, row.get("sha256"), row.get("format")), commit=commit)


def prepare(path: Path, stored_sha: str | None, fmt: str | None) -> tuple:
    """Read and parse one transcript, touching no store (a worker process may
    run it): ("error", sha, problem) or ("ok", sha, values for the transcripts
    row, entry rows as tuples of ENTRY_COLUMNS, seconds it took)."""
    started = time.perf_counter()
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > caps.TEXT_CAP_BYTES:  # never read whole: memory stays bounded by the cap
            return ("error", stored_sha, f"{path.name}: {caps.over_cap(size)}")
        data = path.read_bytes()
    except OSError as exc:
        return ("error", stored_sha, f"{path.name}: cannot read ({exc.strerror or exc})")
    sha = hashlib.sha256(data).hexdigest()
    fmt = fmt if fmt in FORMATS else None
    try:
        transcript = parse_text(decode(data, path.name), fmt, str(path))
    except TranscriptError as exc:
        return ("error", sha, str(exc))
    values = _row_values(transcript)
    entries = entry_tuples(transcript)
    return ("ok", sha, values, entries, time.perf_counter() - started)


def write_prepared(store, transcript_id: int, prepared: tuple, *, commit: bool = True) -> None:
    if prepared[0] == "error":
        _failed(store, transcript_id, prepared[1], prepared[2], commit)
        return
    _, sha, values, entries, parse_s = prepared
    with _transaction(store, commit):
        transcripts_sql.replace_entries(store, transcript_id, ENTRY_COLUMNS, entries)
        _update(store, transcript_id, {**values, "parsed_sha256": sha, "parser_version": PARSER_VERSION,
                                       "parsed_at": _now(), "parse_s": round(parse_s, 4)})


def _transaction(store, commit: bool):
    return transcripts_sql.batch(store) if commit else contextlib.nullcontext()


_update = transcripts_sql.update_transcript


def _failed(store, transcript_id: int, sha: str | None, problem: str, commit: bool = True) -> None:
    with _transaction(store, commit):
        transcripts_sql.replace_entries(store, transcript_id, ENTRY_COLUMNS, [])
        _update(store, transcript_id, {
            "status": "error", "problem": problem, "parsed_sha256": sha,
            "parser_version": PARSER_VERSION, "parsed_at": _now(), "entries": 0,
        })


def _cut(text: str | None) -> str | None:
    if not text:
        return None
    return text if len(text) <= STORED_TEXT_CHARS else text[:STORED_TEXT_CHARS]


def _json_head(value: Any, limit: int) -> str:
    """json.dumps(value, ensure_ascii=False, default=str), of which at least the
    first ``limit`` characters are exact: a dict's string values are cut to
    ``limit`` characters first (a tool call's arguments carry whole files; one
    dumped whole only to keep its first 2,000 characters was most of building
    the entries). JSON escapes each character on its own and never in fewer
    characters than it has, so a cut string's text is a prefix of the whole
    string's, at least ``limit`` long: nothing before the cut changes."""
    if isinstance(value, dict):
        value = {k: v[:limit] if isinstance(v, str) and len(v) > limit else v for k, v in value.items()}
    return json.dumps(value, ensure_ascii=False, default=str)


def tool_text(e: Entry) -> str | None:
    """What search should find about an entry's tools: names, arguments, diffs."""
    parts = []
    for c in e.tool_calls:
        args = c.arguments if isinstance(c.arguments, str) else _json_head(c.arguments, TOOL_ARGS_CHARS)
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


# entry_rows' keys after transcript_id, in order: what prepare() hands over
ENTRY_COLUMNS = ("branch", "position", "turn", "line", "role", "kind", "entry_id", "parent_id", "timestamp",
                 "text", "thinking", "tool_text", "tool_names", "tool_calls", "is_error", "repaired",
                 "tokens_input", "tokens_output", "tokens_cache_read", "tokens_cache_write", "tokens_reasoning",
                 "cost", "latency_s", "duration_s")


def entry_tuples(t: Transcript) -> list[tuple]:
    """entry_rows without the transcript's id, as tuples of ENTRY_COLUMNS
    (cheaper to hand from a worker process than dicts). Built directly, not
    through entry_rows' dicts: a fifth of parsing at bench/scale.py's size;
    tests/transcripts/test_transcripts_bulk_fts.py holds the two equal."""
    turn_of = {}
    for turn in t.turns:
        for i in range(turn.start, turn.end):
            turn_of[i] = turn.index
    out = []
    append = out.append
    branches = t.branches or [Branch(leaf_id=None, active=True, fork_id=None, entries=t.entries)]
    for b, branch in enumerate(branches):
        for e in branch.entries:
            u = e.usage
            calls = e.tool_calls
            text, thinking = e.text, e.thinking
            append((b, e.index, turn_of.get(e.index) if b == 0 else None, e.line, e.role, e.kind, e.id, e.parent_id,
                    e.timestamp,
                    (text if len(text) <= STORED_TEXT_CHARS else text[:STORED_TEXT_CHARS]) if text else None,
                    (thinking if len(thinking) <= STORED_TEXT_CHARS else thinking[:STORED_TEXT_CHARS]) if thinking else None,
                    tool_text(e) if calls or e.role == TOOL_RESULT else None,
                    ",".join(c.name for c in calls) or e.tool_name, len(calls), int(e.is_error), int(e.repaired),
                    u.input if u else None, u.output if u else None, u.cache_read if u else None,
                    u.cache_write if u else None, u.reasoning if u else None,
                    e.cost, e.latency_s, e.duration_s))
    return out


def _entry_tuples_via_rows(t: Transcript) -> list[tuple]:
    """entry_tuples the long way (the reference the tests compare it with)."""
    values = operator.itemgetter(*ENTRY_COLUMNS)
    return [values(r) for r in entry_rows(0, t)]


def _row_values(t: Transcript) -> dict[str, Any]:
    """The transcripts row's columns for a parsed transcript (the parse's
    hash, version and time are added when it is written)."""
    h, tot = t.header, t.totals
    problem = None
    if t.warnings:
        w = t.warnings[0]
        more = f" (+{len(t.warnings) - 1} more)" if len(t.warnings) > 1 else ""
        problem = f"line {w.line}: {w.kind}: {w.detail}{more}"
    return {
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
    }


def _fts_query(query: str) -> str:
    """Every word as a quoted phrase: user text never trips FTS5 syntax."""
    words = query.split()
    return " ".join('"' + w.replace('"', '""') + '"' for w in words)


def not_searched(store, models=(), challenges=()) -> str:
    """What a search of the index does not see, in a clause ("" when it sees everything): the
    text past the stored cap of the entries that reach it, and transcripts that were not indexed."""
    cut = transcripts_sql.entries_at_cap(store, STORED_TEXT_CHARS, models, challenges)
    unread = transcripts_sql.unindexed_transcripts(store, models, challenges)
    parts = []
    if cut:
        parts.append(f"the text past the first {STORED_TEXT_CHARS:,} characters of {cut} "
                     f"entr{'y' if cut == 1 else 'ies'} (`transcript show` reads them whole)")
    if unread:
        parts.append(f"{unread} transcript{'' if unread == 1 else 's'} that could not be indexed "
                     "(`benchtui show MODEL CHALLENGE` says why)")
    return "; ".join(parts)


def search(store, query: str, limit: int = 50, models=(), challenges=()) -> list[dict]:
    """Entries matching ``query`` across all transcripts, best first.

    The query may use FTS5 syntax (``"exact phrase"``, ``OR``, ``prefix*``);
    text that is not valid syntax is searched word by word instead.
    Each hit: model, challenge, relpath, path, transcript_id, branch (0 =
    active path), position, turn, line, role, kind, snippet, rank.
    ``models`` and ``challenges``, where given, keep the hits to those answers.
    """
    if not query.strip():
        return []
    try:
        ranked = transcripts_sql.ranked_entries(store, query, limit, models, challenges)
    except sqlite3.OperationalError:
        query = _fts_query(query)
        ranked = transcripts_sql.ranked_entries(store, query, limit, models, challenges)
    if not ranked:
        return []
    rank = {r["rowid"]: (i, r["rank"]) for i, r in enumerate(ranked)}
    rows = transcripts_sql.entry_hits(store, query, rank)
    for r in rows:
        # normpath: a chat export at the model's root is ../NAME from the answer folder
        r["path"] = os.path.normpath(Path(r.pop("answer_path") or "") / r["relpath"])
        r["rank"] = rank[r.pop("entry_row")][1]
        # one line per hit: the entry's own newlines and indents would split it
        r["snippet"] = " ".join((r["snippet"] or "").split())
    rows.sort(key=lambda r: r["rank"])
    return rows
