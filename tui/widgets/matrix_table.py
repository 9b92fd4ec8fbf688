"""The matrix's DataTable, made cheap to rebuild at 200 challenges x 50 models.

Textual's DataTable measured every new cell when rows were added (10,400
``measure`` calls per filter or sort at bench/scale.py's size) and rendered
each cell through Rich's Padding/Styled pipeline again after every rebuild
(its caches are keyed by the table's update count). The matrix gives every
column an explicit width and its cells are one line of a few hundred distinct
texts (a verdict glyph and two grades, shared between cells: see
``tui.screens.matrix.cell_text``), so:

- rows added with explicit column widths, no labels and height 1 need no
  measuring: only the virtual size is recomputed;
- a cell's rendering is cached by its content object and style, across
  rebuilds, and used as it is: body cells carry no row/column metadata
  (Textual puts it on every segment, which made every style unique, so
  neither Rich's style cache nor Textual's colour filter could reuse
  anything); clicks and hovers find their cell from the mouse's position;
- a row is rendered only where it can be seen: Textual renders every column
  of a visible row and crops the line to the window, so a 140-column
  terminal paid for all 51 columns; each run of columns outside the window
  (plus a margin) is one blank, and the rendered rows are forgotten when the
  window moves sideways or changes width;
- component styles are looked up once per frame, the ordered columns once
  per change, and rows added all at once get their dimensions at once (a
  cursor moved next scrolls before the first frame, not after it).

What the table shows, its keys, its cursor and its API are Textual's own.
"""
from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.cache import LRUCache
from textual.color import Color
from textual.coordinate import Coordinate
from textual.geometry import Size
from textual.widgets import DataTable


class MatrixTable(DataTable):
    """A DataTable whose rebuilds and repaints do not re-measure or re-render
    unchanged cells."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # (id(cell), style, width, flags) -> (cell, lines): the cell object is
        # kept in the value, so its id cannot be reused while the entry lives.
        self._content_cache: LRUCache = LRUCache(4096)
        self._segments_cache: LRUCache = LRUCache(4096)  # id(text) -> (text, its own segments)
        # (a text's shape, pre and post styles, width) -> its rendered cell as (start, end, style) runs
        self._layouts: LRUCache = LRUCache(4096)
        self._window: tuple | None = None  # (scroll_x, width) the cached rows were rendered for
        self._visible: tuple | None = None  # (window, update count, columns) -> visible column indices
        self._shown: set[int] | None = None  # the visible columns of the row being rendered
        self._ordered: tuple | None = None  # ((column locations, update count, columns), ordered columns)
        self._component_memo: dict = {}

    # -- under the ctrl+p palette ------------------------------------------------
    # The palette (tui/widgets/jump_palette.py) takes the focus for its input.
    # Blurred, the table changed its look (DataTable's :focus tint and cursor
    # colours), so every visible row was rendered again on opening and again on
    # closing: 20-70 ms each at 140x45. While ``held_focus`` is set (by the
    # palette, from opening until the focus is back here) the table keeps its
    # focused look and its rendered rows, and losing or getting back the focus
    # repaints nothing (Textual's Widget._on_blur/_on_focus, less their
    # refresh: tests/tui/test_tui_palette.py pins them).
    held_focus = False

    _PSEUDO_CLASSES = {**DataTable._PSEUDO_CLASSES,
                       "focus": lambda widget: widget.has_focus or widget.held_focus,
                       "blur": lambda widget: not (widget.has_focus or widget.held_focus)}

    def get_pseudo_class_state(self):
        state = super().get_pseudo_class_state()
        return state._replace(focus=True) if self.held_focus else state

    @property
    def _pseudo_classes_cache_key(self) -> tuple:
        return (self.mouse_hover, self.has_focus or self.held_focus, self.is_disabled)

    def watch_has_focus(self, has_focus: bool) -> None:
        if self.held_focus:
            # Its look does not change, and Textual's restyle would make DataTable
            # drop every cache (notify_style_update) and render every row again.
            self.held_focus = not has_focus
            return
        super().watch_has_focus(has_focus)

    _sized_for: tuple | None = None

    def _size_updated(self, size, virtual_size, container_size, layout: bool = True) -> bool:
        # ScrollView compares the compositor's virtual size (the region's, never
        # the table's own) with its own, so every layout of the screen, even one
        # for another widget (each key typed into the ctrl+p palette), repainted
        # both scrollbars, a frame later. Nothing to do when neither the size nor
        # the table's own virtual size has changed since the last time.
        key = (size, container_size, self.virtual_size)
        if key == self._sized_for:
            return False
        self._sized_for = key
        return super()._size_updated(size, virtual_size, container_size, layout)

    def _on_blur(self, event) -> None:
        if self.held_focus:
            event.prevent_default()
            self.has_focus = False
            if self.parent is not None:
                self.parent.post_message(events.DescendantBlur(self))

    def _on_focus(self, event) -> None:
        if self.held_focus:
            event.prevent_default()
            self.has_focus = True  # (the watcher clears held_focus)
            if self.parent is not None:
                self.parent.post_message(events.DescendantFocus(self))

    def release_focus(self) -> None:
        """The palette closed without giving the focus back here: look blurred."""
        if self.held_focus:
            self.held_focus = False
            self.update_node_styles()
            self.refresh()

    def _visible_columns(self, window: tuple[int, int]) -> set[int]:
        """Indices of the columns that overlap the window, one either side, and the fixed ones."""
        key = (window, self._update_count, len(self.columns))
        if self._visible is None or self._visible[0] != key:
            columns = self.ordered_columns
            fixed = sum(c.get_render_width(self) for c in columns[:self.fixed_columns])
            # Textual crops each full row to [scroll_x + fixed width, scroll_x + width)
            left, right = window[0] + fixed, window[0] + window[1]
            shown, x = set(range(self.fixed_columns)), 0
            for i, column in enumerate(columns):
                w = column.get_render_width(self)
                if x + w > left and x < right:
                    shown.add(i)
                x += w
            if shown:
                inside = [i for i in shown if i >= self.fixed_columns]
                if inside:
                    shown.update((min(inside) - 1, max(inside) + 1))
            self._visible = (key, shown)
        return self._visible[1]

    @property
    def ordered_columns(self) -> list:
        """Textual's, kept until the columns change (it is rebuilt on every call,
        several times per painted row)."""
        key = (self._column_locations, self._update_count, len(self.columns))
        hit = self._ordered
        if hit is None or hit[0][0] is not key[0] or hit[0][1:] != key[1:]:
            hit = self._ordered = (key, DataTable.ordered_columns.fget(self))
        return hit[1]

    def render_lines(self, crop):
        self._component_memo = {}  # component styles cannot change while one frame is painted
        return super().render_lines(crop)

    def _frame_flags(self) -> tuple:
        """What else a cell's rendering depends on, read once per frame (each is a
        reactive: ~1.5 us a read, eight reads per cell were a tenth of a first frame)."""
        flags = self._component_memo.get("flags")
        if flags is None:
            flags = self._component_memo["flags"] = (
                self.show_cursor, self._show_hover_cursor, self.cursor_foreground_priority,
                self.cursor_background_priority, self._pseudo_class_state, self.cell_padding,
                self.fixed_rows, self.fixed_columns)
        return flags

    def _component_style(self, name: str) -> Style:
        memo = self._component_memo
        style = memo.get(name)
        if style is None:
            style = memo[name] = self.get_component_styles(name).rich_style
        return style

    def _get_row_style(self, row_index: int, base_style: Style) -> Style:
        if row_index >= self.fixed_rows and self.zebra_stripes:
            return self._component_style("datatable--odd-row" if row_index % 2 else "datatable--even-row")
        return super()._get_row_style(row_index, base_style)

    def _render_line_in_row(self, row_key, line_no, base_style, cursor_location, hover_location):
        # Textual's row cache does not know the window; rows rendered for another
        # window hold blanks where columns now show.
        window = (self.scroll_offset.x, self.size.width)
        if window != self._window:
            self._row_render_cache.clear()
            self._window = window
        self._shown = self._visible_columns(window)  # read by _render_cell for this row
        if (row_key is self._header_row_key or self._labelled_row_exists or self.cursor_type != "cell"
                or line_no != 0):
            return super()._render_line_in_row(row_key, line_no, base_style, cursor_location, hover_location)
        return self._render_body_row(row_key, base_style, cursor_location, hover_location)

    def _render_body_row(self, row_key, base_style, cursor_location, hover_location):
        """Textual's ``_render_line_in_row`` for a one-line body row under a cell
        cursor, except that each run of columns outside the window is one blank
        segment (Textual renders every cell, and crops them away), and the
        component styles are looked up once per frame, not once per row."""
        cache_key = (row_key, 0, base_style, cursor_location, hover_location, self.cursor_type, self.show_cursor,
                     self._show_hover_cursor, self._update_count, self._pseudo_class_state)
        hit = self._row_render_cache.get(cache_key)
        if hit is not None:
            return hit
        row_index = self._row_locations.get(row_key)
        row_index = -1 if row_index is None else row_index
        columns = self.ordered_columns
        shown = self._shown
        fixed_style = self._component_memo.get("fixed+meta")
        if fixed_style is None:
            fixed_style = self._component_memo["fixed+meta"] = (self._component_style("datatable--fixed")
                                                                + Style.from_meta({"fixed": True}))
        cursor_cell = (cursor_location.row, cursor_location.column) if cursor_location.row == row_index else None
        hover_cell = (hover_location.row, hover_location.column) if hover_location.row == row_index else None
        # Each column's width, once per frame (each is a reactive read: 80 a row at 50 models)
        widths = self._component_memo.get("widths")
        if widths is None or len(widths) != len(columns):
            widths = self._component_memo["widths"] = [column.get_render_width(self) for column in columns]
        fixed_row = []
        for column_index in range(min(self.fixed_columns, len(columns))):
            at = (row_index, column_index)
            fixed_row.append(self._render_cell(row_index, column_index, fixed_style, widths[column_index],
                                               cursor=at == cursor_cell, hover=at == hover_cell)[0])
        row_style = self._get_row_style(row_index, base_style)
        scrollable_row = []
        blank = 0  # width of the run of columns outside the window, not yet emitted
        for column_index, width in enumerate(widths):
            if shown is not None and column_index not in shown:
                blank += width
                continue
            if blank:
                scrollable_row.append([Segment(" " * blank, row_style)])
                blank = 0
            at = (row_index, column_index)
            scrollable_row.append(self._render_cell(row_index, column_index, row_style, width,
                                                    cursor=at == cursor_cell, hover=at == hover_cell)[0])
        if blank:
            scrollable_row.append([Segment(" " * blank, row_style)])
        # what Textual puts after the last column (cell cursor: the row style, faded)
        table_width = sum(widths[self.fixed_columns:]) + self._row_label_column_width
        remaining = max(0, self.size.width - table_width)
        if row_style.bgcolor is not None:
            faded = Color.from_rich_color(row_style.bgcolor).blend(self.background_colors[1], factor=0.25)
            extend_style = Style.from_color(color=row_style.color, bgcolor=faded.rich_color)
        else:
            extend_style = Style.from_color(row_style.color, row_style.bgcolor)
        extend_style += Style.from_meta({"row": row_index, "column": 0, "out_of_bounds": True})
        scrollable_row.append([Segment(" " * remaining, extend_style)])
        pair = (fixed_row, scrollable_row)
        self._row_render_cache[cache_key] = pair
        return pair

    # -- the mouse -------------------------------------------------------------------
    def cell_at(self, x: int, y: int) -> tuple[int, int, bool] | None:
        """(row index, column index, out of bounds) of the body cell at content offset
        (x, y), as the segment metadata Textual's own cells carry would say; None
        over the header or outside the rows."""
        header = self.header_height if self.show_header else 0
        if y < header or self.fixed_rows or self._labelled_row_exists:
            return None
        row = int(self.scroll_y) + y - header
        if not 0 <= row < self.row_count:
            return None
        columns = self.ordered_columns
        fixed = sum(c.get_render_width(self) for c in columns[:self.fixed_columns])
        position = x if x < fixed else x + int(self.scroll_x)  # the scrollable row starts with the fixed columns
        start = 0
        for index, column in enumerate(columns):
            width = column.get_render_width(self)
            if start <= position < start + width:
                return row, index, False
            start += width
        return row, 0, True

    def _event_cell(self, event) -> tuple[int, int, bool] | None:
        meta = event.style.meta
        if "row" in meta and "column" in meta:
            return None  # the header or the space after the last column: Textual's metadata says
        offset = event.get_content_offset(self)
        return None if offset is None else self.cell_at(offset.x, offset.y)

    # Textual calls the handler of every class in the MRO: these say when theirs is
    # not to run (prevent_default), and leave the header to it.
    def _on_mouse_move(self, event) -> None:
        got = self._event_cell(event)
        if got is None:
            return  # DataTable's own handler reads the metadata
        event.prevent_default()
        self._set_hover_cursor(not got[2])
        if not got[2] and self.show_cursor and self.cursor_type != "none":
            self.hover_coordinate = Coordinate(got[0], got[1])

    async def _on_click(self, event) -> None:
        got = self._event_cell(event)
        if got is None:
            return
        event.prevent_default()
        self._set_hover_cursor(True)
        if got[2] or not (self.show_cursor and self.cursor_type != "none"):
            return
        coordinate = Coordinate(got[0], got[1])
        again = coordinate == self.cursor_coordinate
        self.cursor_coordinate = coordinate
        if again:
            self._post_selected_message()
        self._scroll_cursor_into_view(animate=True)
        event.stop()

    # -- adding rows -----------------------------------------------------------------
    def add_rows_at_once(self, rows: list[tuple[str, list]]) -> None:
        """``add_row(*cells, key=key)`` for each (key, cells), one line high and
        unlabelled, with the per-row bookkeeping (ordering the columns, the
        cursor's revalidation, an idle check) done once for all of them: 200
        rows cost ~50 ms one by one at bench/scale.py's size."""
        from itertools import zip_longest

        from textual.widgets._data_table import DuplicateKey, Row, RowKey

        columns = [column.key for column in self.ordered_columns]
        start = self.row_count
        for offset, (key, cells) in enumerate(rows):
            row_key = RowKey(key)
            if row_key in self._row_locations:
                raise DuplicateKey(f"The row key {row_key!r} already exists.")
            if len(cells) > len(columns):
                raise ValueError("More values provided than there are columns.")
            self._row_locations[row_key] = start + offset
            # (dict(zip()) is C all the way: a comprehension was ~2 ms of 200 rows x 51 columns)
            self._data[row_key] = dict(zip(columns, cells) if len(cells) == len(columns) else zip_longest(columns, cells))
            self.rows[row_key] = Row(row_key, 1, None, False)
            self._new_rows.add(row_key)
        if not rows:
            return
        if self._measure_free() and not self._updated_cells:
            # Cheap here (no cell is measured): done now rather than on idle, so a
            # cursor moved next scrolls at once, before the first frame, instead
            # of after it (which painted every row twice).
            new_rows, self._new_rows = self._new_rows, set()
            self._require_update_dimensions = False
            self._update_dimensions(new_rows)
        else:
            self._require_update_dimensions = True
        self.cursor_coordinate = self.cursor_coordinate
        if start == 0 and len(self.columns) > 0 and self.show_cursor and self.cursor_type != "none":
            self._highlight_cursor()  # what add_row does for the first row
        self._update_count += 1
        self.check_idle()

    # -- measuring -------------------------------------------------------------------
    def _measure_free(self) -> bool:
        return (not self._labelled_row_exists and all(not c.auto_width for c in self.columns.values())
                and not any(row.auto_height for row in self.rows.values()))

    def _update_dimensions(self, new_rows) -> None:
        if not self._measure_free():
            super()._update_dimensions(new_rows)
            return
        if any(self.rows[k].label is not None for k in new_rows if k in self.rows):
            super()._update_dimensions(new_rows)
            return
        data_cells_width = sum(column.get_render_width(self) for column in self.columns.values())
        header_height = self.header_height if self.show_header else 0
        self.virtual_size = Size(data_cells_width + self._row_label_column_width,
                                 self._total_row_height + header_height)

    # -- rendering -------------------------------------------------------------------
    def _render_cell(self, row_index: int, column_index: int, base_style: Style, width: int,
                     cursor: bool = False, hover: bool = False):
        if column_index >= 0 and self._shown is not None and column_index not in self._shown:
            return [[Segment(" " * width, base_style)]]  # cropped away: never seen
        if row_index < 0 or column_index < 0:  # the header and row labels: Textual's own path
            return super()._render_cell(row_index, column_index, base_style, width, cursor, hover)
        row_key = self._row_locations.get_key(row_index)
        column_key = self._column_locations.get_key(column_index)
        row = self.rows.get(row_key)
        if row is None or row.height != 1:
            return super()._render_cell(row_index, column_index, base_style, width, cursor, hover)
        cell = self._data.get(row_key, {}).get(column_key)
        flags = self._frame_flags()
        fixed = row_index < flags[6] or column_index < flags[7]
        key = (id(cell), base_style, width, fixed, cursor, hover, flags)
        hit = self._content_cache.get(key)
        if hit is None or hit[0] is not cell:
            # Textual's own rendering of the cell, without the row/column metadata
            # (adjacent segments of one style merged: fewer to copy with the metadata on each use)
            hit = (cell, self._render_plain(row_key, column_key, row_index, column_index, base_style, width,
                                            cursor, hover))
            self._content_cache[key] = hit
        # No row/column metadata on body cells (Textual puts it on every segment, which
        # made each one's style unique: nothing downstream could cache it); mouse
        # events find the cell from their position instead (``cell_at``).
        return hit[1]

    def _render_plain(self, row_key, column_key, row_index: int, column_index: int, base_style: Style,
                      width: int, cursor: bool, hover: bool):
        """``DataTable._render_cell`` for one cell with no metadata in its base style,
        adjacent segments of one style merged (``Segment.simplify``). Its own cache
        would keep it under the table's update count, which every rebuild bumps; this
        result is kept here instead."""
        from rich.padding import Padding
        from textual.renderables.styled import Styled
        from textual.widgets._data_table import _EMPTY_TEXT, default_cell_formatter

        datum = self._data.get(row_key, {}).get(column_key)
        cell = _EMPTY_TEXT if datum is None else (default_cell_formatter(datum, wrap=False, height=1) or _EMPTY_TEXT)
        show_cursor, show_hover, foreground, background, _, _, fixed_rows, fixed_columns = self._frame_flags()
        fixed = row_index < fixed_rows or column_index < fixed_columns
        component_style, post_style = self._get_styles_to_render_cell(
            False, False, fixed, hover, cursor, show_cursor, show_hover, foreground == "css", background == "css")
        pre_style = base_style + component_style
        fast = self._render_fast(cell, width, pre_style, post_style, merged=True)
        if fast is not None:
            return fast
        options = self.app.console_options.update_dimensions(width, 1).update(no_wrap=True)
        lines = self.app.console.render_lines(
            Styled(Padding(cell, (0, self.cell_padding)), pre_style=pre_style, post_style=post_style), options)
        return [list(Segment.simplify(line)) for line in lines]

    def _own_segments(self, cell) -> list[Segment]:
        """``cell.render(console)``, once per cell text: a text is shared by many
        cells, and rendered under two row styles and several widths."""
        hit = self._segments_cache.get(id(cell))
        if hit is None or hit[0] is not cell:
            hit = (cell, list(cell.render(self.app.console, end="")))
            self._segments_cache[id(cell)] = hit  # the text is kept: its id is not reused meanwhile
        return hit[1]

    def _render_fast(self, cell, width: int, pre_style: Style, post_style: Style, merged: bool = False):
        """What Rich makes of ``Styled(Padding(cell, (0, padding)), pre, post)`` on
        one line of ``width`` for a one-line Text that fits (tests hold the two
        equal, segment by segment), without Rich's layout passes: the text's
        own segments, padded with unstyled blanks, each styled pre + own + post.
        ~5x cheaper, which is most of a first frame at 200 x 50. None for any
        other cell (Rich's path then). ``merged``: adjacent segments of one style
        merged, as ``Segment.simplify`` merges them."""
        from rich.text import Text

        pad = self.cell_padding
        inner = width - 2 * pad
        if type(cell) is not Text or cell.justify not in (None, "default", "left") or inner < 0:
            return None
        plain, cell_len = cell.plain, cell.cell_len
        if cell_len > inner or "\n" in plain or "\t" in plain:
            return None
        # The runs depend on the text's shape (its length, style and spans), not on its
        # characters: cells that differ only in their letters are styled once (a first
        # frame at 200 x 50 has ~280 distinct texts and far fewer shapes).
        shape = (len(plain), cell_len, cell.style, tuple(cell._spans), pre_style, post_style, width, pad)
        layout = self._layouts.get(shape)
        if layout is None:
            line = self._render_fast_once(cell, inner, pad, pre_style, post_style)
            if any(control for _, _, control in line):
                return [list(Segment.simplify(line)) if merged else line]
            runs, start = [], 0
            for text, style, _ in line:
                runs.append((start, start + len(text), style))
                start += len(text)
            joined = runs[:1]
            for start, end, style in runs[1:]:  # Segment.simplify's rule: a run of the last one's style joins it
                if style == joined[-1][2]:
                    joined[-1] = (joined[-1][0], end, style)
                else:
                    joined.append((start, end, style))
            layout = self._layouts[shape] = (runs, joined)
        padded = f"{' ' * pad}{plain}{' ' * (inner - cell_len + pad)}"
        return [[Segment(padded[start:end], style) for start, end, style in layout[merged]]]

    def _render_fast_once(self, cell, inner: int, pad: int, pre_style: Style, post_style: Style) -> list[Segment]:
        """_render_fast's one line, made from the text's own segments."""
        null = Style.null()
        segments = []
        if pad:
            segments.append(Segment(" " * pad, null))
        segments.extend(self._own_segments(cell))
        if cell.cell_len < inner:
            segments.append(Segment(" " * (inner - cell.cell_len), null))
        if pad:
            segments.append(Segment(" " * pad, null))
        out = []
        for text, style, control in segments:
            if control:
                out.append(Segment(text, None, control))
                continue
            if pre_style:
                style = pre_style + style
            if post_style:
                style = style + post_style if style else post_style
            out.append(Segment(text, style))
        return out
