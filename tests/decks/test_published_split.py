"""The published screen's split moved with + (and -): the highlighted row stays in
the table's view while the detail below shows it, at 80x24 and 120x40, on the
hand-built deck and on the published one."""
from __future__ import annotations

import asyncio

import pytest
from benchtui.tui.widgets.virtual_table import VirtualTable
from deck_kit import scanned_workbench
from textual.widgets import Static

from tests.tui.settling import settle


def in_view(table: VirtualTable) -> bool:
    """Whether the cursor's row lies inside the table's visible body (below its header)."""
    y = table.row_region(table.cursor_row).y
    top = int(table.scroll_y) + table.header_height
    return top <= y and y + 1 <= int(table.scroll_y) + table.scrollable_content_region.height


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_the_highlighted_row_stays_in_view_after_plus(any_kbh_deck, tmp_path, monkeypatch, size):
    from benchtui.tui.app import BenchApp

    monkeypatch.setenv("BENCHTUI_CONFIG", str(tmp_path / "no-keys.toml"))
    wb = scanned_workbench(any_kbh_deck, tmp_path / "wb")

    async def drive():
        app = BenchApp(wb)
        async with app.run_test(size=size) as pilot:
            await settle(app, pilot)
            await pilot.press("p")
            await settle(app, pilot)
            table = app.screen.query_one("#published-table", VirtualTable)
            # the lowest row the table shows from its top, before the split moves
            while table.cursor_row < table.row_count - 1:
                await pilot.press("down")
                await settle(app, pilot, 1)
                if not in_view(table) or table.scroll_y > 0:
                    await pilot.press("up")
                    await settle(app, pilot, 1)
                    break
            assert in_view(table)
            for _ in range(4):
                await pilot.press("plus")
                await settle(app, pilot)
                assert in_view(table), (size, table.cursor_row, table.scroll_y, table.scrollable_content_region)
                row = app.screen.rows[table.cursor_row]
                detail = str(app.screen.query_one("#published-detail", Static).render())
                assert detail.startswith(f"{row['model'] or '(no answer)'} / {row['challenge']}")
            await pilot.press("minus")
            await settle(app, pilot)
            assert in_view(table)
        assert app.errors == []

    asyncio.run(drive())
