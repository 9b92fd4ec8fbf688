"""Side-by-side (or unified) diff in one virtual view: both halves share one
scroll position, so scrolling is synchronised by construction."""
from __future__ import annotations

from rich.text import Text

from tui.diffing import Diff, DiffRow, UnifiedRow
from tui.widgets.line_view import LineView

SIDE_BG = {"delete": "on #3c1f1f", "insert": "on #1f3c1f", "replace": "on #2f2f1a"}
INTRA = {"left": "bold white on #7a2a2a", "right": "bold white on #2a6a2a"}
UNI = {"header": "bold", "hunk": "bold cyan", "delete": "red", "insert": "green", "equal": ""}


class DiffView(LineView):
    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.diff: Diff | None = None
        self.unified = False

    def show(self, diff: Diff | None, unified: bool | None = None) -> None:
        self.diff = diff
        if unified is not None:
            self.unified = unified
        rows = [] if diff is None else (diff.unified if self.unified else diff.rows)
        self.set_rows(rows)

    @property
    def changes(self) -> list[int]:
        if self.diff is None:
            return []
        return self.diff.unified_changes if self.unified else self.diff.changes

    def _half(self, no: int | None, text: str, spans, tag: str, side: str, width: int) -> Text:
        out = Text(f"{no:>5} " if no else "      ", style="dim")
        body = Text(text.expandtabs(4)[: width - 6].ljust(width - 6), style=SIDE_BG.get(tag, "") if (no or tag != "equal") else "")
        if tag == "replace":
            for start, end in spans:
                body.stylize(INTRA[side], start, min(end, width - 6))
        elif not no and tag != "equal":
            body.stylize("on grey15")
        out.append_text(body)
        return out

    def render_row(self, index: int, row) -> Text:
        if isinstance(row, UnifiedRow):
            return Text(row.text, style=UNI.get(row.tag, ""))
        assert isinstance(row, DiffRow)
        half = max((self.scrollable_content_region.width - 1) // 2, 20)
        text = self._half(row.left_no, row.left, row.left_spans, row.tag, "left", half)
        text.append("│", style="dim")
        text.append_text(self._half(row.right_no, row.right, row.right_spans, row.tag, "right", half))
        return text
