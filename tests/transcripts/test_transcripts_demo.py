"""The bundled demo sessions load and show what they were written to show."""
from pathlib import Path

from benchtui.transcripts import load_transcript
from benchtui.transcripts.sniff import sniff_format

MODELS = Path(__file__).resolve().parents[2] / "models"


def test_flash_attention_session_has_two_branches():
    t = load_transcript(MODELS / "demo-careful/flash_attention/session.jsonl")
    assert t.header.format == "pi" and t.header.version == "3" and t.warnings == []
    assert len(t.branches) == 2 and sum(b.active for b in t.branches) == 1
    assert any(e.role == "branch_summary" for e in t.entries)
    assert {"read", "write", "edit", "bash"} <= set(t.totals.tools)
    assert t.totals.tool_errors == 1 and t.totals.cost > 0 and any(e.thinking for e in t.entries)


def test_hasty_dflash_session_is_misspelled_and_repaired():
    path = MODELS / "demo-hasty/dflash_verify/sesion.jsonl"
    assert sniff_format(path) == "pi"
    t = load_transcript(path)
    assert [w.kind for w in t.warnings] == ["repaired"]
    repaired = [e for e in t.entries if e.repaired]
    assert len(repaired) == 1 and repaired[0].is_error and '"./<redacted>"' in repaired[0].text
    assert t.totals.tool_errors == 2


def test_kv_export_has_a_failed_tool_call():
    t = load_transcript(MODELS / "demo-careful/kv/opencode-export.json")
    assert t.header.format == "opencode-export"
    failed = [c for e in t.entries for c in e.tool_calls if c.failed]
    assert [c.name for c in failed] == ["bash"] and "padding" in failed[0].result.text


def test_short_sessions_load_cleanly():
    for rel in ("demo-careful/backwards/session.jsonl", "demo-hasty/beam_search/session.jsonl"):
        t = load_transcript(MODELS / rel)
        assert t.warnings == [] and t.totals.tool_calls == 5, rel
