"""Side-by-side (or unified) diff in one virtual view: both halves share one
scroll position, so scrolling is synchronised by construction."""
from __future__ import annotations

from benchtui.tui.diffing import Diff, DiffRow, UnifiedRow
from benchtui.tui.widgets.line_view import LineView
from rich.text import Text

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

    def _half(self, no: int | None, text: str, spans, tag: str, side: str, width: int, shift: int = 0) -> Text:
        room = width - 6
        text = text.expandtabs(4)
        if shift:  # the row's change lies past the visible width: start near it, the cut marked
            text = "…" + text[shift + 1:]
            spans = [(max(a - shift, 1), b - shift) for a, b in spans if b - shift > 1]
        out = Text(f"{no:>5} " if no else "      ", style="dim")
        body = Text(text[:room].ljust(room), style=SIDE_BG.get(tag, "") if (no or tag != "equal") else "")
        if tag == "replace":
            for start, end in spans:
                body.stylize(INTRA[side], start, min(end, room))
        elif not no and tag != "equal":
            body.stylize("on grey15")
        out.append_text(body)
        return out

    @staticmethod
    def shift_for(row: DiffRow, room: int) -> int:
        """How far to shift a changed row so its first difference is in view (0: it is)."""
        if row.tag != "replace":
            return 0
        starts = [a for a, _ in (*row.left_spans, *row.right_spans)]
        ends = [b for _, b in (*row.left_spans, *row.right_spans)]
        if not starts or max(ends) <= room and min(starts) < room - 1:
            return 0
        return max(min(starts) - room // 3, 0)

    def render_row(self, index: int, row) -> Text:
        if isinstance(row, UnifiedRow):
            return Text(row.text, style=UNI.get(row.tag, ""))
        assert isinstance(row, DiffRow)
        half = max((self.scrollable_content_region.width - 1) // 2, 20)
        shift = self.shift_for(row, half - 6)  # the same on both sides: the two halves stay aligned
        text = self._half(row.left_no, row.left, row.left_spans, row.tag, "left", half, shift)
        text.append("│", style="dim")
        text.append_text(self._half(row.right_no, row.right, row.right_spans, row.tag, "right", half, shift))
        return text
