"""No traceback reaches the screen: an exception in a screen's message
handler becomes a notification, and the screen keeps working."""
from __future__ import annotations

from benchtui.tui.app import BenchApp
from benchtui.tui.screens.matrix import MatrixScreen
from settling import settle


async def test_tui_handler_error_becomes_a_notification(demo_wb, monkeypatch):
    def broken(self, *args) -> None:
        raise RuntimeError("boom in a handler")

    monkeypatch.setattr(MatrixScreen, "update_detail", broken)  # runs from the cell-highlighted handler
    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        errors_before = len(app.errors)
        app.screen.focus_cell("demo-careful", "backwards")
        await pilot.press("down")
        await settle(app, pilot)
        assert len(app.errors) > errors_before
        assert any("boom in a handler" in e for e in app.errors)
        # the screen's message loop survived: keys still work
        await pilot.press("enter")
        await settle(app, pilot)
        assert type(app.screen).__name__ == "AnswerScreen"
        assert app.is_running
    assert app.return_code is None  # it never exited (a fatal error exits with 1)
