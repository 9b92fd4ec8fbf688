"""pi sessions v1 and v3: entries, tree, branches, totals, robustness."""
from benchtui.transcripts import load_transcript


def roles(entries):
    return [e.role for e in entries]


def test_pi_v1_chain_and_totals(samples):
    t = load_transcript(samples / "pi_v1.jsonl")
    assert t.header.format == "pi" and t.header.version == "1"
    assert (t.header.provider, t.header.model, t.header.cwd) == ("anthropic", "claude-3-7-sonnet", "/tmp/work")
    assert roles(t.entries) == ["user", "assistant", "tool_result", "assistant"]
    assert [e.line for e in t.entries] == [2, 3, 4, 5]
    assert [e.index for e in t.entries] == [0, 1, 2, 3]
    call = t.entries[1].tool_calls[0]
    assert (call.id, call.name, call.arguments["path"]) == ("t1", "write", "hello.py")
    assert call.result.text == "Successfully wrote 12 bytes to hello.py"
    assert call.result.entry_index == 2 and call.result.is_error is False
    assert t.entries[1].latency_s == 3.0 and t.entries[3].latency_s == 2.0
    assert t.entries[2].duration_s == 0.5
    tot = t.totals
    assert tot.entries == {"user": 1, "assistant": 2, "tool_result": 1}
    assert (tot.tool_calls, tot.tool_errors, tot.tools) == (1, 0, {"write": 1})
    assert tot.tokens.as_dict() == {"input": 230, "output": 25, "cache_read": 0, "cache_write": 0, "reasoning": 0}
    assert round(tot.cost, 6) == 0.0011
    assert tot.duration_s == 7.0 and tot.model_latency_s == 5.0 and tot.tool_time_s == 0.5
    assert tot.files_written == ["hello.py"] and tot.files_edited == []
    assert len(t.branches) == 1 and t.warnings == []


def test_pi_v3_active_path_and_side_branch(samples):
    t = load_transcript(samples / "pi_v3_branches.jsonl")
    assert t.header.version == "3" and t.header.model == "gpt-5" and t.header.provider == "openai"
    assert [e.line for e in t.entries] == [2, 3, 4, 5, 8, 9, 10, 11, 12, 13, 14]
    assert roles(t.entries) == ["meta", "user", "assistant", "tool_result", "branch_summary", "compaction",
                                "assistant", "tool_result", "raw", "raw", "assistant"]
    active, side = t.branches
    assert active.active and active.entries is t.entries and active.leaf_id == "e000000c"
    assert not side.active and side.leaf_id == "e0000006" and side.fork_id == "e0000004"
    assert [e.line for e in side.entries] == [6, 7] and [e.index for e in side.entries] == [4, 5]
    # the abandoned bash call still pairs with its failed result
    assert side.entries[0].tool_calls[0].result.is_error
    assert t.entries[4].text == "Tried deleting build/, permission denied."
    assert t.entries[5].text.startswith("User wants the mask fixed")
    assert t.entries[5].extra == {"first_kept_id": "e0000004", "tokens_before": 50000.0}
    assert t.entries[2].thinking == "Look at the file."


def test_pi_v3_malformed_lines(samples):
    t = load_transcript(samples / "pi_v3_branches.jsonl")
    assert [(w.line, w.kind) for w in t.warnings] == [(11, "repaired"), (12, "bad_json"), (13, "unknown_type")]
    repaired = t.entries[7]
    assert repaired.repaired and repaired.is_error
    assert repaired.text == 'Traceback: File "./<redacted>", line 3, in <module>'
    assert repaired.extra["diff"] == "-mask\n+mask2"
    raw = t.entries[8]
    assert raw.raw == "this line is not json at all" and raw.line == 12
    unknown = t.entries[9]
    assert unknown.kind == "shiny_new_thing" and unknown.raw["payload"] == {"x": 1}


def test_pi_v3_totals_follow_active_path_only(samples):
    tot = load_transcript(samples / "pi_v3_branches.jsonl").totals
    assert tot.entries == {"meta": 1, "user": 1, "assistant": 3, "tool_result": 2, "branch_summary": 1,
                           "compaction": 1, "raw": 2}
    assert (tot.tool_calls, tot.tool_errors, tot.tools) == (2, 1, {"read": 1, "edit": 1})
    assert tot.tokens.as_dict() == {"input": 1310, "output": 95, "cache_read": 700, "cache_write": 10, "reasoning": 0}
    assert round(tot.cost, 6) == 0.016
    assert tot.files_edited == ["kv.py"] and tot.files_written == []
    assert tot.model_latency_s == 7.5


def test_pi_turns(samples):
    t = load_transcript(samples / "pi_v3_branches.jsonl")
    assert [(u.start, u.end) for u in t.turns] == [(0, 1), (1, 11)]
    assert t.turns[1].totals.tool_calls == 2 and t.turns[0].totals.tool_calls == 0


def test_missing_parent_attaches_to_previous_entry():
    from benchtui.transcripts import parse_text

    text = "\n".join([
        '{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00Z","cwd":"/"}',
        '{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01Z","message":{"role":"user","content":"one"}}',
        '{"type":"message","id":"b","parentId":"zzz","timestamp":"2025-01-01T00:00:02Z","message":{"role":"user","content":"two"}}',
    ])
    t = parse_text(text)
    assert [e.text for e in t.entries] == ["one", "two"]
    assert [(w.line, w.kind) for w in t.warnings] == [(3, "orphan")]
    assert len(t.branches) == 1
