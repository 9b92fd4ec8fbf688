"""Storing parsed transcripts, staleness by hash, failures, and full-text search."""
import hashlib
import shutil
from pathlib import Path

import pytest
from benchtui.store.database import Store
from benchtui.transcripts.index import index_pending, search


def _add(store: Store, root: Path, model: str, challenge: str, src: Path, name: str, fmt: str | None) -> int:
    folder = root / "models" / model / challenge
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(src, folder / name)
    answer = store.answer_id(model, challenge)
    if answer is None:
        answer = store.db["answers"].insert({"model": model, "challenge": challenge,
                                             "path": f"models/{model}/{challenge}", "present": 1}).last_pk
    sha = hashlib.sha256((folder / name).read_bytes()).hexdigest()
    return store.db["transcripts"].insert({"answer_id": answer, "relpath": name, "sha256": sha,
                                           "size": (folder / name).stat().st_size, "format": fmt,
                                           "status": "new"}).last_pk


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "store.db")
    yield s
    s.close()


def test_index_stores_rows_entries_and_search(store, tmp_path, samples):
    root = tmp_path
    pi_id = _add(store, root, "m1", "kv", samples / "pi_v3_branches.jsonl", "sesion.jsonl", "pi")
    oc_id = _add(store, root, "m2", "fuse", samples / "opencode_export.json", "export.json", None)
    assert index_pending(store, root) == 2
    assert index_pending(store, root) == 0  # nothing changed: nothing re-parsed

    row = store.db["transcripts"].get(pi_id)
    assert (row["status"], row["format"], row["model"], row["entries"], row["branches"]) == ("ok", "pi", "gpt-5", 11, 2)
    assert (row["tool_calls"], row["tool_errors"], row["warnings"], row["repaired"]) == (2, 1, 3, 1)
    assert (row["tokens_input"], row["tokens_cache_read"]) == (1310, 700)
    assert row["problem"].startswith("line 11: repaired:")
    stored = store.query("select branch, count(*) n from transcript_entries where transcript_id = ? group by branch", (pi_id,))
    assert stored == [{"branch": 0, "n": 11}, {"branch": 1, "n": 2}]
    assert store.db["transcripts"].get(oc_id)["format"] == "opencode-export"

    hits = search(store, "FLT_MAX")
    assert [(h["model"], h["challenge"], h["position"], h["role"]) for h in hits] == [("m2", "fuse", 2, "tool_result")]
    assert "[FLT_MAX]" in hits[0]["snippet"] and hits[0]["path"] == "models/m2/fuse/export.json"
    # side branches are searchable too, and say so
    hits = search(store, "permission")
    assert {(h["branch"], h["position"]) for h in hits} == {(0, 4), (1, 5)}
    # tool arguments are indexed
    assert sorted(h["position"] for h in search(store, "kv.py")) == [2, 5, 6]
    # text that is not FTS syntax still searches
    assert search(store, '"./<redacted>') and search(store, "   ") == []


def test_changed_file_is_reparsed_and_broken_file_recorded(store, tmp_path, samples):
    root = tmp_path
    tid = _add(store, root, "m1", "kv", samples / "pi_v1.jsonl", "session.jsonl", "pi")
    bad = _add(store, root, "m1", "fuse", samples / "pi_v1.jsonl", "session.jsonl", "pi")
    path = root / "models/m1/fuse/session.jsonl"
    path.write_bytes(b"\x00\x01binary")
    store.db["transcripts"].update(bad, {"sha256": hashlib.sha256(path.read_bytes()).hexdigest()})
    assert index_pending(store, root) == 2
    failed = store.db["transcripts"].get(bad)
    assert failed["status"] == "error" and "binary file" in failed["problem"]
    assert store.db["transcripts"].get(tid)["entries"] == 4

    # the scanner sees a new hash: only that transcript is parsed again, old entries replaced
    p = root / "models/m1/kv/session.jsonl"
    lines = p.read_text().splitlines()
    p.write_text("\n".join(lines[:3]) + "\n")
    store.db["transcripts"].update(tid, {"sha256": hashlib.sha256(p.read_bytes()).hexdigest()})
    assert index_pending(store, root) == 1
    assert store.db["transcripts"].get(tid)["entries"] == 2
    assert store.query("select count(*) n from transcript_entries where transcript_id = ?", (tid,)) == [{"n": 2}]
    assert search(store, "Done") == []  # the removed entry left the FTS index as well
