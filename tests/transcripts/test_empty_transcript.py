"""An empty session.jsonl is said the way a binary one is: listed as the
answer's transcript, flagged by the scan, refused by the indexer and the CLI
in the same words; `transcript show PATH --workbench W` reads PATH from W."""
from __future__ import annotations

from pathlib import Path

import pytest
from benchtui.cli import main
from benchtui.store.database import Store
from benchtui.text import caps
from benchtui.workbench.layout import find_workbench
from benchtui.workbench.scan import scan_workbench


@pytest.fixture
def wb(tmp_path) -> Path:
    root = tmp_path / "wb"
    for model in ("empty", "blank", "binary"):
        (root / "models" / model / "kv").mkdir(parents=True)
        (root / "models" / model / "kv" / "kv.py").write_text("def prefill(k, v, lengths):\n    pass\n")
    (root / "models" / "empty" / "kv" / "session.jsonl").write_bytes(b"")
    (root / "models" / "blank" / "kv" / "session.jsonl").write_bytes(b"  \n\n")
    (root / "models" / "binary" / "kv" / "session.jsonl").write_bytes(b'{"type": "session"}\n\x00\x01')
    return root


def scanned(root: Path):
    wb = find_workbench(str(root), None, root)
    with Store(wb.store_path) as store:
        result = scan_workbench(wb, store)
        files = {r["model"]: r for r in store.query(
            "select a.model, f.kind, f.readable, f.problem from files f join answers a on a.id = f.answer_id "
            "where f.relpath = 'session.jsonl'")}
        transcripts = {r["model"]: r for r in store.query(
            "select a.model, t.status, t.problem from transcripts t join answers a on a.id = t.answer_id")}
        again = scan_workbench(wb, store)
    return result, files, transcripts, again


def test_an_empty_transcript_is_listed_and_flagged_as_a_binary_one_is(wb):
    result, files, transcripts, again = scanned(wb)
    warned = {w.path: w.detail for w in result.warnings if w.kind == "unreadable_file"}
    assert warned == {"empty/kv/session.jsonl": caps.EMPTY_TRANSCRIPT, "blank/kv/session.jsonl": caps.EMPTY_TRANSCRIPT,
                      "binary/kv/session.jsonl": caps.BINARY_TRANSCRIPT}
    for model in ("empty", "blank", "binary"):
        assert files[model]["kind"] == "transcript" and files[model]["readable"] == 0, model
        assert transcripts[model]["status"] == "error", model
    assert caps.EMPTY_TRANSCRIPT in transcripts["empty"]["problem"]
    assert caps.EMPTY_TRANSCRIPT in transcripts["blank"]["problem"]
    assert [w.detail for w in again.warnings if w.kind == "unreadable_file"].count(caps.EMPTY_TRANSCRIPT) == 2
    assert again.hashed == 0


def test_an_empty_transcript_an_older_scan_filed_as_an_artifact_is_flagged_on_the_next_scan(wb):
    wb_ = find_workbench(str(wb), None, wb)
    with Store(wb_.store_path) as store:
        scan_workbench(wb_, store)
        # as the scanner before this rule left it
        store.execute("update files set kind = 'artifact', readable = 1, problem = null where relpath = 'session.jsonl' "
                      "and size = 0")
        store.execute("delete from transcripts where problem like '%empty%'")
        store.execute("delete from _migrations where name = 'm010_empty_transcripts'")
        store.conn.commit()
    with Store(wb_.store_path) as store:  # the upgrade's migration runs on open
        result = scan_workbench(wb_, store)
        assert store.query("select kind from files where relpath = 'session.jsonl' and size = 0")[0]["kind"] == "transcript"
        assert {w.path for w in result.warnings if w.detail == caps.EMPTY_TRANSCRIPT} == \
            {"empty/kv/session.jsonl", "blank/kv/session.jsonl"}
        assert scan_workbench(wb_, store).hashed == 0  # once, not on every scan


def test_the_cli_says_the_same_words(wb, capsys):
    assert main(["transcript", "stats", str(wb / "models" / "empty" / "kv" / "session.jsonl")]) == 1
    assert caps.EMPTY_TRANSCRIPT in capsys.readouterr().err


def test_transcript_show_reads_a_relative_path_from_the_workbench(tmp_path, monkeypatch, capsys):
    root = tmp_path / "wb"
    folder = root / "models" / "m" / "kv"
    folder.mkdir(parents=True)
    sample = Path(__file__).parent / "samples" / "pi_v1.jsonl"
    (folder / "session.jsonl").write_text(sample.read_text())
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.delenv("BENCHTUI_WORKBENCH", raising=False)
    assert main(["--workbench", str(root), "transcript", "show", "models/m/kv/session.jsonl"]) == 0
    assert capsys.readouterr().out.strip()
    assert main(["--workbench", str(root), "transcript", "stats", "models/m/kv/session.jsonl", "--json"]) == 0
    capsys.readouterr()
    # a path valid from the current folder still works, and an absolute one
    (elsewhere / "here.jsonl").write_text(sample.read_text())
    assert main(["--workbench", str(root), "transcript", "show", "here.jsonl"]) == 0
    assert main(["--workbench", str(root), "transcript", "show", str(folder / "session.jsonl")]) == 0
    capsys.readouterr()
    # neither: one line that says where it looked
    assert main(["--workbench", str(root), "transcript", "show", "models/m/kv/nope.jsonl"]) == 1
    err = capsys.readouterr().err
    assert "nope.jsonl" in err and str(root) in err and len(err.strip().splitlines()) == 1
