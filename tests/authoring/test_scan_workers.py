"""The cold scan's hashing in worker processes: the files,
transcripts and warnings it stores are the ones hashing here stores, a pool
that breaks leaves the rest to the scanning process, and the scanner's
sniffing of the bytes it already read names the format sniff_format does."""
from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import pytest
from benchtui.store.database import Store
from benchtui.transcripts import index as index_mod
from benchtui.transcripts.sniff import HEAD_BYTES, sniff_format, sniff_head
from benchtui.workbench import scan as scan_mod
from benchtui.workbench.layout import find_workbench
from benchtui.workbench.scan import scan_workbench

SAMPLES = Path(__file__).resolve().parents[1] / "transcripts" / "samples"
TRANSCRIPTS = ["pi_v1.jsonl", "pi_v3_branches.jsonl", "claude_code.jsonl", "codex.jsonl", "opencode_export.json",
               "opencode_run.jsonl"]


def _workbench(root: Path) -> None:
    (root.parent / "outside.txt").write_text("secret\n")
    for m in range(3):
        for c, cid in enumerate(("kv", "fuse")):
            folder = root / "models" / f"m{m}" / cid
            (folder / "src" / "deep").mkdir(parents=True)
            (folder / "PROMPT.md").write_text(f"# {cid}\n\nWrite it.\n" + ("drift\n" if m == 2 else ""))
            (folder / "solution.py").write_text(f"def f():\n    return {m}\n")
            (folder / "src" / "deep" / "helper.py").write_text("x = 1")  # no trailing newline
            (folder / "same.py").write_text("shared = True\n")  # the same bytes in every answer
            (folder / "NOTES.md").write_text("notes\n" * (m + 1))
            (folder / "blob.bin").write_bytes(bytes(range(256)) * 8)
            (folder / "latin.txt").write_bytes(b"caf\xe9\n")  # not UTF-8
            (folder / "nul.py").write_bytes(b"a = 1\x00\n")  # binary text
            (folder / "results.json").write_text('{"loss": 0.5}')  # JSON, not a transcript
            (folder / "empty.md").write_text("")
            name = TRANSCRIPTS[(m * 2 + c) % len(TRANSCRIPTS)]
            shutil.copy(SAMPLES / name, folder / name)
            (folder / "broken.jsonl").write_bytes(b"\x00\x01 not a session")  # a binary transcript
            os.symlink(root.parent / "outside.txt", folder / "leak.txt")  # leaves the workbench: warned, not read
        (root / "models" / f"m{m}" / "empty_answer").mkdir(parents=True)


def _stored(store: Store) -> dict:
    return {
        "files": store.conn.execute(
            "select a.model, a.challenge, f.relpath, f.size, f.sha256, f.kind, f.readable, f.problem, f.lines "
            "from files f join answers a on a.id = f.answer_id order by f.id").fetchall(),
        "answers": store.conn.execute(
            "select id, model, challenge, path, status, files, transcripts, bytes from answers order by id").fetchall(),
        "transcripts": store.conn.execute(
            "select answer_id, relpath, sha256, size, format, status, problem, entries from transcripts "
            "order by id").fetchall(),
        "warnings": store.conn.execute(
            "select kind, model, challenge, path, detail from scan_warnings order by id").fetchall(),
    }


def _scan(root: Path, store_path: Path) -> tuple[dict, object]:
    wb = find_workbench(str(root), None, root)
    with Store(store_path) as store:
        result = scan_workbench(wb, store)
        return _stored(store), result


@pytest.fixture
def pooled(monkeypatch):
    """Two worker processes, chunks of three files; the test lowers POOL_MIN to use them."""
    monkeypatch.setattr(index_mod, "INDEX_WORKERS", 2)
    monkeypatch.setattr(scan_mod, "EXAMINE_CHUNK", 3)
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    used = []
    real_close = scan_mod._Examiner.close
    monkeypatch.setattr(scan_mod._Examiner, "close", lambda self: (used.append((self.pool is not None, self.broken)),
                                                                   real_close(self)))
    return used


def test_hashing_in_worker_processes_stores_what_hashing_here_stores(tmp_path, pooled, monkeypatch):
    root = tmp_path / "wb"
    _workbench(root)
    expected, here = _scan(root, tmp_path / "here.db")
    assert pooled == [(False, False)]  # the default POOL_MIN: these few files are hashed here
    pooled.clear()
    monkeypatch.setattr(index_mod, "POOL_MIN", 1)
    got, there = _scan(root, tmp_path / "pooled.db")
    assert pooled == [(True, False)]
    assert got == expected
    assert there.hashed == here.hashed == len(expected["files"])
    kinds = {r[2]: (r[5], r[7]) for r in expected["files"]}
    assert kinds["broken.jsonl"][0] == "transcript" and kinds["latin.txt"][1].startswith("not UTF-8")
    assert {r[5] for r in expected["transcripts"]} == {"ok", "error"}
    # an answer's warnings in the order its files are walked, whichever way each was found
    walked = [rel for rel, _, _ in scan_mod.walk_answer(find_workbench(str(root), None, root), root / "models" / "m0" / "kv")]
    warned = [w[3].split("/", 2)[2] for w in expected["warnings"] if w[0] == "unreadable_file" and w[3].startswith("m0/kv/")]
    assert warned == [rel for rel in walked if rel in warned] and "leak.txt" in warned and "latin.txt" in warned
    # a rescan with nothing changed hashes nothing and writes the same
    wb = find_workbench(str(root), None, root)
    with Store(tmp_path / "pooled.db") as store:
        assert scan_workbench(wb, store).hashed == 0
        assert _stored(store) == got


_PARENT = [0]
_REAL_EXAMINE_JOB = scan_mod._examine_job


def _dies_in_a_worker(path, rel, st, data_files):
    """_examine_job, but a worker given a codex.jsonl is killed (out of memory, a signal)."""
    if os.getpid() != _PARENT[0] and rel == "codex.jsonl":
        os._exit(1)
    return _REAL_EXAMINE_JOB(path, rel, st, data_files)


def test_a_broken_hashing_pool_leaves_the_rest_to_the_scan(tmp_path, pooled, monkeypatch):
    root = tmp_path / "wb"
    _workbench(root)
    expected, _ = _scan(root, tmp_path / "here.db")
    monkeypatch.setattr(index_mod, "POOL_MIN", 1)
    _PARENT[0] = os.getpid()
    monkeypatch.setattr(scan_mod, "_examine_job", _dies_in_a_worker)
    got, _ = _scan(root, tmp_path / "pooled.db")
    assert got == expected
    assert pooled == [(False, False), (True, True)]  # the second scan's pool broke


def test_sniffing_the_bytes_read_names_what_sniffing_the_file_does(tmp_path):
    paths = [SAMPLES / n for n in TRANSCRIPTS]
    big = tmp_path / "big.jsonl"  # a head cut mid-line
    big.write_bytes((SAMPLES / "pi_v1.jsonl").read_bytes() * (HEAD_BYTES // 1000))
    exact = tmp_path / "exact.jsonl"  # exactly HEAD_BYTES: the head is the whole file
    exact.write_bytes(big.read_bytes()[:HEAD_BYTES])
    (tmp_path / "nul.jsonl").write_bytes(b'{"type":"session"}\n\x00')
    (tmp_path / "empty.jsonl").write_bytes(b"")
    paths += [big, exact, tmp_path / "nul.jsonl", tmp_path / "empty.jsonl"]
    for path in paths:
        data = path.read_bytes()
        head = data[:HEAD_BYTES + 1]  # what the scanner reads at least
        assert sniff_head(head, complete=len(head) <= HEAD_BYTES) == sniff_format(path), path.name
    assert sniff_format(SAMPLES / "codex.jsonl") == "codex"
