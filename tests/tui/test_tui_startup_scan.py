"""Started as `benchtui` starts it, the dashboard shows the stored index at
once and then rescans the workbench in a worker: new folders appear without
a restart, and ctrl+r rescans again."""
from __future__ import annotations

from benchtui.tui.app import BenchApp
from settling import settle
from textual.widgets import DataTable


def columns(app) -> list[str]:
    table = app.screen.query_one(DataTable)
    return [str(c.value) for c in table.columns]


async def test_tui_rescans_on_start_and_on_ctrl_r(demo_wb):
    newcomer = demo_wb.root / "models" / "zz-newcomer" / "kv"
    newcomer.mkdir(parents=True)
    (newcomer / "kv.py").write_text("def decode():\n    pass\n")
    app = BenchApp(demo_wb, scan_on_start=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot, rounds=4)
        assert "zz-newcomer" in columns(app)
        assert "indexed" in str(app.screen.query_one("#matrix-status").render())
        late = demo_wb.root / "models" / "zz-late" / "backwards"
        late.mkdir(parents=True)
        (late / "ln.py").write_text("x = 1\n")
        await pilot.press("ctrl+r")
        await settle(app, pilot, rounds=4)
        assert "zz-late" in columns(app)
        assert app.errors == []


async def test_tui_without_scan_shows_only_the_store(demo_wb):
    newcomer = demo_wb.root / "models" / "zz-newcomer" / "kv"
    newcomer.mkdir(parents=True)
    (newcomer / "kv.py").write_text("x = 1\n")
    app = BenchApp(demo_wb)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot, rounds=4)
        assert "zz-newcomer" not in columns(app)
