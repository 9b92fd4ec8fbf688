"""The virtual transcript view: rows from tui.transcript_rows, rendered on demand."""
from __future__ import annotations

from benchtui.tui.transcript_rows import Row
from benchtui.tui.widgets.line_view import LineView
from rich.text import Text

ROLE_STYLES = {
    "user": "bold green", "assistant": "bold cyan", "tool_result": "bold yellow", "system": "bold magenta",
    "compaction": "bold blue", "branch_summary": "bold blue", "meta": "dim", "raw": "bold red",
}
KIND_STYLES = {
    "thinking": "italic grey58", "fold": "grey62", "code": "green", "diff+": "green", "diff-": "red",
    "diff": "grey62", "tool": "yellow", "result": "grey70", "raw": "red", "warn": "bold yellow",
}


class TranscriptView(LineView):
    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.highlight: str = ""

    def row_width(self, row: Row) -> int:
        return len(row.text) + 2

    def render_row(self, index: int, row: Row) -> Text:
        if row.kind in ("header", "header+"):
            text = Text("▌", style=ROLE_STYLES.get(row.role, "bold"))
            text.append(row.text, style=ROLE_STYLES.get(row.role, "bold") + (" on dark_red" if row.error else ""))
            return text
        style = KIND_STYLES.get(row.kind, "")
        if row.error and row.kind in ("fold", "tool", "result"):
            style = "bold red"
        indent = "  " if row.kind in ("thinking", "result", "code", "diff+", "diff-", "diff") else ""
        text = Text(" " + indent + row.text, style=style)
        if self.highlight:
            text.highlight_words([self.highlight], style="black on yellow", case_sensitive=False)
        return text
