"""Pieces shared by the two opencode formats: a tool part and token counts."""
from __future__ import annotations

from typing import Any

from benchtui.transcripts import fields as f
from benchtui.transcripts.model import TOOL_RESULT, Entry, ToolCall, Usage


def usage(tokens: Any) -> Usage | None:
    if not isinstance(tokens, dict):
        return None
    cache = f.dct(tokens, "cache")
    return Usage(input=f.count(tokens, "input"), output=f.count(tokens, "output"),
                 cache_read=f.count(cache, "read"), cache_write=f.count(cache, "write"),
                 reasoning=f.count(tokens, "reasoning"))


def tool_part(part: dict, line: int) -> tuple[ToolCall, Entry | None]:
    """The call, and a TOOL_RESULT entry once the tool finished (completed or error)."""
    state = f.dct(part, "state")
    call_id = f.ident(part, "callID") or f.ident(part, "id") or ""
    name = f.txt(part, "tool") or "?"
    call = ToolCall(id=call_id, name=name, arguments=state.get("input", {}))
    status = f.txt(state, "status") or ""
    if status not in ("completed", "error"):
        return call, None
    times = f.dct(state, "time")
    t0, t1 = f.ms_to_epoch(times.get("start")), f.ms_to_epoch(times.get("end"))
    failed = status == "error"
    output = f.txt(state, "error") if failed else f.txt(state, "output")
    if output is None and state.get("output") is not None:
        output = f.short(state.get("output"), 100_000)
    result = Entry(index=0, line=line, role=TOOL_RESULT, kind="tool", tool_call_id=call_id,
                   tool_name=name, text=output or "", is_error=failed, timestamp=t1)
    if t0 is not None and t1 is not None and t1 >= t0:
        result.duration_s = round(t1 - t0, 3)
    title = f.txt(state, "title")
    if title:
        result.extra["title"] = title
    diff = f.txt(f.dct(state, "metadata"), "diff")
    if diff:
        result.extra["diff"] = diff
    return call, result
