"""Scan: a prompt the benchmark handed every answer is not a
duplicate_file; scan_warnings holds the latest scan's warnings only, indexed."""
from __future__ import annotations

from pathlib import Path

from benchtui.store.database import Store
from benchtui.workbench.layout import find_workbench
from benchtui.workbench.scan import scan_workbench


def test_shared_prompt_files_are_not_duplicates_and_warnings_do_not_pile_up(tmp_path):
    for m in ("a", "b", "c"):
        folder = tmp_path / "models" / m / "ternary_training"
        folder.mkdir(parents=True)
        (folder / "PROMPT.md").write_text("Train a ternary model.\n")
        (folder / "ternary_rerun_prompt.md").write_text("Run it again with the fixed seed.\n")
        (folder / "train.py").write_text(f"# {m}\n")
    (tmp_path / "models" / "a" / "ternary_training" / "copy.py").write_text("x = 1\n")
    (tmp_path / "models" / "b" / "ternary_training" / "copy.py").write_text("x = 1\n")
    wb = find_workbench(str(tmp_path), None, Path(tmp_path))
    with Store(wb.store_path) as store:
        first = scan_workbench(wb, store)
        dups = {w.path for w in first.warnings if w.kind == "duplicate_file"}
        assert dups == {"a/ternary_training/copy.py", "b/ternary_training/copy.py"}
        for _ in range(3):
            again = scan_workbench(wb, store)
        assert store.query("select count(*) as n from scan_warnings")[0]["n"] == len(again.warnings) == len(first.warnings)
        plan = " ".join(r["detail"] for r in store.query(
            "explain query plan select kind, path, detail from scan_warnings where scan_id = 1 and model = 'a' "
            "and challenge = 'kv'"))
        assert "USING INDEX" in plan


def test_an_existing_store_drops_old_warnings_and_reclassifies_on_rescan(tmp_path):
    """A store scanned before the fix: its doc-kind prompt copies and piled-up warnings."""
    for m in ("a", "b"):
        folder = tmp_path / "models" / m / "kv"
        folder.mkdir(parents=True)
        (folder / "kv.py").write_text(f"# {m}\n")
        (folder / "rerun_prompt.md").write_text("again\n")
    wb = find_workbench(str(tmp_path), None, Path(tmp_path))
    with Store(wb.store_path) as store:
        scan_workbench(wb, store)
        store.execute("update files set kind = 'doc' where relpath = 'rerun_prompt.md'")
        store.conn.commit()
        result = scan_workbench(wb, store)
        assert not [w for w in result.warnings if w.kind == "duplicate_file"]
        assert {r["kind"] for r in store.query("select kind from files where relpath = 'rerun_prompt.md'")} == {"prompt"}


def test_a_binary_transcript_an_older_scan_filed_as_an_artifact_is_flagged_after_upgrade(tmp_path):
    folder = tmp_path / "models" / "a" / "kv"
    folder.mkdir(parents=True)
    (folder / "kv.py").write_text("x = 1\n")
    (folder / "session.jsonl").write_bytes(b'{"type": "session"}\n\x00\x01')
    wb = find_workbench(str(tmp_path), None, Path(tmp_path))
    with Store(wb.store_path) as store:
        scan_workbench(wb, store)
        # as an older scanner left it
        store.execute("update files set kind = 'artifact', readable = 1, problem = null where relpath = 'session.jsonl'")
        store.execute("delete from transcripts")
        store.execute("delete from _migrations where name = 'm005_scan_warnings_latest'")
        store.conn.commit()
    with Store(wb.store_path) as store:  # the upgrade's migration runs on open
        result = scan_workbench(wb, store)
        assert store.query("select kind from files where relpath = 'session.jsonl'")[0]["kind"] == "transcript"
        assert [w.detail for w in result.warnings if w.kind == "unreadable_file"] == \
            ["binary file (NUL bytes), not a text transcript"]
        assert scan_workbench(wb, store).hashed == 0  # once, not on every scan
