"""The dashboard's published-results screen: `p` in the matrix lists every
published run beside benchtui's verdict; `p` on an answer shows that answer's
published result with its annotation and quotes."""
from __future__ import annotations

import asyncio

from benchtui.store.database import Store
from benchtui.tui.widgets.virtual_table import VirtualTable
from benchtui.tui.widgets.wrapped_text import WrappedText
from deck_kit import scanned_workbench
from textual.widgets import DataTable, Static

from tests.tui.settling import settle


def test_published_screen_from_the_matrix_and_from_an_answer(kbh_deck, tmp_path, monkeypatch):
    from benchtui.tui.app import BenchApp

    monkeypatch.setenv("BENCHTUI_CONFIG", str(tmp_path / "no-keys.toml"))
    wb = scanned_workbench(kbh_deck, tmp_path / "wb")

    async def drive():
        app = BenchApp(wb)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(app, pilot)
            await pilot.press("p")
            await settle(app, pilot)
            assert type(app.screen).__name__ == "PublishedScreen"
            table = app.screen.query_one("#published-table", VirtualTable)
            assert table.row_count == 80
            summary = str(app.screen.query_one("#published-summary", WrappedText).render())
            assert "79 answers, 80 published (66 PASS), 0 run here" in summary
            assert "the deck itself: run 20260721_145355_codex_gpt-5.6-sol_06_sonic_moe_swiglu" in summary
            await pilot.press("escape")
            await settle(app, pilot)
            app.open_answer("claude_claude-fable-5", "kbh_01_fp8_gemm")
            await settle(app, pilot)
            await pilot.press("p")
            await settle(app, pilot)
            table = app.screen.query_one("#published-table", VirtualTable)
            assert table.row_count == 1
            # the deck's lines about this answer's runs and the whole deck's, none about another problem's runs
            summary = str(app.screen.query_one("#published-summary", WrappedText).render())
            assert "the deck itself: run 20260801_190837_or-fable_deepseek_deepseek-v4-flash-0731_01_fp8_gemm" not in summary
            assert "sonic_moe_swiglu" not in summary.split("\n  kbh_01_fp8_gemm:")[-1]
            detail = str(app.screen.query_one("#published-detail", Static).render())
            assert "deck: PASS (pass), peak_fraction 0.3033" in detail
            assert "annotation (20260702_055037_claude_claude-fable-5_01_fp8_gemm.yaml): clean" in detail
            assert "solution.py:684-689  CUDA-graph cache is a launch cache, not an output cache" in detail
            assert "shape 3 4096×14336×4096" in detail
        assert app.errors == []

    asyncio.run(drive())


def test_a_deck_workbench_shows_its_own_challenges_and_the_rest_on_request(kbh_deck, tmp_path, monkeypatch):
    from benchtui.tui.app import BenchApp

    monkeypatch.setenv("BENCHTUI_CONFIG", str(tmp_path / "no-keys.toml"))
    wb = scanned_workbench(kbh_deck, tmp_path / "wb")
    with Store(wb.store_path) as store:
        bundled = len(store.challenge_ids()) - 4

    async def drive():
        app = BenchApp(wb)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(app, pilot)
            table = app.screen.query_one("#matrix", DataTable)
            assert table.row_count == 4  # the deck's; the bundled ones no model answered are left out
            status = str(app.screen.query_one("#matrix-status", Static).render())
            assert f"{bundled} bundled without answers hidden (e shows them)" in status, status
            await pilot.press("e")
            await settle(app, pilot)
            assert table.row_count == 4 + bundled
            assert "e hides the bundled without answers" in str(app.screen.query_one("#matrix-status", Static).render())
            await pilot.press("e")
            await settle(app, pilot)
            assert table.row_count == 4
        assert app.errors == []

    asyncio.run(drive())
