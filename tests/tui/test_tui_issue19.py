"""Issue 19 in the dashboard: damaged store, binary and oversized transcripts,
screens that hide what they hold."""
from __future__ import annotations

import sqlite3

from tui.app import BenchApp


async def settle(app, pilot) -> None:
    for _ in range(3):
        await pilot.pause()
        await app.workers.wait_for_complete()
    await pilot.pause()


async def test_tui_store_damage_found_mid_session_names_the_backup(demo_wb):
    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        app.report_error("loading the answer", sqlite3.DatabaseError("database disk image is malformed"))
        await pilot.pause()
    assert len(app.errors) == 1
    assert "is damaged (database disk image is malformed)" in app.errors[0] and "benchtui backup" in app.errors[0]
