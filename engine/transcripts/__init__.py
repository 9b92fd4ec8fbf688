"""Session transcripts: one parser per format, one common model (see model.py).

    from benchtui.transcripts import load_transcript, TranscriptError
    t = load_transcript(path)          # raises TranscriptError only
    t.header, t.entries, t.branches, t.warnings, t.totals, t.turns

Formats are detected from content (detect.py), never from the file name.
"""
from __future__ import annotations

import gc
from pathlib import Path

from benchtui.text import caps
from benchtui.transcripts.model import (
    ASSISTANT,
    BRANCH_SUMMARY,
    COMPACTION,
    META,
    RAW,
    ROLES,
    SYSTEM,
    TOOL_RESULT,
    USER,
    Branch,
    Entry,
    Header,
    ToolCall,
    ToolResult,
    Totals,
    Transcript,
    TranscriptError,
    TranscriptWarning,
    Turn,
    Usage,
)

__all__ = [
    "load_transcript", "parse_text", "read_text", "TranscriptError", "FORMATS",
    "Transcript", "Header", "Entry", "Branch", "ToolCall", "ToolResult", "Totals", "Turn",
    "TranscriptWarning", "Usage", "ROLES", "USER", "ASSISTANT", "TOOL_RESULT", "SYSTEM",
    "COMPACTION", "BRANCH_SUMMARY", "META", "RAW",
]

# The agent harnesses' session formats, then one-shot chat exports (PROMPT: ... MODEL: ...).
FORMATS = ("pi", "opencode-export", "opencode-run", "claude-code", "codex", "chat")

def read_text(path: Path | str) -> str:
    """The file's text, or TranscriptError for unreadable, binary or non-UTF-8
    files, and files over the text cap (engine/text/caps.py: refused before reading,
    as the scan and the dashboard refuse them)."""
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > caps.TEXT_CAP_BYTES:
            raise TranscriptError(f"{p.name}: {caps.over_cap(size)}")
        data = p.read_bytes()
    except IsADirectoryError:
        raise TranscriptError(f"{p}: is a folder, not a transcript file") from None
    except FileNotFoundError:
        raise TranscriptError(f"{p}: no such file") from None
    except OSError as exc:
        raise TranscriptError(f"{p}: cannot read ({exc.strerror or exc})") from None
    return decode(data, p.name)


def decode(data: bytes, name: str = "input") -> str:
    if b"\x00" in data[:65536]:
        raise TranscriptError(f"{name}: {caps.BINARY_TRANSCRIPT}")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise TranscriptError(
            f"{name}: not UTF-8 text (invalid byte 0x{data[exc.start]:02x} on line {line})"
        ) from None


def parse_text(text: str, fmt: str | None = None, path: str = "") -> Transcript:
    """Parse transcript text in ``fmt`` (detected when None) and compute totals."""
    from benchtui.transcripts import detect, totals
    from benchtui.transcripts.parsers import PARSERS

    name = Path(path).name or "input"
    if not text.strip():
        raise TranscriptError(f"{name}: {caps.EMPTY_TRANSCRIPT}")
    if fmt is None:
        fmt = detect.detect_format(text)
        if fmt is None:
            raise TranscriptError(f"{name}: not a known transcript format ({', '.join(FORMATS)})")
    parser = PARSERS.get(fmt)
    if parser is None:
        raise TranscriptError(f"unknown transcript format {fmt!r} (known: {', '.join(FORMATS)})")
    # Parsing allocates many small objects and no cycles: the cyclic collector
    # only costs time here (about a quarter of a 30 MB parse).
    collecting = gc.isenabled()
    gc.disable()
    try:
        transcript = parser(text, path)
        totals.fill_totals(transcript)
    finally:
        if collecting:
            gc.enable()
    return transcript


def load_transcript(path: Path | str, fmt: str | None = None) -> Transcript:
    """Read and parse a transcript file. Raises only :class:`TranscriptError`."""
    return parse_text(read_text(path), fmt, str(path))
