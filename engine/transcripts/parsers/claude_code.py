"""Claude Code session JSONL: lines linked by uuid / parentUuid.

Assistant API messages are written one content block per line, all lines of
a message sharing its id and repeating its usage: tokens are counted once per
message id (on its last line, whose counts are final). Tool results arrive
as ``user`` lines holding tool_result blocks.
"""
from __future__ import annotations

from typing import Any

from benchtui.transcripts import fields as f
from benchtui.transcripts.lines import Line, read_lines
from benchtui.transcripts.model import (
    ASSISTANT,
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

# Bookkeeping line types with nothing to read; kept as META without a warning.
BOOKKEEPING = {"file-history-snapshot", "queue-operation", "progress", "attachment"}


def parse(text: str, path: str = "") -> Transcript:
    warnings: list[TranscriptWarning] = []
    header = Header(format="claude-code", harness="claude-code", provider="anthropic")
    nodes: list[Node] = []
    leaf: Node | None = None
    for line in read_lines(text, warnings):
        entries = _entries(line, warnings, header)
        if line.ok and isinstance(line.obj, dict):
            node = Node(f.ident(line.obj, "uuid"), f.ident(line.obj, "parentUuid"), line.number, entries)
            if node.id is None and f.txt(line.obj, "type") in BOOKKEEPING | {"summary"}:
                node.id = f"L{line.number}"  # a standalone line, not part of the conversation chain
            if node.id and not f.flag(line.obj, "isSidechain") and f.txt(line.obj, "type") in ("user", "assistant", "system"):
                leaf = node  # the active leaf: the last main-chain conversation line
        else:
            node_id, parent_id = line.guess_ids() if not line.ok else (None, None)
            node = Node(node_id, parent_id, line.number, entries)
        nodes.append(node)
    all_entries = [e for n in nodes for e in n.entries]
    _usage_once_per_message(all_entries)
    active, branches = build(nodes, warnings, leaf)
    # standalone bookkeeping lines are tree roots of their own: not real branches
    branches = [b for b in branches if b.active or any(e.role in (USER, ASSISTANT, TOOL_RESULT) for e in b.entries)]
    _durations(active)
    pair_tool_results(all_entries, warnings)
    for e in active:
        header.model = e.model or header.model
    warnings.sort(key=lambda w: w.line)
    return Transcript(path=path, header=header, entries=active, branches=branches, warnings=warnings)


def _entries(line: Line, warnings: list[TranscriptWarning], header: Header) -> list[Entry]:
    if not line.ok:
        return [Entry(index=0, line=line.number, role=RAW, kind="invalid_json", raw=line.text, text=line.text)]
    obj = line.obj
    if not isinstance(obj, dict):
        warnings.append(TranscriptWarning(line.number, W_BAD_ENTRY, "line is JSON but not an object"))
        return [Entry(index=0, line=line.number, role=RAW, kind="non_object", raw=obj, text=f.short(obj))]
    kind = f.txt(obj, "type") or ""
    header.session_id = header.session_id or f.ident(obj, "sessionId")
    header.cwd = header.cwd or f.txt(obj, "cwd")
    header.version = header.version or f.txt(obj, "version")
    if header.started_at is None and f.txt(obj, "timestamp"):
        header.started_at = f.txt(obj, "timestamp")
    base: dict[str, Any] = dict(index=0, line=line.number, kind=kind, id=f.ident(obj, "uuid"),
                                parent_id=f.ident(obj, "parentUuid"),
                                timestamp=f.iso_to_epoch(obj.get("timestamp")), repaired=line.repaired)
    msg = f.dct(obj, "message")
    if kind == "assistant":
        return [_assistant(Entry(role=ASSISTANT, **base), msg)]
    if kind == "user":
        return _user(base, msg, obj)
    if kind == "system":
        return [Entry(role=SYSTEM, text=f.txt(obj, "content") or f.blocks_text(msg.get("content")),
                      is_error=f.txt(obj, "level") == "error", **base)]
    if kind == "summary":
        header.title = header.title or f.txt(obj, "summary")
        return [Entry(role=META, text=f"summary: {f.txt(obj, 'summary') or ''}", **base)]
    if kind in BOOKKEEPING:
        return [Entry(role=META, text=kind, **base)]
    warnings.append(TranscriptWarning(line.number, W_UNKNOWN_TYPE, f"unknown line type {kind or '(none)'!r}"))
    return [Entry(role=RAW, raw=obj, text=f.short(obj), **base)]


def _assistant(e: Entry, msg: dict) -> Entry:
    texts, thinking = [], []
    content = msg.get("content")
    for block in content if isinstance(content, list) else [content]:
        if isinstance(block, str):
            texts.append(block)
        elif isinstance(block, dict):
            kind = block.get("type")
            if kind == "text":
                texts.append(f.txt(block, "text") or "")
            elif kind == "thinking":
                thinking.append(f.txt(block, "thinking") or "")
            elif kind == "redacted_thinking":
                thinking.append("[redacted thinking]")
            elif kind in ("tool_use", "server_tool_use"):
                e.tool_calls.append(ToolCall(id=f.ident(block, "id") or "", name=f.txt(block, "name") or "?",
                                             arguments=block.get("input", {})))
    e.text, e.thinking = "\n".join(t for t in texts if t), "\n".join(t for t in thinking if t)
    e.model = f.txt(msg, "model")
    e.stop_reason = f.txt(msg, "stop_reason")
    e.extra["message_id"] = f.ident(msg, "id")
    u = f.dct(msg, "usage")
    if u:
        e.usage = Usage(input=f.count(u, "input_tokens"), output=f.count(u, "output_tokens"),
                        cache_read=f.count(u, "cache_read_input_tokens"),
                        cache_write=f.count(u, "cache_creation_input_tokens"))
    return e


def _user(base: dict[str, Any], msg: dict, obj: dict) -> list[Entry]:
    content = msg.get("content")
    if not isinstance(content, list):
        role = SYSTEM if f.flag(obj, "isMeta") else USER
        return [Entry(role=role, text=f.blocks_text(content), **base)]
    out: list[Entry] = []
    texts = [b for b in content if not (isinstance(b, dict) and b.get("type") == "tool_result")]
    if texts:
        out.append(Entry(role=USER, text=f.blocks_text(texts), **base))
    for block in content:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            e = Entry(role=TOOL_RESULT, text=f.blocks_text(block.get("content")),
                      tool_call_id=f.ident(block, "tool_use_id"), is_error=f.flag(block, "is_error"), **base)
            if out:  # only the line's first entry carries its uuid
                e.id, e.parent_id = None, None
            out.append(e)
    return out


def _usage_once_per_message(entries: list[Entry]) -> None:
    last: dict[str, Entry] = {}
    for e in entries:
        mid = e.extra.get("message_id")
        if e.role == ASSISTANT and mid and e.usage is not None:
            if mid in last:
                last[mid].usage = None
            last[mid] = e


def _durations(active: list[Entry]) -> None:
    # a result's duration: time since the assistant line that made the call
    made: dict[str, float] = {}
    for e in active:
        for c in e.tool_calls:
            if e.timestamp is not None:
                made[c.id] = e.timestamp
        if e.role == TOOL_RESULT and e.tool_call_id in made and e.timestamp is not None:
            d = e.timestamp - made[e.tool_call_id]
            if d >= 0:
                e.duration_s = round(d, 3)
