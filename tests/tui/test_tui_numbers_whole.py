"""A number is shown whole or not at all, at any width: the Checks tab's values and
thresholds, a transcript entry's cost, the Runs screen's messages (which use the
width there is, not a fixed sixty characters)."""
from __future__ import annotations

import re

import pytest
from benchtui.store.database import Store
from benchtui.transcripts.model import Entry, Usage
from benchtui.tui.app import BenchApp
from benchtui.tui.transcript_rows import build_rows
from benchtui.tui.widgets.fitted_table import Column, fit_widths
from settling import settle
from textual.widgets import DataTable

NUMBER = re.compile(r"\d[\d.]*(?:e[-+]?\d*)?")
CHECKS = [  # name, verdict, value, threshold, message
    ("forbidden_imports", "pass", "0", "0", "none of torch, tensorflow, jax, autograd, mlx imported"),
    ("eps_far_from_default", "pass", "1.4779e-16", "1e-06", "y 6.99e-17, dx 1.48e-16, dgamma 1.2e-16, dbeta 0"),
    ("huge_mean_tiny_variance", "fail", "0.01071836531585452", "1e-06",
     "inaccurate on rows with a huge mean and tiny variance: y 8.84e-03, dx 1.07e-02 (worst dgamma)"),
    ("float32_results_accurate_to_the_tolerance", "pass", "1.11e-07", "0.0001", "y 6.3e-08, dx 6.6e-08"),
    ("speed_8x512x1024_float32", "info", "0.182", "null",
     "speedup 0.18x: answer 513.515 ms (IQR 2.1 ms), reference 93.2 ms (IQR 0.5 ms) over 30 trials"),
]
RUN_MESSAGE = ("huge_mean_tiny_variance: inaccurate on rows with a huge mean and tiny variance: y 8.84e-03, "
               "dx 1.07e-02, dgamma 1.07e-02, dbeta 0.00e+00 (worst dgamma), and three more checks failed")


def seed_run(wb) -> None:
    with Store(wb.store_path) as store:
        run_id = store.db["runs"].insert({
            "model": "demo-hasty", "challenge": "backwards", "status": "done", "verdict": "fail", "backend": "cpu",
            "device": "x86_64", "started_at": "2025-06-16T14:00:00.000Z", "duration_s": 3.0,
            "message": RUN_MESSAGE}).last_pk
        store.db["checks"].insert_all(
            {"run_id": run_id, "position": i, "name": n, "verdict": v, "value": val, "threshold": thr, "message": m}
            for i, (n, v, val, thr, m) in enumerate(CHECKS))


def table_lines(table: DataTable) -> list[str]:
    return [table.render_line(y).text for y in range(table.size.height)]


def numbers_in(text: str) -> list[str]:
    return NUMBER.findall(text)


@pytest.mark.parametrize("size", [(80, 24), (140, 45)])
async def test_checks_tab_shows_each_value_and_threshold_whole(demo_wb, size):
    seed_run(demo_wb)
    app = BenchApp(demo_wb)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        app.open_answer("demo-hasty", "backwards")
        await settle(app, pilot)
        await pilot.press("2")
        await settle(app, pilot)
        table = app.screen.query_one("#checks-table", DataTable)
        assert table.max_scroll_x == 0  # nothing hidden past the right edge
        lines = table_lines(table)
        for name, _, value, threshold, message in CHECKS:
            row = next(line for line in lines if line.strip().startswith(name[:8]))
            cells = row.split()
            for raw in (value, threshold):
                if raw != "null":
                    shown = f"{float(raw):.3g}"
                    assert shown in cells, (name, shown, row)
            # every number the row shows is one of its own, whole (not 1e-0 for 1e-06)
            whole = set(numbers_in(" ".join([name, f"{float(value):.3g}", threshold, message])))
            assert set(numbers_in(row)) <= whole, row
        await pilot.press("4")  # the answer's run history: its seconds whole too
        await settle(app, pilot)
        history = app.screen.query_one("#history-table", DataTable)
        assert history.max_scroll_x == 0
        row = next(line for line in table_lines(history) if "fail" in line)
        assert row.split()[-1] == "3.0" or "3.0 " in row, row
    assert app.errors == []


@pytest.mark.parametrize("width", [40, 78, 138])
def test_a_transcript_entry_header_keeps_its_cost_whole(width):
    entry = Entry(0, 7, "assistant", model="demo-careful-1", timestamp=1_750_000_000.0,
                  usage=Usage(input=4, output=290, cache_read=10_400), cost=0.0099, latency_s=4.0)
    rows = [r for r in build_rows([entry], width, set()) if r.kind.startswith("header")]
    assert rows[0].kind == "header" and all(r.kind == "header+" for r in rows[1:])
    assert all(len(r.text) <= width for r in rows)
    words = " ".join(r.text for r in rows).split()
    assert "$0.0099" in words and "4.0s" in words and "10,400" in words


@pytest.mark.parametrize("width", [80, 140])
async def test_runs_screen_messages_use_the_width_there_is(demo_wb, width):
    seed_run(demo_wb)
    app = BenchApp(demo_wb)
    async with app.run_test(size=(width, 30)) as pilot:
        await settle(app, pilot)
        app.open_runs([("demo-hasty", "backwards")])
        await settle(app, pilot)
        table = app.screen.query_one("#runs-table", DataTable)
        assert table.max_scroll_x == 0
        row = next(line for line in table_lines(table) if "demo-hasty" in line)
        shown = row.split("✗ fail", 1)[1].strip()
        assert RUN_MESSAGE.startswith(shown.rstrip("…")), shown
        if width == 140:  # the room to the right is used: more than the old sixty characters
            assert len(shown) > 60, shown
        assert set(numbers_in(shown)) <= set(numbers_in(RUN_MESSAGE))
    assert app.errors == []


def test_columns_give_way_message_first_and_figures_never():
    columns = (Column("check", shrink=True, floor=8), Column("value"), Column("threshold"),
               Column("message", shrink=True, fill=True, floor=12, optional=True))
    rows = [("speed_8x512x1024_float32", "1.48e-16", "1e-06", "y 6.99e-17, dx 1.48e-16, dgamma 1.2e-16")]
    natural = fit_widths(columns, rows, None)
    assert natural == [24, 8, 9, 39]
    assert fit_widths(columns, rows, 200) == [24, 8, 9, 200 - 24 - 8 - 9 - 8]  # the message takes the rest
    assert fit_widths(columns, rows, 70) == [24, 8, 9, 70 - 24 - 8 - 9 - 8]  # the message shrinks first
    assert fit_widths(columns, rows, 52) == [24, 8, 9, None]  # narrower than its floor: the message left out
    assert fit_widths(columns, rows, 40) == [17, 8, 9, None]  # then the name is cut
    assert fit_widths(columns, rows, 20)[1:3] == [8, 9]  # too narrow even so: figures keep their width


async def test_runs_screen_fits_80_columns_with_an_interrupted_run_of_a_long_challenge(demo_wb):
    """"interrupted" and "compile error" widen their columns: the names give way
    too, so the message is cut with an ellipsis, not at the screen's edge."""
    with Store(demo_wb.store_path) as store:
        store.db["runs"].insert({
            "model": "demo-careful", "challenge": "flash_attention_bwd", "status": "interrupted",
            "verdict": "interrupted", "backend": "cpu", "device": "x86_64", "started_at": "2025-06-16T14:00:00.000Z",
            "duration_s": 5.0, "message": "stopped by the user after 5.0 s"})
        store.db["runs"].insert({
            "model": "demo-hasty", "challenge": "ternary_training", "status": "done", "verdict": "compile_error",
            "backend": "cpu", "device": "x86_64", "started_at": "2025-06-16T14:01:00.000Z", "duration_s": 2.0,
            "message": "quantize_group_scale: a group's level is 7.48 (relative) away from its mean"})
    app = BenchApp(demo_wb)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        app.open_runs([("demo-careful", "flash_attention_bwd")])
        await settle(app, pilot)
        table = app.screen.query_one("#runs-table", DataTable)
        assert table.max_scroll_x == 0
        row = next(line for line in table_lines(table) if "quantize" in line)
        assert row.rstrip().endswith("…") and "quantize_" in row, row
    assert app.errors == []
