"""Every screen readable at 80x24: rendered at that size, each shows what must be
visible. The Runs screen keeps a long model name readable and titles its tables;
the Grades screen shows at least three history rows, with a note open too; the
help box shows a scroll hint on its border when it is cut."""
from __future__ import annotations

import io
import sys
from pathlib import Path

from benchtui.store.database import Store
from benchtui.tui.app import BenchApp
from rich.console import Console
from textual.widgets import DataTable

sys.path.insert(0, str(Path(__file__).parent))
from settling import settle  # noqa: E402

LONG = "codex_gpt-5.6-sol_20260101_000000"


def screen_rows(app) -> list[str]:
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), record=True, color_system=None)
    console.print(app.screen._compositor.render_update(full=True))
    return console.export_text().splitlines()


async def test_each_screen_shows_what_it_must_at_80x24(demo_wb):
    with Store(demo_wb.store_path) as store:
        store.execute("insert into runs (model, challenge, status, verdict, message) values (?, 'kv', 'done', 'fail', ?)",
                      (LONG, "fail: speed_decode: the answer's cache grows without bound over 2,000 decode steps"))
        store.conn.commit()
    app = BenchApp(demo_wb)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        app.open_runs()
        await settle(app, pilot)
        rows = "\n".join(screen_rows(app))
        assert "run history" in rows  # the history table is titled
        assert "codex_gpt" in rows  # a long model name is cut, never to "…" alone
        app.pop_screen()
        await settle(app, pilot)

        app.open_grades("demo-careful", "kv")
        await settle(app, pilot)
        for letter in ("a", "b", "c", "d"):  # four grades: four history rows to show
            await pilot.press(letter)
            await settle(app, pilot)
        history = app.screen.query_one("#grade-history", DataTable)
        assert history.region.height >= 4, history.region  # its header and three rows
        await pilot.press("N")  # a note open takes the bottom: the history keeps its rows
        await settle(app, pilot)
        assert app.screen.query_one("#grade-history", DataTable).region.height >= 4
        await pilot.press("escape")
        await settle(app, pilot)
        app.pop_screen()
        await settle(app, pilot)

        app.action_help()
        await settle(app, pilot)
        rows = screen_rows(app)
        assert any("scroll" in row and "esc close" in row for row in rows), rows
