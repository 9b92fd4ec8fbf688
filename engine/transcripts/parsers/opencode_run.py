"""opencode ``run --format json``: JSONL events ``{type, timestamp, sessionID, part}``.

The prompt itself is not in the stream; each step_start opens an ASSISTANT
entry, tool_use events add a call and its result.
"""
from __future__ import annotations

from benchtui.transcripts import fields as f
from benchtui.transcripts.lines import read_lines
from benchtui.transcripts.model import (
    ASSISTANT,
    RAW,
    SYSTEM,
    W_BAD_ENTRY,
    W_UNKNOWN_TYPE,
    Branch,
    Entry,
    Header,
    Transcript,
    TranscriptWarning,
)
from benchtui.transcripts.pairing import pair_tool_results
from benchtui.transcripts.parsers.opencode_common import tool_part, usage


def parse(text: str, path: str = "") -> Transcript:
    warnings: list[TranscriptWarning] = []
    header = Header(format="opencode-run", harness="opencode")
    entries: list[Entry] = []
    step: Entry | None = None

    def open_step(line: int, ts: float | None) -> Entry:
        e = Entry(index=0, line=line, role=ASSISTANT, kind="step", timestamp=ts)
        entries.append(e)
        return e

    for line in read_lines(text, warnings):
        obj = line.obj
        if not line.ok or not isinstance(obj, dict):
            if line.ok:
                warnings.append(TranscriptWarning(line.number, W_BAD_ENTRY, "line is JSON but not an object"))
            entries.append(Entry(index=0, line=line.number, role=RAW, kind="invalid_json",
                                 raw=line.text, text=line.text))
            continue
        kind = f.txt(obj, "type") or ""
        ts = f.any_time(obj.get("timestamp"))
        part = f.dct(obj, "part")
        header.session_id = header.session_id or f.ident(obj, "sessionID")
        if header.started_at is None and ts is not None:
            header.started_at = f.epoch_to_iso(ts)
        if kind == "step_start":
            step = open_step(line.number, ts)
            step.repaired = line.repaired
        elif kind in ("text", "reasoning", "tool_use", "step_finish"):
            if step is None:
                step = open_step(line.number, ts)
            step.repaired = step.repaired or line.repaired
            if kind == "text":
                step.text = "\n".join(t for t in (step.text, f.txt(part, "text") or "") if t)
            elif kind == "reasoning":
                step.thinking = "\n".join(t for t in (step.thinking, f.txt(part, "text") or "") if t)
            elif kind == "tool_use":
                call, result = tool_part(part, line.number)
                step.tool_calls.append(call)
                if result is not None:
                    result.repaired = line.repaired
                    entries.append(result)
            else:
                step.usage = usage(part.get("tokens"))
                cost = f.num(part, "cost")
                step.cost = cost if cost is not None and cost >= 0 else None
                step.stop_reason = f.txt(part, "reason")
                if ts is not None and step.timestamp is not None and ts >= step.timestamp:
                    step.latency_s = round(ts - step.timestamp, 3)
                step = None
        elif kind == "error":
            err = f.dct(obj, "error")
            detail = f.txt(f.dct(err, "data"), "message") or f.txt(err, "name") or f.short(obj.get("error"))
            entries.append(Entry(index=0, line=line.number, role=SYSTEM, kind="error", text=detail,
                                 is_error=True, timestamp=ts, repaired=line.repaired))
        else:
            warnings.append(TranscriptWarning(line.number, W_UNKNOWN_TYPE, f"unknown event type {kind or '(none)'!r}"))
            entries.append(Entry(index=0, line=line.number, role=RAW, kind=kind, raw=obj, text=f.short(obj),
                                 timestamp=ts, repaired=line.repaired))
    for i, e in enumerate(entries):
        e.index = i
    pair_tool_results(entries, warnings)
    return Transcript(path=path, header=header, entries=entries,
                      branches=[Branch(leaf_id=None, active=True, fork_id=None, entries=entries)],
                      warnings=warnings)
