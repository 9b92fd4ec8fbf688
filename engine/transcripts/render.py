"""Plain-text rendering of a transcript for the terminal (``benchtui transcript show``)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from benchtui.transcripts.fields import epoch_to_iso
from benchtui.transcripts.model import RAW, TOOL_RESULT, Entry, Totals, Transcript, Usage


@dataclass
class RenderOptions:
    tools: bool = True          # tool calls and tool results
    thinking: bool = True
    errors_only: bool = False   # failed tools, error turns, raw and repaired lines
    max_chars: int = 4000       # per text block; longer blocks are cut with a note


def is_error_entry(e: Entry) -> bool:
    return e.is_error or e.role == RAW or e.repaired or any(c.failed for c in e.tool_calls)


def usage_text(u: Usage | None) -> str:
    if u is None:
        return ""
    parts = [f"in {u.input}", f"out {u.output}"]
    if u.cache_read or u.cache_write:
        parts.append(f"cache r{u.cache_read}/w{u.cache_write}")
    if u.reasoning:
        parts.append(f"reasoning {u.reasoning}")
    return " ".join(parts)


def call_summary(name: str, args: Any) -> str:
    """One line: the tool and its most telling argument."""
    if isinstance(args, dict):
        for key in ("command", "path", "file_path", "filePath", "pattern", "query", "url"):
            if isinstance(args.get(key), str):
                value = args[key].replace("\n", " ⏎ ")
                return f"{name} {value[:160]}"
        text = json.dumps(args, ensure_ascii=False, default=str)
    else:
        text = str(args)
    return f"{name} {text[:160]}"


def _block(text: str, opts: RenderOptions, indent: str = "    ") -> list[str]:
    if len(text) > opts.max_chars:
        text = text[: opts.max_chars] + f"\n… ({len(text) - opts.max_chars} more characters)"
    return [indent + line for line in text.splitlines()] or []


def entry_heading(e: Entry) -> str:
    bits = [f"[{e.index}] {e.role}"]
    if e.kind and e.kind != e.role:
        bits.append(f"({e.kind})")
    if e.role == TOOL_RESULT and e.tool_name:
        bits.append(e.tool_name)
    if e.is_error:
        bits.append("ERROR")
    if e.repaired:
        bits.append("REPAIRED")
    when = epoch_to_iso(e.timestamp)
    if when:
        bits.append(when[11:19])
    if e.usage:
        bits.append("· " + usage_text(e.usage))
    if e.cost:
        bits.append(f"· ${e.cost:.4f}")
    if e.latency_s is not None:
        bits.append(f"· latency {e.latency_s:.1f}s")
    if e.duration_s is not None:
        bits.append(f"· {e.duration_s:.1f}s")
    if e.line:
        bits.append(f"· line {e.line}")
    return " ".join(bits)


def render_entry(e: Entry, opts: RenderOptions) -> list[str]:
    out = [entry_heading(e)]
    if opts.thinking and e.thinking:
        out.append("  thinking:")
        out += _block(e.thinking, opts)
    if e.role == TOOL_RESULT:
        if e.text or not e.extra.get("diff"):
            out += _block(e.text, opts)
        if e.extra.get("diff"):  # an edit is shown as its diff
            out += _block(e.extra["diff"], opts)
        return out
    if e.text:
        out += _block(e.text, opts, "  ")
    if e.extra.get("error"):
        out.append(f"  error: {e.extra['error']}")
    if opts.tools:
        for c in e.tool_calls:
            mark = " ✗" if c.failed else ""
            out.append(f"  → {call_summary(c.name, c.arguments)}{mark}")
    return out


def seconds_text(seconds: float | None) -> str:
    """A total of seconds, or "unknown" where the transcript never said (never 0.0s)."""
    return "unknown" if seconds is None else f"{seconds:.1f}s"


def totals_lines(t: Totals) -> list[str]:
    roles = ", ".join(f"{k} {v}" for k, v in sorted(t.entries.items()))
    tools = ", ".join(f"{k} {v}" for k, v in sorted(t.tools.items(), key=lambda kv: -kv[1]))
    out = [f"entries: {roles}",
           f"tool calls: {t.tool_calls} ({tools or 'none'}), failed: {t.tool_errors}",
           f"tokens: {usage_text(t.tokens)}  cost: ${t.cost:.4f}",
           f"wall time: {seconds_text(t.duration_s)}  model latency: {seconds_text(t.model_latency_s)}  "
           f"tool time: {seconds_text(t.tool_time_s)}"]
    if t.files_written:
        out.append("files written: " + ", ".join(t.files_written))
    if t.files_edited:
        out.append("files edited: " + ", ".join(t.files_edited))
    return out


def render_text(t: Transcript, opts: RenderOptions | None = None) -> str:
    opts = opts or RenderOptions()
    h = t.header
    model = "/".join(x for x in (h.provider, h.model) if x) or "?"
    lines = [f"{h.format} session {h.session_id or ''}".rstrip() + f" · model {model}",
             f"started {h.started_at or '?'} · cwd {h.cwd or '?'}" + (f" · {h.title}" if h.title else "")]
    if len(t.branches) > 1:
        lines.append(f"branches: {len(t.branches)} (active path: {len(t.entries)} entries)")
        for b in t.branches:
            if not b.active:
                lines.append(f"  side branch to {b.leaf_id} from {b.fork_id or 'the root'}: {len(b.entries)} entries")
    for w in t.warnings:
        lines.append(f"warning: line {w.line}: {w.kind}: {w.detail}")
    lines.append("")
    for e in t.entries:
        if opts.errors_only and not is_error_entry(e):
            continue
        if not opts.tools and e.role == TOOL_RESULT:
            continue
        lines += render_entry(e, opts)
        lines.append("")
    lines.append("totals:")
    lines += ["  " + x for x in totals_lines(t.totals)]
    return "\n".join(lines) + "\n"
