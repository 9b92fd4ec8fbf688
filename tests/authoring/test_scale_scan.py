"""What the scan does at scale: the os.scandir walk
keeps the old rules, and transcript indexing in batches keeps every result."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

from benchtui.store.database import Store
from benchtui.transcripts import index as index_mod
from benchtui.workbench.layout import find_workbench
from benchtui.workbench.scan import scan_workbench

SAMPLES = Path(__file__).resolve().parents[1] / "transcripts" / "samples"


def test_walk_lists_nested_files_and_keeps_the_link_and_dot_rules(tmp_path):
    root = tmp_path / "wb"
    answer = root / "models" / "m1" / "kv"
    (answer / "src" / "deep").mkdir(parents=True)
    (answer / "src" / "deep" / "b.py").write_text("b = 1\n")
    (answer / "a.py").write_text("a = 1\n")
    (answer / ".hidden").mkdir()
    (answer / ".hidden" / "x.py").write_text("x = 1\n")
    (answer / "__pycache__").mkdir()
    (answer / "__pycache__" / "a.pyc").write_bytes(b"\0")
    other = root / "models" / "m1" / "fuse"
    other.mkdir()
    (other / "k.cu").write_text("// k\n")
    os.symlink(other, answer / "linked_dir")            # a folder link: never followed
    os.symlink(answer / "a.py", answer / "inside.py")   # a file link inside the workbench: indexed
    outside = tmp_path / "secret.txt"
    outside.write_text("secret\n")
    os.symlink(outside, answer / "leak.txt")             # leaves the workbench: warned, not read
    os.mkfifo(answer / "pipe")                           # not a regular file: skipped
    wb = find_workbench(str(root), None, root)
    with Store(wb.store_path) as store:
        result = scan_workbench(wb, store, index_transcripts=False)
        files = [r["relpath"] for r in store.query(
            "select relpath from files f join answers a on a.id = f.answer_id where a.challenge = 'kv' order by relpath")]
    assert files == ["a.py", "inside.py", "src/deep/b.py"]
    leaks = [w for w in result.warnings if w.kind == "unreadable_file"]
    assert [(w.path, w.detail) for w in leaks] == [("m1/kv/leak.txt", "symlink leaves the workbench (not followed)")]


def test_batched_indexing_keeps_every_result_and_every_failure(tmp_path, monkeypatch):
    monkeypatch.setattr(index_mod, "COMMIT_EVERY", 2)
    root = tmp_path / "wb"
    for i in range(5):
        folder = root / "models" / f"m{i}" / "kv"
        folder.mkdir(parents=True)
        shutil.copy(SAMPLES / "pi_v1.jsonl", folder / "session.jsonl")
        with open(folder / "session.jsonl", "a") as fh:
            fh.write(f'{{"type":"message","id":"x{i}","message":{{"role":"user","content":"note {i}"}}}}\n')
    broken = root / "models" / "m2" / "kv" / "session.jsonl"
    wb = find_workbench(str(root), None, root)
    with Store(wb.store_path) as store:
        scan_workbench(wb, store, index_transcripts=False)
        broken.unlink()  # found by the scan, gone when indexed: an error row, not a lost batch
        assert index_mod.index_pending(store, root) == 5
        rows = store.query("select a.model, t.status, t.entries from transcripts t join answers a on a.id = t.answer_id "
                           "order by a.model")
        assert [(r["model"], r["status"]) for r in rows] == [
            ("m0", "ok"), ("m1", "ok"), ("m2", "error"), ("m3", "ok"), ("m4", "ok")]
        assert all(r["entries"] > 0 for r in rows if r["status"] == "ok")
        assert index_mod.index_pending(store, root) == 0  # all recorded: nothing left pending
