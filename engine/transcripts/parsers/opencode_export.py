"""opencode ``export <id>`` JSON: ``{info, messages: [{info, parts}]}``.

An assistant message may hold several steps (step-start ... step-finish),
each a model call: each step becomes one ASSISTANT entry followed by a
TOOL_RESULT entry per finished tool.
"""
from __future__ import annotations

import json
from typing import Any

from benchtui.transcripts import fields as f
from benchtui.transcripts.model import (
    ASSISTANT,
    RAW,
    SYSTEM,
    USER,
    W_BAD_ENTRY,
    W_UNKNOWN_TYPE,
    Branch,
    Entry,
    Header,
    Transcript,
    TranscriptError,
    TranscriptWarning,
)
from benchtui.transcripts.pairing import pair_tool_results
from benchtui.transcripts.parsers.opencode_common import tool_part, usage

# Parts that carry nothing to read.
QUIET_PARTS = {"step-start", "step-finish", "snapshot", "patch", "agent", "retry", "compaction"}


def parse(text: str, path: str = "") -> Transcript:
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise TranscriptError(f"opencode export is not valid JSON ({exc})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
        raise TranscriptError("opencode export has no 'messages' list")
    warnings: list[TranscriptWarning] = []
    info = f.dct(doc, "info")
    header = Header(format="opencode-export", harness="opencode", version=f.txt(info, "version"),
                    session_id=f.ident(info, "id"), cwd=f.txt(info, "directory"), title=f.txt(info, "title"),
                    started_at=f.epoch_to_iso(f.ms_to_epoch(f.dct(info, "time").get("created"))))
    entries: list[Entry] = []
    for number, message in enumerate(doc["messages"], start=1):
        if not isinstance(message, dict):
            warnings.append(TranscriptWarning(0, W_BAD_ENTRY, f"message {number} is not an object"))
            entries.append(Entry(index=0, line=0, role=RAW, kind="non_object", raw=message, text=f.short(message)))
            continue
        entries.extend(_message(message, number, header, warnings))
    for i, e in enumerate(entries):
        e.index = i
    pair_tool_results(entries, warnings)
    return Transcript(path=path, header=header, entries=entries,
                      branches=[Branch(leaf_id=None, active=True, fork_id=None, entries=entries)],
                      warnings=warnings)


def _message(message: dict, number: int, header: Header, warnings: list[TranscriptWarning]) -> list[Entry]:
    info = f.dct(message, "info")
    parts = [p for p in f.lst(message, "parts") if isinstance(p, dict)]
    role = f.txt(info, "role") or ""
    times = f.dct(info, "time")
    created, completed = f.ms_to_epoch(times.get("created")), f.ms_to_epoch(times.get("completed"))
    base: dict[str, Any] = dict(line=0, id=f.ident(info, "id"), timestamp=created)  # fields every entry shares
    if role == "user":
        text = "\n".join(f.txt(p, "text") or "" for p in parts if p.get("type") == "text" and not f.flag(p, "synthetic"))
        files = [f.txt(p, "filename") or f.txt(p, "url") or "file" for p in parts if p.get("type") == "file"]
        if files:
            text += "".join(f"\n[file {name}]" for name in files)
        return [Entry(index=0, role=USER, kind="user", text=text.strip("\n"), **base)]
    if role != "assistant":
        warnings.append(TranscriptWarning(0, W_UNKNOWN_TYPE, f"message {number}: unknown role {role or '(none)'!r}"))
        return [Entry(index=0, role=RAW, kind=role, raw=message, text=f.short(message), **base)]

    model, provider = f.txt(info, "modelID"), f.txt(info, "providerID")
    header.model, header.provider = model or header.model, provider or header.provider
    out: list[Entry] = []
    steps: list[Entry] = []
    step: Entry | None = None
    results: list[Entry] = []

    def new_step() -> Entry:
        e = Entry(index=0, role=ASSISTANT, kind="assistant", model=model, provider=provider, **base)
        steps.append(e)
        out.append(e)
        return e

    for part in parts:
        kind = part.get("type")
        if kind == "step-start":
            if step is None or step.text or step.thinking or step.tool_calls or step.usage:
                out.extend(results)  # the previous step's tool results follow it
                results = []
                step = new_step()
            continue
        if step is None:
            step = new_step()
        if kind == "text":
            if not f.flag(part, "synthetic"):
                step.text = "\n".join(t for t in (step.text, f.txt(part, "text") or "") if t)
        elif kind == "reasoning":
            step.thinking = "\n".join(t for t in (step.thinking, f.txt(part, "text") or "") if t)
        elif kind == "tool":
            call, result = tool_part(part, 0)
            step.tool_calls.append(call)
            if result is not None:
                result.id = f.ident(part, "id")
                results.append(result)
        elif kind == "step-finish":
            step.usage = usage(part.get("tokens"))
            cost = f.num(part, "cost")
            step.cost = cost if cost is not None and cost >= 0 else None
            step.stop_reason = f.txt(part, "reason")
        elif kind not in QUIET_PARTS and kind not in ("file",):
            warnings.append(TranscriptWarning(0, W_UNKNOWN_TYPE, f"message {number}: unknown part type {kind!r}"))
    out.extend(results)
    if not steps:
        new_step()
    # Without step-finish parts, the message's own counts are the only ones.
    if all(s.usage is None for s in steps):
        steps[-1].usage = usage(info.get("tokens"))
        cost = f.num(info, "cost")
        steps[-1].cost = cost if cost is not None and cost >= 0 else None
    if len(steps) == 1 and created is not None and completed is not None and completed >= created:
        steps[0].latency_s = round(completed - created, 3)
    error = f.dct(info, "error")
    if error:
        detail = f.txt(f.dct(error, "data"), "message") or f.txt(error, "name") or "error"
        steps[-1].is_error = True
        steps[-1].extra["error"] = detail
        out.append(Entry(index=0, role=SYSTEM, kind="error", text=detail, is_error=True, line=0, timestamp=completed))
    return out
