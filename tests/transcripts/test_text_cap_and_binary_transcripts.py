"""A binary session.jsonl and a transcript over the text cap are
said the same way by the scan, `show`, `transcript ...` and the indexer, and
an oversized one is never read whole."""
from __future__ import annotations

from pathlib import Path

import pytest
from benchtui.cli import main
from benchtui.store.database import Store
from benchtui.text import caps
from benchtui.workbench import scan as scan_mod
from benchtui.workbench.layout import find_workbench
from benchtui.workbench.scan import scan_workbench

SAMPLES = Path(__file__).parent / "samples"
CAP = 4000


@pytest.fixture
def wb(tmp_path, monkeypatch) -> Path:
    monkeypatch.setattr(caps, "TEXT_CAP_BYTES", CAP)
    monkeypatch.setattr(scan_mod, "MAX_TEXT_BYTES", CAP)
    root = tmp_path / "wb"
    for model in ("binary", "big"):
        (root / "models" / model / "kv").mkdir(parents=True)
        (root / "models" / model / "kv" / "kv.py").write_text("def prefill(k, v, lengths):\n    pass\n")
    (root / "models" / "binary" / "kv" / "session.jsonl").write_bytes(b'{"type": "session"}\n\x00\x01\x02' * 10)
    sample = (SAMPLES / "pi_v1.jsonl").read_text()
    text = sample
    while len(text) <= CAP:
        text += sample.split("\n", 1)[1]  # more entries after the header
    (root / "models" / "big" / "kv" / "session.jsonl").write_text(text)
    return root


def rows(root: Path):
    wb = find_workbench(str(root), None, root)
    with Store(wb.store_path) as store:
        result = scan_workbench(wb, store)
        files = {(r["model"], r["relpath"]): r for r in store.query(
            "select a.model, f.relpath, f.kind, f.problem from files f join answers a on a.id = f.answer_id")}
        transcripts = {r["model"]: r for r in store.query(
            "select a.model, t.status, t.problem, t.entries from transcripts t join answers a on a.id = t.answer_id")}
    return result, files, transcripts


def test_binary_transcript_is_a_transcript_with_the_cli_words(wb, capsys):
    result, files, transcripts = rows(wb)
    warned = {w.path: w.detail for w in result.warnings if w.kind == "unreadable_file"}
    assert warned["binary/kv/session.jsonl"] == caps.BINARY_TRANSCRIPT
    assert files[("binary", "session.jsonl")]["kind"] == "transcript"
    assert transcripts["binary"]["status"] == "error" and caps.BINARY_TRANSCRIPT in transcripts["binary"]["problem"]
    assert main(["transcript", "stats", str(wb / "models" / "binary" / "kv" / "session.jsonl")]) == 1
    assert caps.BINARY_TRANSCRIPT in capsys.readouterr().err


def test_oversized_transcript_is_refused_everywhere_alike(wb, capsys, monkeypatch):
    size = (wb / "models" / "big" / "kv" / "session.jsonl").stat().st_size
    words = caps.over_cap(size)
    real_read_bytes = Path.read_bytes

    def guarded(self):
        assert self.name != "session.jsonl" or self.stat().st_size <= CAP, "read an over-cap transcript whole"
        return real_read_bytes(self)

    monkeypatch.setattr(Path, "read_bytes", guarded)
    result, files, transcripts = rows(wb)
    warned = {w.path: w.detail for w in result.warnings if w.kind == "unreadable_file"}
    assert warned["big/kv/session.jsonl"] == words
    assert transcripts["big"]["status"] == "error" and words in transcripts["big"]["problem"]
    assert not transcripts["big"]["entries"]
    assert main(["--workbench", str(wb), "show", "big", "kv"]) == 0
    out = capsys.readouterr().out
    assert f"transcript: session.jsonl (pi, error: session.jsonl: {words})" in out
    assert "not run yet: `benchtui run -m big -c kv`" in out  # the real names, not MODEL / CHALLENGE
    for action in ("stats", "show"):
        assert main(["transcript", action, str(wb / "models" / "big" / "kv" / "session.jsonl")]) == 1
        assert f"session.jsonl: {words}" in capsys.readouterr().err


def test_stats_lists_the_first_warnings_then_counts_the_rest(tmp_path, capsys):
    path = tmp_path / "s.jsonl"
    path.write_text((SAMPLES / "pi_v1.jsonl").read_text() + "not json\n" * 30)
    assert main(["transcript", "stats", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.count("warning: line") == 20
    assert "... 10 more warning(s), 30 in all (--json lists every one)" in out
    assert main(["transcript", "stats", str(path), "--json"]) == 0
    import json

    assert len(json.loads(capsys.readouterr().out)["warnings"]) == 30
