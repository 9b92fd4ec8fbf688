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


async def test_the_leaderboard_is_computed_once_after_the_start_up_rescan_not_on_its_key(demo_wb, monkeypatch):
    """The board of the store as scanned is ready before `l` (computing it is ~1 s of
    CPU at 50 models x 200 challenges); a store change since makes `l` compute anew."""
    from benchtui.grading import aggregates
    from benchtui.grading.grades import set_grade
    from benchtui.tui.screens.leaderboard import LeaderboardScreen, RenderedPane

    computed = []
    real = aggregates.leaderboard
    monkeypatch.setattr(aggregates, "leaderboard", lambda *a, **k: (computed.append(1), real(*a, **k))[1])
    app = BenchApp(demo_wb, scan_on_start=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot, rounds=4)
        assert len(computed) == 1
        await pilot.press("l")
        await settle(app, pilot)
        assert isinstance(app.screen, LeaderboardScreen) and len(computed) == 1
        assert all(pane._strips for pane in app.screen.query(RenderedPane))
        with app.open_store() as store:
            set_grade(store, "demo-hasty", "backwards", "D", grader="reviewer")
        await pilot.press("escape")
        await settle(app, pilot)
        await pilot.press("l")
        await settle(app, pilot)
        assert len(computed) == 2
        assert app.errors == []
