"""pi (pi-mono coding agent) sessions: JSONL, versions 1 to 3.

v1 has no ids (a chain in file order); v2 and v3 form a tree by id/parentId
whose active leaf is the last entry. v3 renamed the ``hookMessage`` role to
``custom``; both are read.
"""
from __future__ import annotations

from typing import Any

from benchtui.transcripts import fields as f
from benchtui.transcripts.lines import Line, read_lines
from benchtui.transcripts.model import (
    ASSISTANT,
    BRANCH_SUMMARY,
    COMPACTION,
    META,
    RAW,
    SYSTEM,
    TOOL_RESULT,
    USER,
    W_BAD_ENTRY,
    W_UNKNOWN_TYPE,
    Entry,
    Header,
    ToolCall,
    Transcript,
    TranscriptWarning,
    Usage,
)
from benchtui.transcripts.pairing import pair_tool_results
from benchtui.transcripts.tree import Node, build


def parse(text: str, path: str = "") -> Transcript:
    warnings: list[TranscriptWarning] = []
    lines = read_lines(text, warnings)
    header = Header(format="pi", harness="pi")
    version = 1
    start = 0
    if lines and lines[0].ok and isinstance(lines[0].obj, dict) and lines[0].obj.get("type") == "session":
        h = lines[0].obj
        v = f.num(h, "version")
        version = int(v) if v is not None and 1 <= v <= 1000 else 1
        header.version = str(version)
        header.session_id = f.ident(h, "id")
        header.started_at = f.txt(h, "timestamp")
        header.cwd = f.txt(h, "cwd")
        header.provider = f.txt(h, "provider")
        header.model = f.txt(h, "modelId") or f.txt(h, "model")
        start = 1
    else:
        warnings.append(TranscriptWarning(lines[0].number if lines else 1, W_BAD_ENTRY,
                                          "no session header on the first line"))

    nodes: list[Node] = []
    prev_id: str | None = None
    for _i, line in enumerate(lines[start:]):
        entry = _entry(line, warnings, header)
        if entry is None:
            continue
        if version >= 2:
            node_id, parent_id = entry.id, entry.parent_id
            if not line.ok:
                node_id, parent_id = line.guess_ids()
                entry.id, entry.parent_id = node_id, parent_id
        else:  # v1: a chain in file order
            node_id = f"L{line.number}"
            parent_id = prev_id
            prev_id = node_id
        nodes.append(Node(node_id, parent_id, line.number, [entry]))

    all_entries = [e for n in nodes for e in n.entries]
    active, branches = build(nodes, warnings)
    _tool_durations(branches)
    pair_tool_results(all_entries, warnings)
    _header_from_path(header, active)
    warnings.sort(key=lambda w: w.line)
    return Transcript(path=path, header=header, entries=active, branches=branches, warnings=warnings)


def _entry(line: Line, warnings: list[TranscriptWarning], header: Header) -> Entry | None:
    if not line.ok:
        return Entry(index=0, line=line.number, role=RAW, kind="invalid_json", raw=line.text, text=line.text)
    obj = line.obj
    if not isinstance(obj, dict):
        warnings.append(TranscriptWarning(line.number, W_BAD_ENTRY, "line is JSON but not an object"))
        return Entry(index=0, line=line.number, role=RAW, kind="non_object", raw=obj, text=f.short(obj))
    kind = f.txt(obj, "type") or ""
    e = Entry(index=0, line=line.number, role=META, kind=kind, id=f.ident(obj, "id"),
              parent_id=f.ident(obj, "parentId"), timestamp=f.iso_to_epoch(obj.get("timestamp")),
              repaired=line.repaired)
    if kind == "message":
        _message(e, f.dct(obj, "message"), warnings)
    elif kind == "model_change":
        e.provider, e.model = f.txt(obj, "provider"), f.txt(obj, "modelId")
        e.text = f"model: {e.provider or '?'}/{e.model or '?'}"
    elif kind == "thinking_level_change":
        e.text = f"thinking level: {f.txt(obj, 'thinkingLevel') or '?'}"
    elif kind == "compaction":
        e.role, e.text = COMPACTION, f.txt(obj, "summary") or ""
        e.extra = {"first_kept_id": f.ident(obj, "firstKeptEntryId"), "tokens_before": f.num(obj, "tokensBefore")}
    elif kind == "branch_summary":
        e.role, e.text = BRANCH_SUMMARY, f.txt(obj, "summary") or ""
        e.extra = {"from_id": f.ident(obj, "fromId")}
    elif kind == "custom":
        e.extra = {"custom_type": f.txt(obj, "customType")}
        e.text = f"custom: {f.txt(obj, 'customType') or '?'}"
        e.raw = obj.get("data")
    elif kind == "custom_message":
        e.role = SYSTEM
        e.text = f.blocks_text(obj.get("content"))
        e.extra = {"custom_type": f.txt(obj, "customType"), "display": obj.get("display") is not False}
    elif kind == "label":
        e.text = f"label {f.txt(obj, 'label') or ''} on {f.ident(obj, 'targetId') or '?'}".strip()
        e.extra = {"label": f.txt(obj, "label"), "target_id": f.ident(obj, "targetId")}
    elif kind == "session_info":
        name = f.txt(obj, "name")
        e.text = f"session name: {name or ''}"
        if name:
            header.title = name
    else:
        warnings.append(TranscriptWarning(line.number, W_UNKNOWN_TYPE, f"unknown entry type {kind or '(none)'!r}"))
        e.role, e.raw, e.text = RAW, obj, f.short(obj)
    return e


def _message(e: Entry, msg: dict, warnings: list[TranscriptWarning]) -> None:
    role = f.txt(msg, "role") or ""
    e.kind = role or "message"
    content = msg.get("content")
    sent = f.ms_to_epoch(msg.get("timestamp"))
    if role == "user":
        e.role, e.text = USER, f.blocks_text(content)
    elif role == "assistant":
        e.role = ASSISTANT
        _assistant(e, msg, content)
        if sent is not None and e.timestamp is not None and e.timestamp >= sent:
            e.latency_s = round(e.timestamp - sent, 3)
    elif role == "toolResult":
        e.role, e.text = TOOL_RESULT, f.blocks_text(content)
        e.tool_call_id, e.tool_name = f.ident(msg, "toolCallId"), f.txt(msg, "toolName")
        e.is_error = f.flag(msg, "isError")
        diff = f.txt(f.dct(msg, "details"), "diff")
        if diff:
            e.extra["diff"] = diff
    elif role == "bashExecution":
        # a command the user ran with "!": shown as a system step, not a model tool call
        e.role = SYSTEM
        code = f.num(msg, "exitCode")
        e.text = f"$ {f.txt(msg, 'command') or ''}\n{f.txt(msg, 'output') or ''}".rstrip()
        e.is_error = (code is not None and code != 0) or f.flag(msg, "cancelled")
        e.extra = {"exit_code": code, "truncated": f.flag(msg, "truncated")}
    elif role in ("custom", "hookMessage"):
        e.role, e.text = SYSTEM, f.blocks_text(content)
        e.extra = {"custom_type": f.txt(msg, "customType")}
    elif role == "branchSummary":
        e.role, e.text = BRANCH_SUMMARY, f.txt(msg, "summary") or f.blocks_text(content)
    elif role == "compactionSummary":
        e.role, e.text = COMPACTION, f.txt(msg, "summary") or f.blocks_text(content)
    else:
        warnings.append(TranscriptWarning(e.line, W_UNKNOWN_TYPE, f"unknown message role {role or '(none)'!r}"))
        e.role, e.raw, e.text = RAW, msg, f.short(msg)


def _assistant(e: Entry, msg: dict, content: Any) -> None:
    texts, thinking = [], []
    for block in content if isinstance(content, list) else [content]:
        if isinstance(block, str):
            texts.append(block)
        elif not isinstance(block, dict):
            continue
        elif block.get("type") == "text":
            texts.append(f.txt(block, "text") or "")
        elif block.get("type") == "thinking":
            thinking.append(f.txt(block, "thinking") or ("[redacted thinking]" if f.flag(block, "redacted") else ""))
        elif block.get("type") == "toolCall":
            e.tool_calls.append(ToolCall(id=f.ident(block, "id") or "", name=f.txt(block, "name") or "?",
                                         arguments=f.json_args(block.get("arguments", {}))))
    e.text, e.thinking = "\n".join(t for t in texts if t), "\n".join(t for t in thinking if t)
    e.model, e.provider = f.txt(msg, "model"), f.txt(msg, "provider")
    e.stop_reason = f.txt(msg, "stopReason")
    if e.stop_reason in ("error", "aborted"):
        e.is_error = True
        e.extra["error"] = f.txt(msg, "errorMessage") or e.stop_reason
    usage = f.dct(msg, "usage")
    if usage:
        e.usage = Usage(input=f.count(usage, "input"), output=f.count(usage, "output"),
                        cache_read=f.count(usage, "cacheRead"), cache_write=f.count(usage, "cacheWrite"),
                        reasoning=f.count(usage, "reasoning"))
        cost = f.num(f.dct(usage, "cost"), "total")
        e.cost = cost if cost is not None and cost >= 0 else None


def _tool_durations(branches) -> None:
    # pi runs a turn's tools one after another: a result's duration is the time
    # since the entry before it (the assistant message or the previous result).
    for branch in branches:
        prev: Entry | None = None
        for e in branch.entries:
            if (e.role == TOOL_RESULT and e.duration_s is None and prev is not None
                    and e.timestamp is not None and prev.timestamp is not None
                    and e.timestamp >= prev.timestamp):
                e.duration_s = round(e.timestamp - prev.timestamp, 3)
            prev = e


def _header_from_path(header: Header, active: list[Entry]) -> None:
    for e in active:
        if e.model:
            header.model = e.model
        if e.provider:
            header.provider = e.provider
