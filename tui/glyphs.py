"""How verdicts and grades look: one glyph and one colour per verdict."""
from __future__ import annotations

import json

from rich.text import Text

# verdict -> (glyph, style, label). Single-cell glyphs only: wide emoji break columns.
# No glyph is a letter a grade can start with (A-D, F): a cell reads "glyph grade
# judge-grade", and "C A  B-" read as three grades.
VERDICTS: dict[str, tuple[str, str, str]] = {
    "pass": ("✓", "bold green", "pass"),
    "partial": ("◐", "bold yellow", "partial"),
    "fail": ("✗", "bold red", "fail"),
    "error": ("!", "bold red", "error"),
    "timeout": ("T", "bold magenta", "timeout"),
    "compile_error": ("⚒", "bold red", "compile error"),  # the build's tools
    "unbound": ("U", "bold yellow", "unbound"),
    "missing_dependency": ("∉", "bold yellow", "missing dependency"),  # a package not in the sandbox
    "forbidden": ("⊘", "bold red", "forbidden"),
    "skipped": ("–", "yellow", "skipped"),
    "not_run": ("·", "dim", "not run"),
    "no_answer": ("∅", "dim", "no answer"),
    "waiting": ("∅", "dim", "waiting"),  # no_answer of a folder holding only what was handed out (the scan's word)
    "interrupted": ("↯", "yellow", "interrupted"),
    "running": ("◌", "cyan", "running"),
    "info": ("i", "blue", "info"),
}
# Every verdict a matrix cell can carry (engine/store/queries.load_matrix), in the legend's order.
LEGEND_ORDER = ("pass", "partial", "fail", "error", "timeout", "compile_error", "unbound", "missing_dependency",
                "forbidden", "skipped", "interrupted", "not_run", "no_answer", "running")
UNKNOWN_GLYPH = "?"  # a verdict this version does not know (a newer store)
WARNING_MARK = "⚠"  # a cell whose answer has scan warnings
STALE_MARK = "≠"  # a cell whose verdict is on files that have changed since
IN_FLIGHT_MARK = "◌"  # a run in progress beside the cell's last finished verdict
PENDING_MARK = "…"  # a cell not read yet (a big matrix's first frame)
SEVERAL_JUDGES_MARK = "†"  # a cell more than one judge graded: its text shows the newest (the exports' dagger)
HACK_MARK = "⚑"  # a cell whose latest run shows a hack signal (engine/records/flags.py): beside the verdict


def verdict_glyph(verdict: str | None) -> Text:
    glyph, style, _ = VERDICTS.get(verdict or "not_run", (UNKNOWN_GLYPH, "bold", verdict or "?"))
    return Text(glyph, style=style)


def verdict_text(verdict: str | None) -> Text:
    glyph, style, label = VERDICTS.get(verdict or "not_run", ("?", "bold", verdict or "?"))
    return Text(f"{glyph} {label}", style=style)


def grade_style(letter: str | None) -> str:
    if not letter:
        return "dim"
    return {"A": "green", "B": "cyan", "C": "yellow", "D": "red", "F": "bold red"}.get(letter[0], "")


def legend(verdicts=None, warnings: bool = True, pending: bool = True, stale: bool = False,
           flagged: bool = False, several_judges: bool = False) -> Text:
    """The key to the matrix's glyphs: each of ``verdicts`` (all it can show when
    None; one it does not know as "? its name"), the scan-warning mark and the
    not-read-yet cell when the matrix shows them, and the two kinds of grade."""
    out = Text()

    def entry(glyph: str, style: str, label: str) -> None:
        out.append(glyph, style=style)
        out.append(f" {label} ", style="dim")  # one space: the glyphs part the entries

    shown = LEGEND_ORDER if verdicts is None else [v for v in LEGEND_ORDER if v in verdicts]
    for name in shown:
        entry(*VERDICTS[name])
    if verdicts is None:
        entry(UNKNOWN_GLYPH, "bold", "other verdict")
    for name in sorted(set(verdicts or ()) - set(LEGEND_ORDER)):
        glyph, style, label = VERDICTS.get(name, (UNKNOWN_GLYPH, "bold", name))
        entry(glyph, style, label)
    if warnings:
        entry(WARNING_MARK, "yellow", "scan warning")
    if stale:
        entry(STALE_MARK, "bold yellow", "files changed since the run")
    if flagged:
        entry(HACK_MARK, "bold magenta", "suspected hack")
    if pending:
        entry(PENDING_MARK, "dim", "not read yet")
    out.append("B+", style="bold")
    out.append(" human ", style="dim")
    out.append("A-", style="italic dim")
    out.append(" judge", style="dim")
    if several_judges:
        out.append(f" {SEVERAL_JUDGES_MARK}", style="italic dim")
        out.append(" newest of several judges", style="dim")
    return out


def check_value(raw) -> str:
    """A check's value or threshold as shown: the store keeps them as JSON
    text, so ``null`` (and None, blank) means there is none and shows as ''."""
    if raw is None:
        return ""
    value = raw
    if isinstance(raw, str):
        text = raw.strip()
        if not text or text == "null":
            return ""
        try:
            value = json.loads(text)
        except ValueError:
            return text  # stored as plain text
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, dict)):
        return json.dumps(value)
    return str(value)


def check_cell(raw) -> str:
    """A check's value or threshold in a table cell: as ``check_value``, with a
    float to three significant figures (the detail below the table shows it
    whole) and a boolean as yes/no."""
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return check_value(raw)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3g}"
    return check_value(raw)
