"""opencode (export and run), Claude Code and Codex parsers, and detection by content."""
import shutil

from benchtui.transcripts import load_transcript
from benchtui.transcripts.sniff import sniff_format


def test_opencode_export_failed_tool(samples):
    t = load_transcript(samples / "opencode_export.json")
    h = t.header
    assert (h.format, h.model, h.provider, h.session_id, h.title, h.cwd) == (
        "opencode-export", "glm-4.6", "zai", "ses_abc", "topk", "/w/fuse")
    assert [e.role for e in t.entries] == ["user", "assistant", "tool_result", "assistant", "tool_result", "assistant"]
    failed = t.entries[2]
    assert failed.is_error and failed.text == 'topk.cu(3): error: identifier "FLT_MAX" is undefined'
    assert failed.duration_s == 2.5 and failed.tool_name == "bash"
    assert t.entries[1].tool_calls[0].result.is_error
    assert t.entries[1].thinking == "Try nvcc."
    assert t.entries[4].extra["diff"] == "+#include <cfloat>"
    assert t.entries[5].text == "Added <cfloat>."
    tot = t.totals
    assert (tot.tool_calls, tot.tool_errors) == (2, 1)
    assert tot.tokens.as_dict() == {"input": 230, "output": 58, "cache_read": 3300, "cache_write": 50, "reasoning": 5}
    assert round(tot.cost, 6) == 0.033  # step costs, not the message's own total
    assert tot.files_edited == ["topk.cu"]
    assert [(w.kind, w.detail) for w in t.warnings] == [("unknown_type", "message 2: unknown part type 'hologram'")]


def test_opencode_run_events(samples):
    t = load_transcript(samples / "opencode_run.jsonl")
    assert t.header.format == "opencode-run" and t.header.session_id == "ses_run"
    assert [e.role for e in t.entries] == ["assistant", "tool_result", "system"]
    step = t.entries[0]
    assert step.text == "Running tests." and step.latency_s == 4.0 and step.cost == 0.002
    assert step.tool_calls[0].result.text == "1 failed"
    assert t.entries[2].is_error and t.entries[2].text == "rate limited"
    assert t.totals.tokens.input == 50 and t.totals.tool_time_s == 1.5


def test_claude_code_usage_once_per_message(samples):
    t = load_transcript(samples / "claude_code.jsonl")
    h = t.header
    assert (h.format, h.model, h.session_id, h.cwd, h.title, h.version) == (
        "claude-code", "claude-opus-4-1", "cc-1", "/w/beam", "Beam search fix", "1.0.80")
    assert [e.role for e in t.entries] == ["user", "assistant", "assistant", "tool_result", "assistant", "tool_result"]
    assert t.entries[1].usage is None and t.entries[2].usage.output == 40
    assert t.totals.tokens.as_dict() == {"input": 30, "output": 100, "cache_read": 500, "cache_write": 500, "reasoning": 0}
    assert t.totals.tool_errors == 1 and t.entries[3].duration_s == 2.5
    assert t.entries[2].tool_calls[0].result.text == "IndexError"
    assert t.totals.files_written == ["/w/beam/beam.py"]
    assert len(t.branches) == 1 and t.warnings == []


def test_codex_tokens_counted_once(samples):
    t = load_transcript(samples / "codex.jsonl")
    h = t.header
    assert (h.format, h.model, h.provider, h.session_id, h.version) == ("codex", "gpt-5-codex", "openai", "cx-1", "0.40.0")
    assert [e.role for e in t.entries] == ["system", "user", "assistant", "tool_result", "assistant",
                                           "tool_result", "assistant", "compaction"]
    assert t.entries[2].thinking == "Compile first."
    assert t.entries[2].tool_calls[0].arguments == {"command": ["nvcc", "-c", "k.cu"]}
    res = t.entries[3]
    assert res.is_error and res.extra["exit_code"] == 2 and res.duration_s == 1.5 and res.text == "k.cu(1): error"
    # the repeated token_count adds nothing; cached tokens are split out of input
    assert t.totals.tokens.as_dict() == {"input": 1100, "output": 80, "cache_read": 1400, "cache_write": 0, "reasoning": 20}
    assert t.totals.files_edited == ["k.cu"]
    assert (t.totals.tool_calls, t.totals.tool_errors) == (2, 1)


def test_detection_ignores_file_names(samples, tmp_path):
    expected = {"pi_v1.jsonl": "pi", "pi_v3_branches.jsonl": "pi", "opencode_export.json": "opencode-export",
                "opencode_run.jsonl": "opencode-run", "claude_code.jsonl": "claude-code", "codex.jsonl": "codex"}
    for i, (name, fmt) in enumerate(sorted(expected.items())):
        renamed = tmp_path / f"file{i}.txt"
        shutil.copy(samples / name, renamed)
        assert sniff_format(renamed) == fmt, name
        assert load_transcript(renamed).header.format == fmt
    other = tmp_path / "package.json"
    other.write_text('{"name": "x", "version": "1.0.0"}')
    assert sniff_format(other) is None
