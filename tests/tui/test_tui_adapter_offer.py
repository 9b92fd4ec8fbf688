"""The answer screen's offer for an unbound answer: a hint with the
exact `benchtui adapter new` command, and `a` scaffolds the adapter in the
workbench's .benchtui/adapters (never in the answer folder)."""
from __future__ import annotations

import json

from benchtui.runner.orchestrate import tree_digest
from benchtui.store.database import Store, now_iso
from benchtui.tui.app import BenchApp
from benchtui.tui.screens.confirm import ConfirmScreen
from settling import settle
from textual.widgets import Static


async def test_tui_unbound_answer_offers_and_scaffolds_an_adapter(demo_wb):
    with Store(demo_wb.store_path) as store:
        run_id = store.db["runs"].insert({"model": "demo-hasty", "challenge": "kv", "status": "done", "verdict": "unbound",
                                          "backend": "cpu", "started_at": now_iso(), "finished_at": now_iso(),
                                          "files": json.dumps({}), "versions": json.dumps({})}).last_pk
        store.db["checks"].insert({"run_id": run_id, "position": 0, "name": "bind", "verdict": "unbound",
                                   "value": "null", "threshold": "null", "message": "looked for prefill / decode",
                                   "details": "{}"})
    answer = demo_wb.models_dir / "demo-hasty" / "kv"
    before = tree_digest(answer)[0]
    app = BenchApp(demo_wb)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app, pilot)
        app.open_answer("demo-hasty", "kv")
        await settle(app, pilot)
        summary = str(app.screen.query_one("#run-summary", Static).render())
        assert "press a" in summary and "benchtui adapter new demo-hasty kv" in summary
        await pilot.press("a")
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmScreen)  # asked first
        await pilot.press("y")
        await settle(app, pilot)
    target = demo_wb.root / ".benchtui" / "adapters" / "kv" / "demo-hasty.py"
    assert target.is_file() and "ANSWER_SHA256" in target.read_text() and "class KVCache" in target.read_text()
    assert tree_digest(answer)[0] == before
    assert app.errors == []


async def test_tui_adapter_key_asks_and_names_what_binds_today(demo_wb):
    """`a` on an answer the plugin's adapter binds used to write a
    scaffold at once, which every later run then used (unbound)."""
    with Store(demo_wb.store_path) as store:  # never run: only the plugin's adapter says it binds
        store.execute("delete from checks where run_id in (select id from runs where model = 'demo-careful' and challenge = 'kv')")
        store.execute("delete from runs where model = 'demo-careful' and challenge = 'kv'")
        store.conn.commit()
    app = BenchApp(demo_wb)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app, pilot)
        app.open_answer("demo-careful", "kv")
        await settle(app, pilot)
        await pilot.press("a")
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmScreen)
        detail = str(app.screen.query_one("#confirm-detail", Static).render())
        assert "already binds through the plugin adapter challenges/kv/adapters/demo-careful.py" in detail
        await pilot.press("n")
        await settle(app, pilot)
        assert not isinstance(app.screen, ConfirmScreen)
    assert not (demo_wb.root / ".benchtui").exists()
    assert app.errors == []


async def test_tui_adapter_key_on_a_folder_without_sources_says_so_before_asking(demo_wb):
    """demo-quitter/kv holds only its prompt: `a` asked to write a scaffold, and
    only after "yes" said there was nothing to adapt."""
    app = BenchApp(demo_wb)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app, pilot)
        app.open_answer("demo-quitter", "kv")
        await settle(app, pilot)
        await pilot.press("a")
        await settle(app, pilot)
        assert not isinstance(app.screen, ConfirmScreen)
        notices = [n.message for n in app._notifications]
        assert any("demo-quitter/kv holds no answer source files" in n and "nothing to adapt" in n
                   for n in notices), notices
    assert not (demo_wb.root / ".benchtui" / "adapters" / "kv" / "demo-quitter.py").exists()
    assert app.errors == []
