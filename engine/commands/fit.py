"""Messages and cells fitted to a width, by one rule: a number is shown whole or
not at all, and never dropped silently.

A line is cut only between words (after a space, or after the ``_`` of an
identifier), so a number (3.3e-16) is never shortened into another number
(3.3e-1). The terminal's check messages (``show``, ``run``, ``adapter check``):
a failing check keeps its whole message, its own lines kept and each wrapped
under its column; any other check gets one line that ends with an ellipsis
where cut, unless the cut would drop a figure (a word with a digit: a
reference time, the last of several errors): then it is wrapped whole too.
The dashboard's tables cut their cells with ``cut``.
"""
from __future__ import annotations

import re
import shutil
import textwrap

WHOLE_UNLESS = frozenset({"pass", "info", "skipped"})  # the rest fail: their whole message is the evidence
FALLBACK_COLUMNS = 120  # output to a pipe or file
MIN_TEXT = 30  # narrower than this under the prefix, continuation lines start at a fixed indent
ELLIPSIS = "…"
_BREAKS = re.compile(r" +|(?<=_)")  # between words, or after an identifier's underscore
_FIGURE = re.compile(r"\d")


def columns() -> int:
    """The terminal's width ($COLUMNS first, as `shutil` reads it)."""
    return shutil.get_terminal_size((FALLBACK_COLUMNS, 24)).columns


def cut(text: str, width: int) -> str:
    """``text`` (one line) in at most ``width`` cells: whole, or cut between words
    and ended with '…'; a first word longer than the room leaves only the '…'."""
    if len(text) <= width:
        return text
    if width <= 1:
        return ELLIPSIS[:max(width, 0)]
    room = width - 1
    ends = [m.start() if m.group() else m.end() for m in _BREAKS.finditer(text, 0, room + 1)]
    end = max((e for e in ends if 0 < e <= room), default=0)
    return text[:end].rstrip() + ELLIPSIS


def drops_a_figure(text: str, width: int) -> bool:
    """Would cutting ``text`` to ``width`` leave out a number it holds?"""
    kept = cut(text, width)
    return kept != text and bool(_FIGURE.search(text[len(kept) - 1:]))


def fit(prefix: str, message: str | None, *, whole: bool, width: int | None = None) -> list[str]:
    """Lines for ``prefix + message``: wrapped in full, or one line ending in '…' where it is cut
    (wrapped in full after all when the cut would drop a number)."""
    width = width or columns()
    text = " ".join(str(message or "").split())
    if len(prefix) + len(text) <= width and not (whole and "\n" in str(message or "").strip()):
        return [prefix + text]
    room = max(width - len(prefix), 1)
    if not whole and not drops_a_figure(text, room):
        return [prefix + cut(text, room)]
    indent = " " * (len(prefix) if width - len(prefix) >= MIN_TEXT else 6)
    # A failing check's own lines stay lines (a compiler's errors, one per line); any
    # other message wrapped for its figures is wrapped as one paragraph.
    parts = str(message or "").splitlines() if whole else [text]
    lines: list[str] = []
    for part in (p for p in parts if p.strip()):
        lines += textwrap.wrap(" ".join(part.split()), width=width, initial_indent=indent if lines else prefix,
                               subsequent_indent=indent, break_long_words=False, break_on_hyphens=False)
    return lines or [prefix]


def fit_check(prefix: str, verdict: str, message: str | None, width: int | None = None) -> list[str]:
    return fit(prefix, message, whole=verdict not in WHOLE_UNLESS, width=width)
