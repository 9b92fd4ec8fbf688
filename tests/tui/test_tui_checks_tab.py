"""The answer screen's Checks tab: its rows in view at 80x24 under a long
requirement list, values in words (not JSON text), and the first failing
check highlighted (not the info row above it)."""
from __future__ import annotations

import json

from benchtui.store.database import Store
from benchtui.tui.app import BenchApp
from benchtui.tui.glyphs import check_cell
from settling import settle
from textual.widgets import DataTable, Static

REQUIREMENTS = [
    ("incremental_decode", "Support incremental decoding (one token at a time) with a cache that grows"),
    ("cached_attention", "attention computation using cached keys/values, never recomputed"),
    ("multi_head", "multi-head attention with any number of heads and any head dimension"),
    ("variable_lengths", "batching with variable sequence lengths, padding rows isolated"),
    ("no_recompute", "Avoid recomputing attention for past tokens at every decoding step"),
]


def seed_long_run(wb) -> None:
    """A run like the published qwen36/kv one: five requirements, each failing with a
    long reason, an `adapter` info row first, values and thresholds as JSON text."""
    coverage = [{"id": rid, "words": words, "status": "fail", "checkable": True,
                 "reason": "failed: decode_matches_full_attention, padding_isolated", "checks": []}
                for rid, words in REQUIREMENTS]
    with Store(wb.store_path) as store:
        run_id = store.db["runs"].insert({
            "model": "demo-hasty", "challenge": "backwards", "status": "done", "verdict": "fail",
            "backend": "cpu", "device": "x86_64", "started_at": "2025-06-16T14:00:00.000Z", "duration_s": 3.0,
            "message": "decode_matches_full_attention: decode output differs from causal attention recomputed "
                       "from scratch: error 3.95 at step 2, sequence 1 of the fixed case (lengths [1, 3, 2])",
            "coverage": json.dumps(coverage), "prompt_version": "published",
        }).last_pk
        rows = [("adapter", "info", '"ok"', "null", "used plugin adapter"),
                ("forbidden_imports", "pass", "0", "0", ""),
                ("decode_matches_full_attention", "fail", "3.9476241611830907", "0.002", "decode output differs"),
                ("padding_isolated", "fail", "1.6609736254915244", "0.002", "padding rows change the output"),
                ("multi_token_causal", "info", "null", "null", "no multi-token path bound")]
        store.db["checks"].insert_all(
            {"run_id": run_id, "position": i, "name": n, "verdict": v, "value": val, "threshold": thr, "message": m}
            for i, (n, v, val, thr, m) in enumerate(rows))


def screen_text(app) -> str:
    return "\n".join("".join(seg.text for seg in strip) for strip in app.screen._compositor.render_strips())


async def open_checks_tab(app, pilot) -> DataTable:
    """demo-hasty/backwards's answer screen on its Checks tab: the table."""
    await settle(app, pilot)
    app.open_answer("demo-hasty", "backwards")
    await settle(app, pilot)
    await pilot.press("2")
    await settle(app, pilot)
    return app.screen.query_one("#checks-table", DataTable)


async def test_checks_rows_in_view_at_80x24_under_a_long_requirement_list(demo_wb):
    seed_long_run(demo_wb)
    app = BenchApp(demo_wb)
    async with app.run_test(size=(80, 24)) as pilot:
        table = await open_checks_tab(app, pilot)
        shown = screen_text(app)
        # the table's header and its highlighted row (the first failing check) are on screen
        assert "verdict" in shown, shown
        assert "decode_matches_full_attention" in shown.split("verdict", 1)[1], shown
        assert table.region.height >= 3 and table.region.bottom <= 24 - 1  # above the footer
        # the requirement list is still all there: its pane scrolls
        summary = str(app.screen.query_one("#run-summary", Static).render())
        assert all(words.split()[0] in summary for _, words in REQUIREMENTS)
    assert app.errors == []


async def test_first_highlighted_check_is_the_first_failing_one(demo_wb):
    seed_long_run(demo_wb)
    app = BenchApp(demo_wb)
    async with app.run_test(size=(140, 45)) as pilot:
        table = await open_checks_tab(app, pilot)
        assert table.cursor_row == 2
        detail = str(app.screen.query_one("#check-detail", Static).render())
        assert detail.startswith("decode_matches_full_attention")
        assert "3.9476241611830907" in detail  # the detail keeps the whole number
        cells = [str(c) for c in table.get_row_at(0)]
        assert cells[2] == "ok" and cells[3] == ""  # not '"ok"' and 'null'
        assert [str(c) for c in table.get_row_at(2)][2:4] == ["3.95", "0.002"]
        shown = screen_text(app)
        assert '"ok"' not in shown and "null" not in shown
    assert app.errors == []


def test_check_cell_reads_values_as_words():
    assert check_cell('"ok"') == "ok"
    assert check_cell("null") == "" and check_cell(None) == "" and check_cell("") == ""
    assert check_cell("3.9476241611830907") == "3.95"
    assert check_cell("0.0") == "0" and check_cell("9") == "9"
    assert check_cell("3.3e-16") == "3.3e-16"
    assert check_cell("true") == "yes"
    assert check_cell("[1, 3]") == "[1, 3]"
    assert check_cell("1.8x") == "1.8x"  # stored as plain text: kept


async def test_a_check_failed_for_another_reason_shows_no_passing_figure(demo_wb):
    """A row stored with a figure within its threshold although the check failed (its
    dtype was wrong) shows no value or threshold, and the detail says why."""
    with Store(demo_wb.store_path) as store:
        run_id = store.db["runs"].insert({"model": "demo-hasty", "challenge": "backwards", "status": "done",
                                          "verdict": "fail", "backend": "cpu", "duration_s": 1.0}).last_pk
        store.db["checks"].insert_all([
            {"run_id": run_id, "position": 0, "name": "float32", "verdict": "fail", "value": "1.02e-07",
             "threshold": "0.0001", "message": "float32 inputs must give float32 outputs, got y=float64"},
            {"run_id": run_id, "position": 1, "name": "huge_mean", "verdict": "fail", "value": "0.0107",
             "threshold": "1e-06", "message": "inaccurate"}])
    app = BenchApp(demo_wb)
    async with app.run_test(size=(80, 24)) as pilot:
        table = await open_checks_tab(app, pilot)
        assert [str(c) for c in table.get_row_at(0)][2:4] == ["—", "—"]
        assert [str(c) for c in table.get_row_at(1)][2:4] == ["0.0107", "1e-06"]  # its figure is what failed
        detail = str(app.screen.query_one("#check-detail", Static).render())
        assert "within its threshold 0.0001: not what failed" in detail and "float64" in detail
    assert app.errors == []
