"""Bad input: clear TranscriptError or a loaded file with warnings, never anything else."""
import json
import os

import pytest
from benchtui.transcripts import FORMATS, TranscriptError, decode, load_transcript, parse_text
from benchtui.transcripts.lines import repair
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


def test_redaction_quote_is_repaired():
    line = '{"a": "File \\"./<redacted>", line 3, in <module>", "b": 1}'
    assert repair(line) == {"a": 'File "./<redacted>", line 3, in <module>', "b": 1}


def test_hopeless_line_is_not_repaired():
    with pytest.raises(ValueError):
        repair('{"a": [1, 2')


@pytest.mark.parametrize("data, message", [
    (b"\x89PNG\r\n\x1a\n\x00\x00", "binary file"),
    (b'{"type":"session"}\n\xff\xfe oops', "not UTF-8 text (invalid byte 0xff on line 2)"),
    (b"   \n\n", "empty file"),
    (b"hello world\n", "not a known transcript format"),
])
def test_unreadable_content_gives_one_line_error(tmp_path, data, message):
    p = tmp_path / "session.jsonl"
    p.write_bytes(data)
    with pytest.raises(TranscriptError) as info:
        load_transcript(p)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_missing_and_folder_paths(tmp_path):
    with pytest.raises(TranscriptError, match="no such file"):
        load_transcript(tmp_path / "nope.jsonl")
    with pytest.raises(TranscriptError, match="is a folder"):
        load_transcript(tmp_path)


def test_broken_export_is_an_error_not_a_crash():
    with pytest.raises(TranscriptError, match="opencode export is not valid JSON"):
        parse_text('{"info": {}, "messages": [', "opencode-export")


def test_truncated_last_line_keeps_the_rest():
    text = ('{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00Z","cwd":"/"}\n'
            '{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01Z","message":{"role":"user","content":"hi"}}\n'
            '{"type":"message","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:02Z","message":{"role":"assis')
    t = parse_text(text)
    assert [e.role for e in t.entries] == ["user", "raw"]
    assert [(w.line, w.kind) for w in t.warnings] == [(3, "bad_json")]


def _check(text: str, fmt: str) -> None:
    try:
        t = parse_text(text, fmt)
    except TranscriptError:
        return
    assert all(e.index == i for i, e in enumerate(t.entries))
    json.dumps(t.totals.as_dict())


FUZZ = settings(max_examples=int(os.environ.get("TRANSCRIPT_FUZZ_EXAMPLES", "80")), deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(st.binary(max_size=400), st.sampled_from(FORMATS))
def test_fuzz_bytes(data, fmt):
    try:
        text = decode(data)
    except TranscriptError:
        return
    _check(text, fmt)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**16, 10**16) | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["type", "id", "parentId", "message", "role", "content", "timestamp", "usage", "payload",
                         "part", "state", "info", "parts", "messages", "uuid", "parentUuid", "sessionId",
                         "sessionID", "toolCallId", "arguments", "tokens", "cost", "status", "input", "output",
                         "call_id", "summary", "text", "version", "total_token_usage"]) | st.text(max_size=5),
        inner, max_size=6),
    max_leaves=25)


@FUZZ
@given(st.lists(json_values, min_size=1, max_size=8), st.sampled_from(FORMATS))
def test_fuzz_structured_lines(objs, fmt):
    text = "\n".join(json.dumps(o) for o in objs)
    _check(text, fmt)
    if fmt == "opencode-export":
        _check(json.dumps({"info": objs[0], "messages": objs}), fmt)


def test_a_bad_json_line_is_said_in_plain_words():
    """json's own message may end in "at"; the column is said once, without "at at"."""
    from benchtui.transcripts.lines import read_lines

    warnings = []
    read_lines('{"a": 1}\n{"b": "never closed\n{"c": }\n', warnings)
    said = [w.detail for w in warnings]
    assert any("Unterminated string starting at column 7" in m for m in said), said
    assert any("Expecting value at column 7" in m for m in said), said
    assert not any("at at" in m for m in said), said
