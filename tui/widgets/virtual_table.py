"""A table that draws only the rows in view: a header, columns of given widths
and a row cursor, over rows it asks for by index when they scroll into sight.

Textual's DataTable holds every row as cells it owns (keys, measured widths,
offsets), so filling it with 10,000 rows of a deck took seconds on the UI
thread and its layout work grew with the rows on every key. Here the owner
keeps the data (and sorts or filters it there), hands the table a row count,
a function from an index to that row's cells and each column's width, and the
table renders a line only when the terminal shows it (Textual's Line API:
``ScrollView.render_line``). Opening, moving the cursor and resizing cost the
same at 40 rows or 100,000.

It looks and answers keys as a row-cursor DataTable does: the header stays at
the top and scrolls sideways with the body, cells are padded by one on each
side, and the same keys move the cursor (enter selects it)."""
from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

PADDING = 1  # blank cells each side of a column's text, as DataTable's default cell_padding


class VirtualTable(ScrollView, can_focus=True):
    """Rows come from ``set_rows(count, cells, widths)``; ``cells(i)`` gives row
    ``i``'s cells (Text, one line each) and is called only for rows in view."""

    BINDINGS = [
        Binding("enter", "select_cursor", "Select", show=False),
        Binding("up", "cursor_up", "Cursor up", show=False),
        Binding("down", "cursor_down", "Cursor down", show=False),
        Binding("right", "cursor_right", "Cursor right", show=False),
        Binding("left", "cursor_left", "Cursor left", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("ctrl+home", "scroll_top", "Top", show=False),
        Binding("ctrl+end", "scroll_bottom", "Bottom", show=False),
        Binding("home", "scroll_home", "Home", show=False),
        Binding("end", "scroll_end", "End", show=False),
    ]

    COMPONENT_CLASSES = {"virtual-table--header", "virtual-table--cursor"}

    # DataTable's own look (textual/widgets/_data_table.py), for the parts this table has
    DEFAULT_CSS = """
    VirtualTable {
        background: $surface;
        color: $foreground;
        height: auto;
        max-height: 100%;
        &:focus {
            background-tint: $foreground 5%;
            & > .virtual-table--cursor {
                background: $block-cursor-background;
                color: $block-cursor-foreground;
                text-style: $block-cursor-text-style;
            }
            & > .virtual-table--header {
                background-tint: $foreground 5%;
            }
        }
        & > .virtual-table--header {
            text-style: bold;
            background: $panel;
            color: $foreground;
        }
        &:ansi > .virtual-table--header {
            background: ansi_bright_blue;
            color: ansi_default;
        }
        & > .virtual-table--cursor {
            background: $block-cursor-blurred-background;
            color: $block-cursor-blurred-foreground;
            text-style: $block-cursor-blurred-text-style;
        }
    }
    """

    header_height = 1

    class _CursorMessage(Message):
        def __init__(self, table: VirtualTable, cursor_row: int) -> None:
            super().__init__()
            self.table, self.cursor_row = table, cursor_row

        @property
        def control(self) -> VirtualTable:
            return self.table

    class RowHighlighted(_CursorMessage):
        """The cursor moved to ``cursor_row``."""

    class RowSelected(_CursorMessage):
        """Enter (or a click) on the cursor's row."""

    def __init__(self, labels: Sequence[str], *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.labels = [Text(label, no_wrap=True, end="") for label in labels]
        self.widths = [label.cell_len for label in self.labels]  # each column's text width, padding apart
        self.cursor_row = 0
        self._count = 0
        self._cells: Callable[[int], Sequence[Text]] = lambda i: ()
        self._strips: LRUCache[tuple, Strip] = LRUCache(1024)
        self._styles: tuple[Style, Style, Style] | None = None

    # -- data
    @property
    def row_count(self) -> int:
        return self._count

    def set_rows(self, count: int, cells: Callable[[int], Sequence[Text]], widths: Sequence[int]) -> None:
        """Show ``count`` rows: ``cells(i)`` is row i's, ``widths`` each column's text width
        (at least its label's). The cursor stays on its row where that still is one."""
        self._count, self._cells = count, cells
        self.widths = [max(w, label.cell_len) for w, label in zip(widths, self.labels)]
        self._strips.clear()
        self.virtual_size = Size(sum(self.render_widths()), self.header_height + count)
        self.cursor_row = max(0, min(self.cursor_row, count - 1))
        self.refresh()

    def render_widths(self) -> list[int]:
        """Each column's width on screen, its padding included."""
        return [w + 2 * PADDING for w in self.widths]

    def get_row_at(self, row: int) -> list[Text]:
        if not 0 <= row < self._count:
            raise IndexError(f"row {row} of {self._count}")
        return list(self._cells(row))

    def row_region(self, row: int) -> Region:
        """Where row ``row`` lies in the table's virtual space (below the header)."""
        return Region(0, self.header_height + row, max(self.size.width, self.virtual_size.width), 1)

    # -- cursor
    def move_cursor(self, *, row: int, scroll: bool = True) -> None:
        if not self._count:
            return
        row = max(0, min(row, self._count - 1))
        old, self.cursor_row = self.cursor_row, row
        if scroll:
            self.scroll_cursor_into_view()
        if row != old:
            self._refresh_row(old)
            self._refresh_row(row)
            self.post_message(self.RowHighlighted(self, row))

    def scroll_cursor_into_view(self) -> None:
        view = self.scrollable_content_region.height - self.header_height
        if view <= 0:
            return
        top = round(self.scroll_y)
        if self.cursor_row < top:
            self.scroll_to(y=self.cursor_row, animate=False, force=True)
        elif self.cursor_row >= top + view:
            self.scroll_to(y=self.cursor_row - view + 1, animate=False, force=True)

    def _refresh_row(self, row: int) -> None:
        self.refresh_line(self.header_height + row)

    def _page(self) -> int:
        return max(1, self.scrollable_content_region.height - self.header_height)

    def action_cursor_up(self) -> None:
        self.move_cursor(row=self.cursor_row - 1)

    def action_cursor_down(self) -> None:
        self.move_cursor(row=self.cursor_row + 1)

    def action_cursor_left(self) -> None:
        self.scroll_left()

    def action_cursor_right(self) -> None:
        self.scroll_right()

    def action_page_down(self) -> None:  # the view and the cursor move a page together, as DataTable's
        self.scroll_relative(y=self._page(), animate=False, force=True)
        self.move_cursor(row=self.cursor_row + self._page(), scroll=False)
        self.call_after_refresh(self.scroll_cursor_into_view)

    def action_page_up(self) -> None:
        self.scroll_relative(y=-self._page(), animate=False, force=True)
        self.move_cursor(row=self.cursor_row - self._page(), scroll=False)
        self.call_after_refresh(self.scroll_cursor_into_view)

    def action_scroll_top(self) -> None:
        self.move_cursor(row=0)

    def action_scroll_bottom(self) -> None:
        self.move_cursor(row=self._count - 1)

    def action_scroll_home(self) -> None:
        self.scroll_x = 0

    def action_scroll_end(self) -> None:
        self.scroll_x = self.max_scroll_x

    def action_select_cursor(self) -> None:
        if self._count:
            self.post_message(self.RowSelected(self, self.cursor_row))

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or offset.y < self.header_height:
            return
        row = round(self.scroll_y) + offset.y - self.header_height
        if row < self._count:
            event.stop()
            if row == self.cursor_row:
                self.action_select_cursor()
            else:
                self.move_cursor(row=row)

    # -- drawing
    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips.clear()
        self._styles = None

    def on_focus(self) -> None:
        self._styles = None
        self.refresh()

    def on_blur(self) -> None:
        self._styles = None
        self.refresh()

    def render_lines(self, crop: Region) -> list[Strip]:
        if self._styles is None:  # looked up once per change of focus or style, not per line
            self._styles = (self.rich_style, self.get_component_rich_style("virtual-table--header"),
                            self.get_component_rich_style("virtual-table--cursor"))
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        base, header, cursor = self._styles or (self.rich_style, Style(), Style())
        scroll_x, scroll_y = self.scroll_offset
        width = self.size.width
        if y < self.header_height:
            line = self._line(-1, self.labels, base + header)
        else:
            row = scroll_y + y - self.header_height
            if row >= self._count:
                return Strip.blank(width, base)
            on_cursor = row == self.cursor_row
            line = self._line(row, None, base + cursor if on_cursor else base, on_cursor)
        return line.crop_extend(scroll_x, scroll_x + width, base)

    def _line(self, row: int, cells: Sequence[Text] | None, style: Style, over: bool = False) -> Strip:
        """Row ``row``'s whole line (the header's for -1), uncropped; ``over``: the style
        covers the cells' own (the cursor), else it lies beneath them."""
        key = (row, style, over)
        strip = self._strips.get(key)
        if strip is None:
            cells = self._cells(row) if cells is None else cells
            text = Text(no_wrap=True, end="")
            pad = " " * PADDING
            for cell, w in zip(cells, self.widths):
                if cell.cell_len > w:
                    cell = cell.copy()
                    cell.truncate(w, overflow="ellipsis")
                text.append(pad)
                text.append_text(cell)
                text.append(" " * (w - cell.cell_len) + pad)
            if over:
                text.stylize(style)
            else:
                text.stylize_before(style)
            strip = Strip(list(text.render(self.app.console)), text.cell_len)
            self._strips[key] = strip
        return strip
