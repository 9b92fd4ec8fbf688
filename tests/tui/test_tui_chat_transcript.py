"""A one-shot chat export at a model folder's root opens in the answer
screen's transcript view (t), as the scan indexed it."""
from __future__ import annotations

from benchtui.tui.app import BenchApp
from settling import settle


async def test_tui_t_opens_a_chat_export_at_the_model_root(demo_wb):
    from benchtui.store.database import Store
    from benchtui.tui.screens.transcript import TranscriptScreen
    from benchtui.tui.widgets.transcript_view import TranscriptView
    from benchtui.workbench.scan import scan_workbench
    from textual.widgets import Static

    model = demo_wb.models_dir / "demo-hasty"
    prompt = (model / "kv" / "PROMPT.md").read_text()
    (model / "kv chat.md").write_text(f"PROMPT: {prompt}\n\nMODEL:\n\nA cache of pages, sized per step.\n")
    with Store(demo_wb.store_path) as store:
        scan_workbench(demo_wb, store)
    app = BenchApp(demo_wb)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        app.open_answer("demo-hasty", "kv")
        await settle(app, pilot)
        # what the scan did is a note, not a warning
        tree = app.screen.query_one("#file-tree")
        groups = {str(n.label): [str(c.label) for c in n.children] for n in tree.root.children}
        assert any("chat_transcript" in leaf for leaf in groups.get("Scan notes", [])), groups
        assert not any("chat_transcript" in leaf for leaf in groups.get("Warnings", [])), groups
        await pilot.press("t")
        await settle(app, pilot)
        assert isinstance(app.screen, TranscriptScreen)
        header = str(app.screen.query_one("#transcript-header", Static).render())
        assert "../kv chat.md" in header and "chat export" in header
        totals = " ".join(str(w.render()) for w in app.screen.query(Static))
        assert "no token counts recorded" in totals and "tokens in 0" not in totals and "$0.0000" not in totals
        shown = " ".join(r.text for r in app.screen.query_one(TranscriptView).rows)
        assert "A cache of pages, sized per step." in shown
    assert app.errors == []
