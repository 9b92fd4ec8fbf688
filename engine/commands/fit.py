"""Check messages printed to the terminal's width.

A message is never cut inside a word, so a number (3.3e-16) is never shortened
into another number. A failing check keeps its whole message, its own lines
kept and each wrapped under its column; any other check gets one line that
ends with an ellipsis where cut.
"""
from __future__ import annotations

import shutil
import textwrap

WHOLE_UNLESS = frozenset({"pass", "info", "skipped"})  # the rest fail: their whole message is the evidence
FALLBACK_COLUMNS = 120  # output to a pipe or file
MIN_TEXT = 30  # narrower than this under the prefix, continuation lines start at a fixed indent


def columns() -> int:
    """The terminal's width ($COLUMNS first, as `shutil` reads it)."""
    return shutil.get_terminal_size((FALLBACK_COLUMNS, 24)).columns


def fit(prefix: str, message: str | None, *, whole: bool, width: int | None = None) -> list[str]:
    """Lines for ``prefix + message``: wrapped in full, or one line ending in '…' where it is cut."""
    width = width or columns()
    text = " ".join(str(message or "").split())
    if len(prefix) + len(text) <= width and not (whole and "\n" in str(message or "").strip()):
        return [prefix + text]
    indent = " " * (len(prefix) if width - len(prefix) >= MIN_TEXT else 6)
    if whole:  # the message's own lines stay lines (a compiler's errors, one per line)
        lines: list[str] = []
        for part in (p for p in str(message or "").splitlines() if p.strip()):
            lines += textwrap.wrap(" ".join(part.split()), width=width, initial_indent=indent if lines else prefix,
                                   subsequent_indent=indent, break_long_words=False, break_on_hyphens=False)
        return lines or [prefix]
    room = max(width - len(prefix) - 1, 1)
    cut = text[:room + 1].rsplit(" ", 1)[0] if " " in text[:room + 1] else text[:room]
    if " " not in text[:room + 1] and text[room:room + 1] not in ("", " "):
        cut = ""  # one word longer than the room: no part of it, only the ellipsis
    return [prefix + cut.rstrip() + "…"]


def fit_check(prefix: str, verdict: str, message: str | None, width: int | None = None) -> list[str]:
    return fit(prefix, message, whole=verdict not in WHOLE_UNLESS, width=width)
