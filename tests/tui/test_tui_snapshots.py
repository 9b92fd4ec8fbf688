"""Snapshot tests: every screen on a copy of the demo workbench at a fixed size.

Update after an intended change with: pytest tests/tui/test_tui_snapshots.py --snapshot-update
"""
from __future__ import annotations

from benchtui.tui.app import BenchApp
from settling import settle

SIZE = (100, 30)


async def _settle(pilot) -> None:
    await settle(pilot.app, pilot)


def _go(*steps):
    async def run_before(pilot) -> None:
        await _settle(pilot)
        for step in steps:
            if callable(step):
                step(pilot.app)
            else:
                await pilot.press(step)
            await _settle(pilot)
    return run_before


def test_tui_snapshot_matrix(demo_wb, snap_compare):
    assert snap_compare(BenchApp(demo_wb), terminal_size=SIZE, run_before=_go())


def test_tui_snapshot_matrix_80x24(demo_wb, snap_compare):
    assert snap_compare(BenchApp(demo_wb), terminal_size=(80, 24), run_before=_go())


def test_tui_snapshot_answer(demo_wb, snap_compare):
    assert snap_compare(BenchApp(demo_wb), terminal_size=SIZE,
                        run_before=_go(lambda app: app.open_answer("demo-careful", "backwards", "layernorm.py")))


def test_tui_snapshot_answer_checks(demo_wb, snap_compare):
    assert snap_compare(BenchApp(demo_wb), terminal_size=SIZE,
                        run_before=_go(lambda app: app.open_answer("demo-careful", "backwards"), "2"))


def test_tui_snapshot_transcript(demo_wb, snap_compare):
    assert snap_compare(BenchApp(demo_wb), terminal_size=SIZE,
                        run_before=_go(lambda app: app.open_transcript("demo-careful", "backwards", "review-session.jsonl")))


def test_tui_snapshot_compare(demo_wb, snap_compare):
    assert snap_compare(BenchApp(demo_wb), terminal_size=SIZE,
                        run_before=_go(lambda app: app.open_compare("demo-careful", "backwards", "demo-hasty"), "n"))


def test_tui_snapshot_grades(demo_wb, snap_compare):
    assert snap_compare(BenchApp(demo_wb), terminal_size=SIZE,
                        run_before=_go(lambda app: app.open_grades("demo-careful", "backwards")))


def test_tui_snapshot_runs(demo_wb, snap_compare):
    assert snap_compare(BenchApp(demo_wb), terminal_size=SIZE,
                        run_before=_go(lambda app: app.open_runs([("demo-careful", "backwards")], "answer")))


def test_tui_snapshot_leaderboard(demo_wb, snap_compare):
    assert snap_compare(BenchApp(demo_wb), terminal_size=SIZE, run_before=_go(lambda app: app.open_leaderboard()))


def test_tui_snapshot_help(demo_wb, snap_compare, monkeypatch):
    monkeypatch.setenv("BENCHTUI_CONFIG", "/etc/benchtui/keys.toml")  # the help names it: the same on every machine
    assert snap_compare(BenchApp(demo_wb), terminal_size=SIZE, run_before=_go("question_mark"))
