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
MIN_TEXT = 30  # narrower than this under the prefix (or than a word), the prefix is wrapped with the text
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
    room = width - len(prefix)
    if not whole and room > 1 and not drops_a_figure(text, room):
        return [prefix + cut(text, room)]
    # A failing check's own lines stay lines (a compiler's errors, one per line); any
    # other message wrapped for its figures is wrapped as one paragraph.
    parts = [" ".join(p.split()) for p in (str(message or "").splitlines() if whole else [text]) if p.strip()]
    longest = max((len(w) for p in parts for w in p.split()), default=0)
    lead = prefix[:len(prefix) - len(prefix.lstrip())]
    if room >= MIN_TEXT and room >= longest:  # the text keeps its column under the prefix
        indent, first = " " * len(prefix), prefix
    else:  # too narrow for a column (a long list of names, a long path): the prefix is wrapped too
        indent, first = " " * (len(lead) + 2), lead
        parts = [prefix.strip() + (" " + parts[0] if parts else "")] + parts[1:]
    lines: list[str] = []
    for part in parts:
        lines += textwrap.wrap(part, width=width, initial_indent=indent if lines else first,
                               subsequent_indent=indent, break_long_words=False, break_on_hyphens=False)
    return lines or [prefix]


def fit_check(prefix: str, verdict: str, message: str | None, width: int | None = None) -> list[str]:
    return fit(prefix, message, whole=verdict not in WHOLE_UNLESS, width=width)
