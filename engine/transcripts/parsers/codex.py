"""Codex CLI rollout JSONL: ``{timestamp, type, payload}`` lines.

Consecutive model-side items (reasoning, assistant message, function calls)
form one ASSISTANT entry. Tokens come from ``event_msg/token_count``: the
growth of ``total_token_usage`` since the previous count is charged to the
latest assistant entry, so repeated counts are never added twice.
"""
from __future__ import annotations

import re

from benchtui.transcripts import fields as f
from benchtui.transcripts.lines import read_lines
from benchtui.transcripts.model import (
    ASSISTANT,
    COMPACTION,
    META,
    RAW,
    SYSTEM,
    TOOL_RESULT,
    USER,
    W_BAD_ENTRY,
    W_UNKNOWN_TYPE,
    Branch,
    Entry,
    Header,
    ToolCall,
    Transcript,
    TranscriptWarning,
    Usage,
)
from benchtui.transcripts.pairing import pair_tool_results

_CONTEXT = re.compile(r"^\s*<(environment_context|user_instructions|permissions|INSTRUCTIONS)\b")
# event_msg types that repeat response items (shown once, from the items).
ECHO_EVENTS = {"user_message", "agent_message", "agent_reasoning", "agent_reasoning_raw_content",
               "exec_command_begin", "exec_command_end", "patch_apply_begin", "patch_apply_end",
               "task_started", "task_complete", "turn_diff", "agent_reasoning_section_break"}
CALL_ITEMS = {"function_call", "custom_tool_call", "local_shell_call"}
OUTPUT_ITEMS = {"function_call_output", "custom_tool_call_output"}


class _State:
    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self.open: Entry | None = None          # the assistant entry model-side items join
        self.last_assistant: Entry | None = None
        self.prev_total: dict[str, int] = {}


def parse(text: str, path: str = "") -> Transcript:
    warnings: list[TranscriptWarning] = []
    header = Header(format="codex", harness="codex")
    st = _State()
    for line in read_lines(text, warnings):
        obj = line.obj
        if not line.ok or not isinstance(obj, dict):
            if line.ok:
                warnings.append(TranscriptWarning(line.number, W_BAD_ENTRY, "line is JSON but not an object"))
            st.entries.append(Entry(index=0, line=line.number, role=RAW, kind="invalid_json", raw=line.text, text=line.text))
            st.open = None
            continue
        kind = f.txt(obj, "type") or ""
        payload = f.dct(obj, "payload")
        ts = f.iso_to_epoch(obj.get("timestamp"))
        ptype = f.txt(payload, "type") or ""
        if kind == "session_meta":
            header.session_id = f.ident(payload, "id")
            header.started_at = f.txt(payload, "timestamp") or f.txt(obj, "timestamp")
            header.cwd = f.txt(payload, "cwd")
            header.version = f.txt(payload, "cli_version")
            header.provider = f.txt(payload, "model_provider") or header.provider
        elif kind == "turn_context":
            header.model = f.txt(payload, "model") or header.model
            header.cwd = header.cwd or f.txt(payload, "cwd")
        elif kind == "response_item":
            _item(st, payload, ptype, line.number, ts, line.repaired, header, warnings)
        elif kind == "event_msg":
            _event(st, payload, ptype, line.number, ts, warnings)
        elif kind == "compacted":
            st.open = None
            st.entries.append(Entry(index=0, line=line.number, role=COMPACTION, kind=kind, timestamp=ts,
                                    text=f.txt(payload, "message") or "", repaired=line.repaired))
        else:
            warnings.append(TranscriptWarning(line.number, W_UNKNOWN_TYPE, f"unknown line type {kind or '(none)'!r}"))
            st.entries.append(Entry(index=0, line=line.number, role=RAW, kind=kind, raw=obj, text=f.short(obj), timestamp=ts))
            st.open = None
    for i, e in enumerate(st.entries):
        e.index = i
    pair_tool_results(st.entries, warnings)
    return Transcript(path=path, header=header, entries=st.entries,
                      branches=[Branch(leaf_id=None, active=True, fork_id=None, entries=st.entries)],
                      warnings=warnings)


def _assistant(st: _State, line: int, ts: float | None, repaired: bool, model: str | None) -> Entry:
    if st.open is None:
        st.open = Entry(index=0, line=line, role=ASSISTANT, kind="response", timestamp=ts, model=model)
        st.entries.append(st.open)
        st.last_assistant = st.open
    st.open.repaired = st.open.repaired or repaired
    return st.open


def _item(st: _State, p: dict, ptype: str, line: int, ts: float | None, repaired: bool,
          header: Header, warnings: list[TranscriptWarning]) -> None:
    if ptype == "message":
        role = f.txt(p, "role") or ""
        text = f.blocks_text(p.get("content"), kinds=("input_text", "output_text", "text"))
        if role == "assistant":
            e = _assistant(st, line, ts, repaired, header.model)
            e.text = "\n".join(t for t in (e.text, text) if t)
            return
        st.open = None
        is_context = role in ("developer", "system") or bool(_CONTEXT.match(text))
        st.entries.append(Entry(index=0, line=line, role=SYSTEM if is_context else USER, kind=role or "message",
                                text=text, timestamp=ts, repaired=repaired))
    elif ptype == "reasoning":
        e = _assistant(st, line, ts, repaired, header.model)
        summary = f.blocks_text(p.get("summary"), kinds=("summary_text",))
        content = f.blocks_text(p.get("content"), kinds=("reasoning_text", "text"))
        e.thinking = "\n".join(t for t in (e.thinking, summary or content) if t)
    elif ptype in CALL_ITEMS:
        e = _assistant(st, line, ts, repaired, header.model)
        if ptype == "local_shell_call":
            args = f.dct(p, "action")
            name = "shell"
        else:
            args = f.json_args(p.get("arguments") if ptype == "function_call" else p.get("input"))
            name = f.txt(p, "name") or "?"
        e.tool_calls.append(ToolCall(id=f.ident(p, "call_id") or f.ident(p, "id") or "", name=name, arguments=args))
    elif ptype in OUTPUT_ITEMS:
        st.open = None
        e = Entry(index=0, line=line, role=TOOL_RESULT, kind=ptype, tool_call_id=f.ident(p, "call_id"),
                  timestamp=ts, repaired=repaired)
        _output(e, p.get("output"))
        st.entries.append(e)
    else:
        st.open = None
        st.entries.append(Entry(index=0, line=line, role=META, kind=ptype or "response_item",
                                raw=p, text=f.short(p), timestamp=ts, repaired=repaired))


def _output(e: Entry, output: object) -> None:
    """Shell outputs are JSON text with the exit code and duration inside."""
    data = f.json_args(output) if isinstance(output, str) else output
    if isinstance(data, dict):
        e.text = f.txt(data, "output") or f.txt(data, "content") or f.short(data, 100_000)
        meta = f.dct(data, "metadata")
        code = f.num(meta, "exit_code")
        dur = f.num(meta, "duration_seconds")
        e.is_error = (code is not None and code != 0) or data.get("success") is False
        e.duration_s = dur if dur is not None and dur >= 0 else None
        if code is not None:
            e.extra["exit_code"] = int(code)
    elif isinstance(output, str):
        e.text = output
        m = re.match(r"(?:Exit code|Process exited with code):?\s*(-?\d+)", output)
        if m:
            e.extra["exit_code"] = int(m.group(1))
            e.is_error = m.group(1) != "0"
    elif output is not None:
        e.text = f.short(output, 100_000)


def _event(st: _State, p: dict, ptype: str, line: int, ts: float | None, warnings: list[TranscriptWarning]) -> None:
    if ptype == "token_count":
        total = f.dct(f.dct(p, "info"), "total_token_usage")
        if not total:
            return
        keys = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens")
        now = {k: f.count(total, k) for k in keys}
        delta = {k: max(0, now[k] - st.prev_total.get(k, 0)) for k in keys}
        st.prev_total = now
        if not any(delta.values()):
            return
        # OpenAI counts cached tokens inside input_tokens; the model keeps them apart.
        usage = Usage(input=max(0, delta["input_tokens"] - delta["cached_input_tokens"]),
                      output=delta["output_tokens"], cache_read=delta["cached_input_tokens"],
                      reasoning=delta["reasoning_output_tokens"])
        target = st.last_assistant
        if target is None:
            target = Entry(index=0, line=line, role=META, kind="token_count", text="token count", timestamp=ts)
            st.entries.append(target)
        if target.usage is None:
            target.usage = usage
        else:
            target.usage.add(usage)
    elif ptype == "error" or ptype == "stream_error":
        st.open = None
        st.entries.append(Entry(index=0, line=line, role=SYSTEM, kind=ptype, is_error=True,
                                text=f.txt(p, "message") or f.short(p), timestamp=ts))
    elif ptype in ECHO_EVENTS:
        return
    else:
        st.entries.append(Entry(index=0, line=line, role=META, kind=ptype or "event_msg", raw=p,
                                text=f.short(p), timestamp=ts))
