"""A block of text, wrapped as a Static wraps it, that wraps only the lines it draws.

A Static wraps all of its text whenever its height is asked for or any of it is
drawn: the published screen's summary (a line per problem: 250 at a deck of 250
problems) was wrapped eight times as the screen opened, most of a tenth of a
second of the UI thread. Here the text is split into its lines once; a line no
wider than the widget is one row without being wrapped, a wider one is wrapped
alone, and a line becomes strips only when a row of it is drawn (the scrolling
pane around it asks for the rows in view)."""
from __future__ import annotations

from bisect import bisect_right

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.cache import LRUCache
from textual.content import Content
from textual.geometry import Size
from textual.strip import Strip
from textual.visual import Visual
from textual.widget import Widget


def _on_line(strip: Strip, y: int) -> Strip:
    """``strip`` with the text offsets its cells carry (what a mouse selection copies)
    on line ``y`` of the whole text, as a Static's are: wrapped alone, a line is line 0."""
    segments = []
    for text, style, control in strip:
        if style is not None and style._meta and (offset := style.meta.get("offset")) is not None:
            style = style + Style.from_meta({"offset": (offset[0], y)})
        segments.append(Segment(text, style, control))
    return Strip(segments, strip.cell_length)


class WrappedText(Widget):
    DEFAULT_CSS = """
    WrappedText {
        height: auto;
    }
    """

    def __init__(self, text: str | Text = "", *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._text = Text()
        self._lines: list[Content] = []
        self._starts: tuple[int, list[int]] = (-1, [])  # (width, the first row of each line, then the rows in all)
        self._strips: LRUCache[tuple[int, int], list[Strip]] = LRUCache(512)  # (line, width) -> its rows
        self.update(text)

    @property
    def text(self) -> Text:
        return self._text

    def update(self, text: str | Text = "") -> None:
        """Show ``text`` (a str is plain text, never markup)."""
        self._text = Text(text) if isinstance(text, str) else text
        self._lines = []
        self._starts = (-1, [])
        self._strips.clear()
        self.refresh(layout=True)

    def render(self) -> Text:
        """The whole text (``str()`` of it reads it plainly); the widget draws it by rows (render_line)."""
        return self._text

    def _content_lines(self) -> list[Content]:
        if not self._lines:  # split as a Static splits its content before wrapping each line
            self._lines = Content.from_rich_text(self._text, console=self.app.console).split(allow_blank=True)
        return self._lines

    def _line_rows(self, i: int, width: int) -> list[Strip]:
        rows = self._strips.get((i, width))
        if rows is None:
            # no selection drawn: a line wrapped alone would take the selection's first line for its own
            rows = Visual.to_strips(self, self._content_lines()[i], width, None, self.visual_style, apply_selection=False) \
                or [Strip.blank(width, self.visual_style.rich_style)]
            self._strips[(i, width)] = rows = [_on_line(row, i) for row in rows] if i else rows
        return rows

    def _row_starts(self, width: int) -> list[int]:
        if self._starts[0] != width:
            starts, y = [], 0
            for i, line in enumerate(self._content_lines()):
                starts.append(y)
                fits = line.cell_length <= width and "\t" not in line.plain
                y += 1 if fits else len(self._line_rows(i, width))
            starts.append(y)
            self._starts = (width, starts)
        return self._starts[1]

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return self._row_starts(width)[-1] if width > 0 else 0

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        starts = self._row_starts(width)
        i = bisect_right(starts, y) - 1
        if 0 <= i < len(starts) - 1:
            rows = self._line_rows(i, width)
            if y - starts[i] < len(rows):
                return rows[y - starts[i]]
        return Strip.blank(width, self.visual_style.rich_style)
