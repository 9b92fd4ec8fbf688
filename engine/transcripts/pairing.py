"""Pair tool results with the calls they answer, across a whole file."""
from __future__ import annotations

from benchtui.transcripts.model import TOOL_RESULT, W_UNPAIRED, Entry, ToolCall, ToolResult, TranscriptWarning


def pair_tool_results(entries: list[Entry], warnings: list[TranscriptWarning] | None = None) -> None:
    """Attach each TOOL_RESULT entry to its ToolCall (by id), in file order.

    Call ids are unique within a session, so pairing over every entry (all
    branches) is safe. Results whose call is unknown stay unpaired.
    """
    calls: dict[str, ToolCall] = {}
    for entry in entries:
        for call in entry.tool_calls:
            if call.id:
                calls[call.id] = call
        if entry.role != TOOL_RESULT or not entry.tool_call_id:
            continue
        call = calls.get(entry.tool_call_id)
        if call is None:
            if warnings is not None:
                warnings.append(TranscriptWarning(entry.line, W_UNPAIRED,
                                                  f"result for unknown tool call {entry.tool_call_id!r}"))
            continue
        if entry.tool_name is None:
            entry.tool_name = call.name
        call.result = ToolResult(text=entry.text, is_error=entry.is_error,
                                 duration_s=entry.duration_s, entry_index=entry.index, diff=entry_diff(entry))


def entry_diff(entry: Entry) -> str | None:
    diff = entry.extra.get("diff")
    return diff if isinstance(diff, str) else None

