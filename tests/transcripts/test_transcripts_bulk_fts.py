"""Bulk full-text indexing: with many transcripts pending the
FTS triggers are dropped, the entries loaded and the index rebuilt once; the
searches it answers are the ones row-by-row indexing answers, its triggers
come back, and a bulk load cut short is repaired by the next index."""
import hashlib
import shutil
from pathlib import Path

import pytest
from benchtui.store.database import Store
from benchtui.transcripts import index as index_mod
from benchtui.transcripts.index import index_pending, resume_fts, search, suspend_fts

QUERIES = ["softmax", "def", "read", "error", "kernel OR cache", "the"]


def _workbench(root: Path, samples: Path) -> Store:
    store = Store(root / "store.db")
    names = ["pi_v1.jsonl", "pi_v3_branches.jsonl", "claude_code.jsonl", "codex.jsonl", "opencode_run.jsonl"]
    for i, name in enumerate(names):
        folder = root / "models" / f"m{i}" / "kv"
        folder.mkdir(parents=True)
        shutil.copy(samples / name, folder / name)
        answer = store.db["answers"].insert({"model": f"m{i}", "challenge": "kv", "path": f"models/m{i}/kv",
                                             "present": 1}).last_pk
        store.db["transcripts"].insert({"answer_id": answer, "relpath": name, "sha256": hashlib.sha256((folder / name).read_bytes()).hexdigest(),
                                        "size": (folder / name).stat().st_size, "status": "new"})
    return store


def _hits(store: Store) -> dict[str, list]:
    return {q: sorted((h["model"], h["position"], h["branch"]) for h in search(store, q, limit=500)) for q in QUERIES}


def _triggers(store: Store) -> list[str]:
    return [r[0] for r in store.conn.execute(
        "select name from sqlite_master where type = 'trigger' and tbl_name = 'transcript_entries' order by name")]


@pytest.fixture
def pair(tmp_path, samples):
    row_by_row = _workbench(tmp_path / "a", samples)
    bulk = _workbench(tmp_path / "b", samples)
    yield row_by_row, bulk, tmp_path
    row_by_row.close()
    bulk.close()


def test_bulk_indexing_answers_every_search_as_row_by_row_does(pair, monkeypatch):
    row_by_row, bulk, tmp_path = pair
    triggers = _triggers(row_by_row)
    assert len(triggers) == 3
    monkeypatch.setattr(index_mod, "BULK_FTS_MIN", 10_000)
    assert index_pending(row_by_row, tmp_path / "a") == 5
    suspended = []
    monkeypatch.setattr(index_mod, "BULK_FTS_MIN", 1)
    real = index_mod.suspend_fts
    monkeypatch.setattr(index_mod, "suspend_fts", lambda s: (suspended.append(_triggers(s)), real(s)))
    assert index_pending(bulk, tmp_path / "b") == 5
    assert suspended == [triggers]  # the bulk path ran
    expected = _hits(row_by_row)
    assert any(expected.values())
    assert _hits(bulk) == expected
    assert _triggers(bulk) == triggers  # back in place: later rows are indexed one by one again
    assert bulk.get_meta(index_mod.FTS_SUSPENDED) is None


def test_a_bulk_load_cut_short_is_rebuilt_by_the_next_index(pair, monkeypatch):
    row_by_row, bulk, tmp_path = pair
    monkeypatch.setattr(index_mod, "BULK_FTS_MIN", 10_000)
    index_pending(row_by_row, tmp_path / "a")
    index_pending(bulk, tmp_path / "b")
    # a bulk load that died after dropping the triggers: entries changed with no FTS update
    suspend_fts(bulk)
    assert _triggers(bulk) == [] and bulk.get_meta(index_mod.FTS_SUSPENDED)
    bulk.execute("update transcripts set parsed_sha256 = null")
    with bulk.conn:
        for row in index_mod.pending_rows(bulk)[:2]:
            index_mod.index_one(bulk, tmp_path / "b" / row["answer_path"] / row["relpath"], row, commit=False)
    # the next index (nothing pending but three transcripts) repairs the index first
    monkeypatch.setattr(index_mod, "BULK_FTS_MIN", 10_000)
    assert index_pending(bulk, tmp_path / "b") == 3
    assert _triggers(bulk) == _triggers(row_by_row)
    assert _hits(bulk) == _hits(row_by_row)
    assert resume_fts(bulk) is False  # nothing left suspended


def _without_time(prepared: tuple) -> tuple:
    return prepared[:4] if prepared[0] == "ok" else prepared


def test_parsing_in_worker_processes_hands_over_what_parsing_here_does(tmp_path, samples):
    names = ["pi_v1.jsonl", "pi_v3_branches.jsonl", "claude_code.jsonl", "codex.jsonl", "opencode_export.json"]
    jobs = [(samples / n, None, None) for n in names]
    (tmp_path / "broken.jsonl").write_text("not json at all\n")
    jobs += [(tmp_path / "broken.jsonl", "old", None), (tmp_path / "gone.jsonl", "old", None)]
    here = [_without_time(index_mod.prepare(*job)) for job in jobs]
    pooled = [_without_time(p) for p in index_mod._prepared_in_pool(jobs, 2)]
    assert pooled == here
    assert [p[0] for p in here] == ["ok"] * 5 + ["error", "error"]
    # the tuples follow ENTRY_COLUMNS: entry_rows' keys, less the transcript's id
    from benchtui.transcripts import parse_text

    rows = index_mod.entry_rows(7, parse_text((samples / "pi_v1.jsonl").read_text(), None, "x"))
    assert tuple(k for k in rows[0] if k != "transcript_id") == index_mod.ENTRY_COLUMNS


def test_no_worker_processes_for_a_few_transcripts_or_beside_other_threads(monkeypatch):
    import threading

    monkeypatch.setattr(index_mod, "INDEX_WORKERS", 4)
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    assert index_mod.index_workers(index_mod.POOL_MIN - 1) == 1
    assert index_mod.index_workers(index_mod.POOL_MIN) == 4
    monkeypatch.setattr(threading, "active_count", lambda: 2)  # the dashboard scans from a worker thread
    assert index_mod.index_workers(10_000) == 1


_PARENT = [0]
_REAL_PREPARE = index_mod.prepare


def _dies_in_a_worker(path, sha, fmt):
    """prepare, but a worker given codex.jsonl is killed (out of memory, a signal)."""
    import os

    if os.getpid() != _PARENT[0] and str(path).endswith("codex.jsonl"):
        os._exit(1)
    return _REAL_PREPARE(path, sha, fmt)


def test_a_broken_pool_leaves_the_rest_to_this_process(samples, monkeypatch):
    import os

    names = ["pi_v1.jsonl", "pi_v3_branches.jsonl", "claude_code.jsonl", "codex.jsonl", "opencode_run.jsonl"] * 6
    jobs = [(samples / n, None, None) for n in names]
    here = [_without_time(index_mod.prepare(*job)) for job in jobs]
    _PARENT[0] = os.getpid()
    monkeypatch.setattr(index_mod, "prepare", _dies_in_a_worker)  # a module's function: the pool can send it
    pooled = [_without_time(p) for p in index_mod._prepared_in_pool(jobs, 2)]
    assert pooled == here


def test_entry_tuples_built_directly_are_entry_rows_values(samples):
    """entry_tuples skips entry_rows' dicts: the same values,
    in ENTRY_COLUMNS order, for every sample (branches, tool results, errors,
    text past the stored cap)."""
    from benchtui.transcripts import decode, parse_text

    checked = 0
    long_entry = ('{"type":"message","id":"big","parentId":null,"message":{"role":"user","content":"'
                  + "x" * (index_mod.STORED_TEXT_CHARS + 10) + '"}}\n')
    texts = [(p.name, decode(p.read_bytes(), p.name)) for p in sorted(samples.iterdir()) if p.is_file()]
    texts.append(("long.jsonl", (samples / "pi_v1.jsonl").read_text() + long_entry))
    for name, text in texts:
        try:
            t = parse_text(text, None, name)
        except Exception:
            continue  # not a transcript (a broken sample): nothing to store
        direct = index_mod.entry_tuples(t)
        assert direct == index_mod._entry_tuples_via_rows(t), name
        checked += bool(direct)
    assert checked >= 5


def test_tool_text_cuts_long_arguments_before_dumping_them_to_the_same_text(monkeypatch):
    """A tool call's arguments are dumped with their long strings cut first:
    the stored and searched text is the one dumping them
    whole and cutting after gave."""
    import json
    import random

    from benchtui.transcripts.model import ASSISTANT, Entry, ToolCall
    from benchtui.transcripts.render import call_summary

    def whole(e: Entry) -> str | None:  # tool_text before the change
        parts = []
        for c in e.tool_calls:
            args = c.arguments if isinstance(c.arguments, str) else json.dumps(c.arguments, ensure_ascii=False, default=str)
            parts.append(f"{call_summary(c.name, c.arguments)} {args[:index_mod.TOOL_ARGS_CHARS]}")
        return index_mod._cut("\n".join(p for p in parts if p))

    monkeypatch.setattr(index_mod, "TOOL_ARGS_CHARS", 2_000)  # the cut, at a size this test can afford
    rng = random.Random(20)
    alphabet = ['a', ' ', '\n', '"', '\\', '\t', '\x01', 'é', '漢', '\U0001f600', '\ud800', '/', '<']
    n = index_mod.TOOL_ARGS_CHARS

    def text(size: int) -> str:
        return "".join(rng.choice(alphabet) for _ in range(size))

    argsets = [{"path": "a.py", "content": text(5000)}, {"content": text(n - 1), "path": text(3)},
               {"content": text(n), "x": 1}, {"content": text(n + 1), "more": [text(3000)]},
               {"a": text(700), "b": text(700), "c": text(700)}, {"nested": {"deep": text(4000)}, "k": text(2500)},
               {1: text(2100), "n": None, "f": 1.5, "t": True}, {}, ["list", text(3000)], "raw string args", 42,
               {"command": "ls\n" + text(2500)}, {"pattern": text(10)}]
    argsets += [{text(5): text(rng.randint(0, 3 * n)) for _ in range(rng.randint(1, 4))} for _ in range(200)]
    for args in argsets:
        e = Entry(index=0, line=1, role=ASSISTANT, kind="assistant", tool_calls=[ToolCall(id="1", name="write", arguments=args)])
        assert index_mod.tool_text(e) == whole(e), args if not isinstance(args, dict) else list(args)
