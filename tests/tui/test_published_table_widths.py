"""The published screen's table lays out its columns from each new cell's text
instead of Textual measuring every cell through Rich (10,000 rows of a deck
took seconds on the UI thread): the same widths as a plain DataTable's, with
far fewer measurements."""
from __future__ import annotations

import asyncio

from benchtui.tui.screens.published import PlainWidthTable
from rich.text import Text
from textual.app import App
from textual.widgets import DataTable, _data_table

ROWS = [[Text("model-αβγ-" + "x" * (i % 17)), Text(f"task [b]{i}[/b]"), Text("PASS" if i % 3 else "FAIL"),
         Text("✓ pass", style="green"), Text("agree"), Text("—"), Text(f"{i / 7:.4f}"), Text("漢字" * (i % 5))]
        for i in range(300)]


class _Tables(App):
    def compose(self):
        yield DataTable(id="plain")
        yield PlainWidthTable(id="fast")


async def _layout(monkeypatch) -> tuple[list[int], list[int], tuple, tuple, int]:
    calls = []
    real = _data_table.measure
    app = _Tables()
    async with app.run_test(size=(140, 45)) as pilot:
        plain, fast = app.query_one("#plain", DataTable), app.query_one("#fast", PlainWidthTable)
        for t in (plain, fast):
            t.add_columns("model", "challenge", "deck", "benchtui", "agreement", "annotation", "deck pf", "pf")
        for i, row in enumerate(ROWS):
            plain.add_row(*row, key=str(i))
        await pilot.pause()
        monkeypatch.setattr(_data_table, "measure", lambda *a, **k: calls.append(1) or real(*a, **k))
        for i, row in enumerate(ROWS):
            fast.add_row(*row, key=str(i))
        await pilot.pause()
        monkeypatch.setattr(_data_table, "measure", real)
        return ([c.content_width for c in plain.ordered_columns], [c.content_width for c in fast.ordered_columns],
                tuple(plain.virtual_size), tuple(fast.virtual_size), len(calls))


def test_same_widths_as_a_datatable_without_measuring_each_cell(monkeypatch):
    plain_w, fast_w, plain_size, fast_size, measured = asyncio.run(_layout(monkeypatch))
    assert fast_w == plain_w
    assert fast_size == plain_size
    assert measured < len(ROWS), f"{measured} cell measurements for {len(ROWS)} rows"
