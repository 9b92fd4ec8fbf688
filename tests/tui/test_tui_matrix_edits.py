"""An answer edited while the matrix is open: its fresh verdict is marked stale
within a few seconds, by stat alone, before any rescan."""
from __future__ import annotations

import asyncio
import json

from benchtui.store.database import Store
from benchtui.tui import store_watch
from benchtui.tui.app import BenchApp
from benchtui.tui.glyphs import STALE_MARK
from benchtui.tui.screens.matrix import cell_text
from settling import settle


async def test_a_verdict_on_a_file_edited_while_the_matrix_is_open_turns_stale(demo_wb, monkeypatch):
    monkeypatch.setattr(store_watch, "EDITS_S", 0.05)
    monkeypatch.setattr(store_watch, "IDLE_S", 0.0)
    with Store(demo_wb.store_path) as store:  # a passing run recorded on the files as the scan hashed them
        run_id, model, challenge, answer_id, folder = store.conn.execute(
            "select r.id, r.model, r.challenge, a.id, a.path from runs r join answers a using (model, challenge) "
            "where r.verdict = 'pass' order by r.id limit 1").fetchone()
        files = dict(store.conn.execute("select relpath, sha256 from files where answer_id = ?", (answer_id,)).fetchall())
        store.conn.execute("update runs set files = ? where id = ?", (json.dumps(files), run_id))
        store.conn.commit()
    edited = sorted(rel for rel in files if rel.endswith(".py"))[0]
    app = BenchApp(demo_wb)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app, pilot)
        screen = app.screen
        assert screen.matrix.cell(model, challenge).stale == ""
        path = demo_wb.root / folder / edited
        path.write_text(path.read_text() + "\n# edited\n")
        for _ in range(100):
            await asyncio.sleep(0.02)
            await pilot.pause()
            if screen.matrix.cell(model, challenge).stale:
                break
        cell = screen.matrix.cell(model, challenge)
        assert cell.stale == f"{edited} edited since the last scan (ctrl+r says what changed)"
        assert STALE_MARK in cell_text(cell).plain
    assert app.errors == []
