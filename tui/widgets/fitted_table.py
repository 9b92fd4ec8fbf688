"""A DataTable whose columns fit its own width, by the rule of engine/text/fit.py:
a number is shown whole or not at all.

A DataTable left to size itself makes each column as wide as its widest cell and
scrolls sideways, so whatever stands at the right edge is cut there, mid-number
("1e-0" for 1e-06). Here every column that holds figures or verdicts keeps its
whole width; the columns that may shrink (names, messages) are cut between words
with an ellipsis, the last of them first, and left out when narrower than their
floor (the screen shows their text whole elsewhere). A ``fill`` column (a
message) takes the room the others leave, so a wide terminal shows more of it.
The table lays itself out again whenever its width changes.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from benchtui.text.fit import cut
from rich.text import Text
from textual import events
from textual.widgets import DataTable


@dataclass(frozen=True)
class Column:
    key: str
    shrink: bool = False  # may be cut between words (a name, a message); the others never are
    fill: bool = False    # takes the room the other columns leave (at most one)
    floor: int = 0        # the least width: a shrinking column is cut no narrower, another is this wide at least
    optional: bool = False  # left out rather than kept at its floor when the table is still too wide


def cell_width(value: Any) -> int:
    return value.cell_len if isinstance(value, Text) else Text(str(value)).cell_len


def cut_cell(value: Any, width: int) -> Any:
    if cell_width(value) <= width:
        return value
    if isinstance(value, Text):
        return Text(cut(value.plain, width), style=value.style)
    return cut(" ".join(str(value).split()), width)


def fit_widths(columns: Sequence[Column], rows: Sequence[Sequence[Any]], room: int | None,
               padding: int = 1) -> list[int | None]:
    """Each column's width (None: left out) so that the table fits ``room`` cells
    where it can without cutting a column that may not shrink."""
    natural = [max([len(c.key), c.floor if not c.shrink else 0, *(cell_width(r[i]) for r in rows)])
               for i, c in enumerate(columns)]
    widths: list[int | None] = list(natural)
    if room is None or room <= 0:
        return widths

    def used() -> int:
        return sum(w + 2 * padding for w in widths if w is not None)

    shrinking = [i for i, c in enumerate(columns) if c.shrink]
    for i in reversed(shrinking):  # the last first: a message before the name it describes
        over = used() - room
        if over <= 0:
            break
        least = min(max(columns[i].floor, 1), natural[i])
        widths[i] = max(natural[i] - over, least)
        if used() > room and columns[i].optional:
            widths[i] = None
    fills = [i for i, c in enumerate(columns) if c.fill and widths[i] is not None]
    if fills and used() < room:
        widths[fills[0]] += room - used()
    return widths


class FittedTable(DataTable):
    """``fill(columns, rows)`` instead of add_column/add_row; rows are (key, cells)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.spec: tuple[Column, ...] = ()
        self.cells: list[tuple[str | None, tuple]] = []
        self._laid_out_for: int | None = None

    def room(self) -> int | None:
        width = self.size.width
        if width <= 0:
            return None  # not laid out yet (a hidden tab): whole widths until it is
        # the vertical scrollbar's cells, kept free whether it shows now or not
        return width - self.gutter.width - self.styles.scrollbar_size_vertical

    def fill(self, columns: Sequence[Column], rows: Sequence[tuple[str | None, Sequence[Any]]]) -> None:
        self.spec = tuple(columns)
        self.cells = [(key, tuple(cells)) for key, cells in rows]
        self.lay_out()

    def lay_out(self) -> None:
        room = self.room()
        self._laid_out_for = room
        widths = fit_widths(self.spec, [cells for _, cells in self.cells], room, self.cell_padding)
        cursor = self.cursor_row if self.row_count else 0
        self.clear(columns=True)
        shown = [(i, c, w) for i, (c, w) in enumerate(zip(self.spec, widths)) if w is not None]
        for _, c, w in shown:
            self.add_column(Text(cut(c.key, w)), key=c.key, width=w)
        for key, cells in self.cells:
            self.add_row(*(cut_cell(cells[i], w) for i, _, w in shown), key=key)
        if self.row_count:
            self.move_cursor(row=min(cursor, self.row_count - 1), scroll=False)

    def on_resize(self, event: events.Resize) -> None:
        if self.spec and self.room() != self._laid_out_for:
            self.lay_out()
