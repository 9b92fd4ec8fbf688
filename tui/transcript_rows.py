"""Turn a parsed Transcript into display rows for the virtual transcript view.

Pure Python (no Textual): the view renders only visible rows. Thinking and
tool output are folded to one line with their size until expanded; a write
is shown as the code it wrote and an edit as its diff.
"""
from __future__ import annotations

import difflib
import json
import textwrap
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from benchtui.transcripts.model import Entry, ToolCall

FILTERS = ("all", "conversation", "no tools", "errors", "user turns")


@dataclass(slots=True)
class Row:
    kind: str            # header (header+ continues it), text, thinking, fold, code, diff+, diff-, diff, tool, result, raw, warn
    entry: int           # index into the entry list being shown
    text: str
    role: str = ""
    fold: str | None = None   # key of the block this fold line opens/closes
    error: bool = False


def size_label(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KB"


def wrap(text: str, width: int) -> list[str]:
    """Wrap at ``width`` cells, between words (a word longer than the line is cut at
    the width); continuation lines are indented two cells. One ``rfind`` per row
    made: as quick as a hard wrap on a 300 KB transcript."""
    out: list[str] = []
    width = max(width, 20)
    for line in text.splitlines() or [""]:
        line = line.expandtabs(4)
        while len(line) > width:
            indent = len(line) - len(line.lstrip(" "))
            cut = line.rfind(" ", indent, width + 1)
            if cut <= indent:  # no space past the indent: one long word
                head, line = line[:width], line[width:]
            else:
                head, line = line[:cut].rstrip(" "), line[cut + 1:].lstrip(" ")
            out.append(head)
            line = "  " + line
        out.append(line)
    return out


def pack(parts: list[str], width: int, sep: str = "  ") -> list[str]:
    """``parts`` joined by ``sep`` on lines of at most ``width`` cells, each part kept
    whole on one line where it fits one (an entry's header: its cost, "$0.0099", is
    never cut at the screen's edge); continuation lines are indented two cells."""
    width = max(width, 20)
    lines: list[str] = []
    line = ""
    for part in parts:
        if line and len(line) + len(sep) + len(part) <= width:
            line += sep + part
            continue
        if line:
            lines.append(line)
        pieces = wrap(part if not lines and not line else "  " + part, width)
        lines += pieces[:-1]
        line = pieces[-1]
    return lines + [line] if line or not lines else lines


def _args(arguments: Any) -> dict:
    if isinstance(arguments, dict):
        return arguments
    if isinstance(arguments, str):
        try:
            value = json.loads(arguments)
            return value if isinstance(value, dict) else {"value": value}
        except ValueError:
            return {"value": arguments}
    return {"value": arguments}


def call_summary(name: str, args: dict) -> str:
    """One line: a multi-line command shows its first line (the rest follows as code rows)."""
    for key in ("path", "file_path", "filePath", "command", "cmd", "pattern", "query"):
        if key in args and isinstance(args[key], (str, int)):
            first, *more = str(args[key]).splitlines() or [""]
            return f"{name} {first[:200]}" + (" …" if more else "")
    text = json.dumps(args, ensure_ascii=False)
    return f"{name} {text[:160]}"


def command_rest(args: dict) -> list[str]:
    """The lines of a multi-line command after its first (``python -c "..."`` scripts)."""
    for key in ("command", "cmd"):
        if isinstance(args.get(key), str):
            return args[key].splitlines()[1:]
    return []


def edit_diff(args: dict, result_diff: str | None) -> list[str]:
    if result_diff:
        return result_diff.splitlines()
    old = args.get("oldText") or args.get("old_string") or args.get("old_str") or ""
    new = args.get("newText") or args.get("new_string") or args.get("new_str") or ""
    return list(difflib.unified_diff(str(old).splitlines(), str(new).splitlines(), "before", "after", lineterm=""))[2:]


def _clock(ts: float | None) -> str:
    if ts is None:
        return ""
    return datetime.fromtimestamp(ts, tz=UTC).strftime("%H:%M:%S")


def entry_matches(entry: Entry, mode: str, flagged_calls: AbstractSet[str] = frozenset(),
                  warned_lines: AbstractSet[int] = frozenset()) -> bool:
    """Is ``entry`` shown under filter ``mode``? ``flagged_calls``: ids of tool calls whose
    result line was repaired or warned about (the result is shown under its call, so
    the call's entry carries it); ``warned_lines``: file lines with a warning."""
    role = entry.role
    if mode == "all":
        return True
    if mode == "user turns":
        return role == "user"
    if mode == "errors":
        return (entry.is_error or role == "raw" or entry.repaired or entry.line in warned_lines
                or any(c.failed or c.id in flagged_calls for c in entry.tool_calls))
    if mode in ("conversation", "no tools"):
        return role in ("user", "assistant", "system", "compaction")
    return True


def build_rows(entries: list[Entry], width: int, expanded: set[str], mode: str = "all",
               warnings_by_line: dict[int, str] | None = None) -> list[Row]:
    """Rows for ``entries`` at ``width`` cells, honouring folds and the filter."""
    rows: list[Row] = []
    warnings_by_line = {k: v for k, v in (warnings_by_line or {}).items() if k > 0}  # 0: no line (JSON documents)
    paired = {c.id for e in entries for c in e.tool_calls if c.result is not None}
    result_notes = _result_notes(entries, paired, warnings_by_line)
    warned_lines = set(warnings_by_line)
    show_tools = mode not in ("conversation", "no tools")
    for i, e in enumerate(entries):
        if not entry_matches(e, mode, result_notes.keys(), warned_lines):
            continue
        if e.role == "tool_result" and e.tool_call_id in paired:
            continue  # shown under its call
        for n, line in enumerate(pack(_header(e), width)):
            rows.append(Row("header" if n == 0 else "header+", i, line, e.role, error=e.is_error))
        if e.role == "raw":
            warning = warnings_by_line.get(e.line, "malformed line")
            rows.extend(_warn_rows(i, warning, e.role, width, error=True))
            raw = e.raw if isinstance(e.raw, str) else json.dumps(e.raw, ensure_ascii=False)
            rows.extend(Row("raw", i, t, e.role) for t in wrap(raw or "", width))
            continue
        if e.line in warnings_by_line:
            rows.extend(_warn_rows(i, warnings_by_line[e.line], e.role, width))
        elif e.repaired:
            rows.extend(_warn_rows(i, f"line {e.line}: repaired", e.role, width))
        if e.thinking and mode != "conversation":
            key = f"{i}:thinking"
            opened = key in expanded
            rows.append(Row("fold", i, f"{'▾' if opened else '▸'} thinking ({size_label(len(e.thinking))})", e.role, fold=key))
            if opened:
                rows.extend(Row("thinking", i, t, e.role) for t in wrap(e.thinking, width - 2))
        if e.text:
            rows.extend(Row("text", i, t, e.role) for t in wrap(e.text, width))
        if not show_tools:
            continue
        for n, call in enumerate(e.tool_calls):
            rows.extend(_call_rows(i, n, e.role, call, width, expanded, result_notes.get(call.id)))
        if e.role == "tool_result":  # an unpaired result: folded like the others
            key = f"{i}:own"
            opened = key in expanded
            rows.append(Row("fold", i, f"{'▾' if opened else '▸'} output ({size_label(len(e.text))})", e.role, fold=key, error=e.is_error))
    return rows


def _result_notes(entries: list[Entry], paired: set[str], warnings_by_line: dict[int, str]) -> dict[str, tuple[str, bool]]:
    """A paired result is shown under its call, so its repair or warning is shown
    there too: call id -> (the note, whether the line was repaired)."""
    result_notes: dict[str, tuple[str, bool]] = {}
    for e in entries:
        if e.role == "tool_result" and e.tool_call_id in paired and (e.repaired or e.line in warnings_by_line):
            result_notes[e.tool_call_id] = (warnings_by_line.get(e.line) or f"line {e.line}: repaired", e.repaired)
    return result_notes


def _header(e: Entry) -> list[str]:
    """The parts of an entry's header line: role, model, line, clock, usage, cost, latency, flags."""
    head = [e.role.upper().replace("_", " ")]
    if e.model and e.role == "assistant":
        head.append(e.model)
    if e.line:
        head.append(f"line {e.line}")
    if e.timestamp:
        head.append(_clock(e.timestamp))
    if e.usage:
        head.append(f"in {e.usage.input:,} out {e.usage.output:,} cache {e.usage.cache_read:,}")
    if e.cost:
        head.append(f"${e.cost:.4f}")
    if e.latency_s:
        head.append(f"{e.latency_s:.1f}s")
    if e.repaired:
        head.append("repaired")
    if e.is_error:
        head.append("error")
    return head


def _warn_rows(i: int, text: str, role: str, width: int, error: bool = False) -> list[Row]:
    lines = textwrap.wrap(f"⚠ {text}", max(width, 20), subsequent_indent="  ", break_on_hyphens=False)
    return [Row("warn", i, t, role, error=error) for t in lines]


def _call_rows(i: int, n: int, role: str, call: ToolCall, width: int, expanded: set[str],
               note: tuple[str, bool] | None) -> list[Row]:
    """The rows of entry ``i``'s ``n``-th tool call: its summary, the command, the code
    it wrote or the diff of its edit, the note on its result, and its folded result."""
    rows: list[Row] = []
    args = _args(call.arguments)
    failed = call.failed
    rows.append(Row("tool", i, f"⚙ {call_summary(call.name, args)}", role, error=failed))
    for line in command_rest(args):
        rows.extend(Row("code", i, t, role) for t in wrap(line, width - 2))
    if note:
        rows.extend(_warn_rows(i, f"result {note[0]}", role, width))
    lname = call.name.lower()
    if lname in ("write", "create", "write_file") and isinstance(args.get("content"), str):
        for k, t in enumerate(args["content"].splitlines(), 1):
            rows.append(Row("code", i, f"{k:>4} {t.expandtabs(4)}", role))
    elif lname in ("edit", "str_replace", "multiedit", "apply_patch"):
        for t in edit_diff(args, call.result.diff if call.result else None):
            kind = "diff+" if t.startswith("+") else "diff-" if t.startswith("-") else "diff"
            rows.append(Row(kind, i, t, role))
    if call.result is not None:
        key = f"{i}:result:{n}"
        opened = key in expanded
        mark = (" ✗ failed" if failed else "") + ((" ⚠ repaired" if note[1] else " ⚠") if note else "")
        dur = f" {call.result.duration_s:.1f}s" if call.result.duration_s else ""
        rows.append(Row("fold", i, f"{'▾' if opened else '▸'} result ({size_label(len(call.result.text))}){dur}{mark}",
                        role, fold=key, error=failed))
        if opened:
            rows.extend(Row("result", i, t, role, error=failed) for t in wrap(call.result.text, width - 2))
    return rows


def branch_entries(transcript, branch) -> list:
    """Entries shown for a branch: the shared prefix of the active path, then the branch."""
    if branch is None or branch.active:
        return list(transcript.entries)
    prefix: list = []
    if branch.fork_id is not None:
        for e in transcript.entries:
            prefix.append(e)
            if e.id == branch.fork_id:
                break
    return prefix + list(branch.entries)
