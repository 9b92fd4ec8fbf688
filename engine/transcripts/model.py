"""The common transcript model every parser produces.

The dashboard's viewer, the CLI and the store all read these classes only, so
their names and fields are a stable contract. Parsers fill them; totals.py
computes the Totals; nothing here parses anything.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

# Entry roles. A parser may only use these; anything it cannot map is RAW.
USER = "user"
ASSISTANT = "assistant"
TOOL_RESULT = "tool_result"
SYSTEM = "system"              # system prompts, harness notices, errors from the harness
COMPACTION = "compaction"      # context was summarised; text = the summary
BRANCH_SUMMARY = "branch_summary"
META = "meta"                  # model/thinking-level changes, labels, session info, custom
RAW = "raw"                    # a line that was not JSON, or an entry type we do not know
ROLES = (USER, ASSISTANT, TOOL_RESULT, SYSTEM, COMPACTION, BRANCH_SUMMARY, META, RAW)

# Warning kinds.
W_BAD_JSON = "bad_json"            # line is not JSON and could not be repaired (kept as RAW)
W_REPAIRED = "repaired"            # line was not JSON; a repair made it load
W_UNKNOWN_TYPE = "unknown_type"    # entry type unknown to the parser (kept as RAW)
W_BAD_ENTRY = "bad_entry"          # JSON, but not the shape the format promises
W_ORPHAN = "orphan"                # parent id not found; entry attached to the root
W_UNPAIRED = "unpaired_result"     # a tool result whose call is not on the path


class TranscriptError(Exception):
    """The file cannot be read as a transcript at all. The message is one line for the user.

    Raised for unreadable files, binary or non-UTF-8 content, empty files and
    content in no known format. A file with *some* bad lines loads with warnings.
    """


@dataclass
class Usage:
    """Token counts. Zero means 'not given' as well as zero; providers rarely distinguish."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    reasoning: int = 0

    def add(self, other: Usage | None) -> None:
        if other is None:
            return
        self.input += other.input
        self.output += other.output
        self.cache_read += other.cache_read
        self.cache_write += other.cache_write
        self.reasoning += other.reasoning

    @property
    def total(self) -> int:
        return self.input + self.output + self.cache_read + self.cache_write

    def as_dict(self) -> dict[str, int]:
        return {"input": self.input, "output": self.output, "cache_read": self.cache_read,
                "cache_write": self.cache_write, "reasoning": self.reasoning}


@dataclass
class ToolResult:
    """What a tool call returned, paired to its call by id."""

    text: str = ""
    is_error: bool = False
    duration_s: float | None = None    # tool wall time where the harness records it
    entry_index: int | None = None     # index of the TOOL_RESULT entry on the active path, if separate
    diff: str | None = None            # unified diff for edits, where the harness gives one


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: Any = field(default_factory=dict)   # usually a dict; kept as given otherwise
    result: ToolResult | None = None

    @property
    def failed(self) -> bool:
        return self.result is not None and self.result.is_error


@dataclass
class Entry:
    """One step of a session: a message, a tool result, a compaction, a raw line..."""

    index: int                          # position on its path (active path: transcript.entries[index])
    line: int                           # 1-based line in the file (JSON documents: 0)
    role: str                           # one of ROLES
    kind: str = ""                      # the format's own type name, e.g. "message", "toolResult", "custom"
    id: str | None = None
    parent_id: str | None = None
    text: str = ""
    thinking: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None     # TOOL_RESULT entries: the call they answer
    tool_name: str | None = None
    is_error: bool = False              # failed tool result, or an assistant turn that ended in error
    timestamp: float | None = None      # Unix seconds (UTC) when the entry was written
    usage: Usage | None = None          # counted once per model response
    cost: float | None = None           # USD
    latency_s: float | None = None      # model latency: entry written minus request start
    duration_s: float | None = None     # tool_result entries: tool wall time, where known
    model: str | None = None
    provider: str | None = None
    stop_reason: str | None = None
    repaired: bool = False              # the line was not valid JSON and was repaired to load
    raw: Any = None                     # RAW entries: the bad line (str) or the unknown object
    # Format details worth showing, by stable keys: "diff" (edit results), "exit_code",
    # "tokens_before", "first_kept_id", "from_id", "custom_type", "label", "error"...
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def when(self) -> datetime | None:
        if self.timestamp is None:
            return None
        return datetime.fromtimestamp(self.timestamp, tz=UTC)


@dataclass
class TranscriptWarning:
    line: int
    kind: str
    detail: str

    def as_dict(self) -> dict[str, Any]:
        return {"line": self.line, "kind": self.kind, "detail": self.detail}


@dataclass
class Branch:
    """One root-to-leaf path of a tree-shaped session (pi v2/v3, Claude Code).

    ``entries``: for the active branch, the whole active path (same objects as
    ``Transcript.entries``); for the others, only the entries after the point
    where they leave the active path (``fork_id`` = id of the last shared entry,
    None when they share nothing).
    """

    leaf_id: str | None
    active: bool
    fork_id: str | None
    entries: list[Entry] = field(default_factory=list)


@dataclass
class Header:
    format: str                          # pi, opencode-export, opencode-run, claude-code, codex
    harness: str                         # pi, opencode, claude-code, codex
    version: str | None = None           # format/harness version where stated
    model: str | None = None             # last model used (or the only one)
    provider: str | None = None
    started_at: str | None = None        # ISO 8601 as written in the file
    cwd: str | None = None
    session_id: str | None = None
    title: str | None = None


@dataclass
class Totals:
    """Aggregates over a list of entries (a whole transcript or one turn)."""

    entries: dict[str, int] = field(default_factory=dict)      # role -> count
    tool_calls: int = 0
    tools: dict[str, int] = field(default_factory=dict)        # tool name -> calls
    tool_errors: int = 0
    tokens: Usage = field(default_factory=Usage)
    cost: float = 0.0
    # None where no entry says (a format without timestamps, latencies or tool durations):
    # unknown is shown as unknown, never as 0.0s
    duration_s: float | None = None      # wall time: last timestamp minus first
    model_latency_s: float | None = None  # sum of assistant latencies
    tool_time_s: float | None = None     # sum of known tool durations
    files_written: list[str] = field(default_factory=list)     # write calls, first-seen order
    files_edited: list[str] = field(default_factory=list)      # edit calls, first-seen order

    def as_dict(self) -> dict[str, Any]:
        return {
            "entries": dict(self.entries), "tool_calls": self.tool_calls, "tools": dict(self.tools),
            "tool_errors": self.tool_errors, "tokens": self.tokens.as_dict(),
            "cost": round(self.cost, 6), "duration_s": _rounded(self.duration_s),
            "model_latency_s": _rounded(self.model_latency_s),
            "tool_time_s": _rounded(self.tool_time_s),
            "files_written": list(self.files_written), "files_edited": list(self.files_edited),
        }


def _rounded(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds, 3)


@dataclass
class Turn:
    """A user prompt and everything until the next one (entries[start:end] on the active path)."""

    index: int
    start: int
    end: int
    totals: Totals


@dataclass
class Transcript:
    path: str
    header: Header
    entries: list[Entry] = field(default_factory=list)         # active path, in order
    branches: list[Branch] = field(default_factory=list)       # empty for linear formats
    warnings: list[TranscriptWarning] = field(default_factory=list)
    totals: Totals = field(default_factory=Totals)
    turns: list[Turn] = field(default_factory=list)
