"""A virtual line view: a ScrollView that renders only the visible lines.

The toolong idea: keep a list of cheap row descriptions, turn a row into a
Strip only when it scrolls into view, and keep the strips in an LRU cache.
A 300 KB transcript or a 2,000-line diff opens at once because nothing is
mounted per line. Subclasses say how a row becomes Rich Text.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

CURSOR_STYLE = Style(reverse=True)


class LineView(ScrollView, can_focus=True):
    BINDINGS = [
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "cursor_to(0)", "Top", show=False),
        Binding("end", "cursor_to(-1)", "End", show=False),
    ]

    cursor: reactive[int] = reactive(0, always_update=True, repaint=False)

    class CursorMoved(Message):
        def __init__(self, view: LineView, index: int) -> None:
            super().__init__()
            self.view = view
            self.index = index

    def __init__(self, *, show_cursor: bool = True, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.rows: Sequence[Any] = []
        self.show_cursor = show_cursor
        self._cache: LRUCache[tuple, Strip] = LRUCache(2048)
        self._max_width = 0

    # -- subclass API -------------------------------------------------------------
    def render_row(self, index: int, row: Any) -> Text:  # pragma: no cover - overridden
        return Text(str(row))

    def row_width(self, row: Any) -> int:
        """Cell width of a row, for the horizontal scrollbar. Override if cheap to know."""
        return 0

    # -- data ---------------------------------------------------------------------
    def set_rows(self, rows: Sequence[Any], *, keep_cursor: bool = False) -> None:
        self.rows = rows
        self._cache.clear()
        self._max_width = max((self.row_width(r) for r in rows), default=0)
        self.virtual_size = Size(self._max_width, len(rows))
        if not keep_cursor:
            self.cursor = 0
        else:
            self.cursor = min(self.cursor, max(len(rows) - 1, 0))
        self.refresh()

    def invalidate(self) -> None:
        self._cache.clear()
        self.refresh()

    # -- rendering ----------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.scrollable_content_region.width
        if index >= len(self.rows):
            return Strip.blank(width, self.rich_style)
        selected = self.show_cursor and index == self.cursor and self.has_focus
        key = (index, scroll_x, width, selected)
        strip = self._cache.get(key)
        if strip is None:
            text = self.render_row(index, self.rows[index])
            text.end = ""
            text.no_wrap = True
            strip = Strip(list(text.render(self.app.console)), text.cell_len)
            strip = strip.crop_extend(scroll_x, scroll_x + width, self.rich_style)
            if selected:
                strip = strip.apply_style(CURSOR_STYLE)
            self._cache[key] = strip
        return strip

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    # -- cursor -------------------------------------------------------------------
    def watch_cursor(self, old: int, new: int) -> None:
        self.scroll_to_region(Region(0, new, 1, 1), animate=False, force=True)
        self.refresh()
        self.post_message(self.CursorMoved(self, new))

    def move_to(self, index: int, *, top: bool = False) -> None:
        if not self.rows:
            return
        index = max(0, min(index, len(self.rows) - 1))
        self.cursor = index
        if top:
            self.scroll_to(y=index, animate=False, force=True)

    def action_cursor(self, delta: int) -> None:
        self.move_to(self.cursor + delta)

    def action_page(self, delta: int) -> None:
        self.move_to(self.cursor + delta * max(self.size.height - 1, 1))

    def action_cursor_to(self, index: int) -> None:
        self.move_to(index if index >= 0 else len(self.rows) - 1)

    def on_click(self, event) -> None:
        offset = event.get_content_offset(self)
        if offset is not None:
            self.move_to(self.scroll_offset.y + offset.y)
