"""The published-results screen on a laptop's terminal: with a 40-row deck, the
summary, the table (the annotation column in view) and the detail pane are each
on screen at 80x24, 100x30 and 120x40, the detail follows the cursor, and the
split between the table and the detail moves. The deck's results are made up
(the compare layer's output), so the test needs no deck on disk."""
from __future__ import annotations

import io
import os
import sys
from pathlib import Path

import pytest
from benchtui.decks import compare
from benchtui.records import verdicts
from benchtui.tui.app import BenchApp
from benchtui.tui.widgets.virtual_table import VirtualTable
from benchtui.tui.widgets.wrapped_text import WrappedText
from rich.console import Console
from textual.geometry import Region
from textual.widgets import Static

sys.path.insert(0, str(Path(__file__).parent))
from settling import settle  # noqa: E402

SIZES = [(80, 24), (100, 30), (120, 40)]
MODELS = ["claude_claude-fable-5", "codex_gpt-5.6-sol", "gemini_gemini-3.1-pro-preview", "qwen_qwen3.6-coder-plus",
          "kimi_kimi-k2.7-thinking"]
CHALLENGES = ["kbh_01_fp8_gemm", "kbh_02_kda_cutlass", "kbh_06_sonic_moe_swiglu", "kbh_07_w4a16_gemm",
              "kbh_08_paged_attention_decode", "kbh_09_topk_bitonic", "kbh_10_rmsnorm_fused", "kbh_11_grouped_gemm"]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


def deck_rows(n: int = 40) -> list[compare.Row]:
    rows = []
    for i in range(n):
        model, challenge = MODELS[i % len(MODELS)], CHALLENGES[i // len(MODELS) % len(CHALLENGES)]
        deck_pass = i % 4 != 3
        verdict = [verdicts.PASS, verdicts.FAIL, None, verdicts.PASS][i % 4]
        notes = [] if i % 3 else [{"verdict": "clean" if i % 2 else "memoised", "peak_fraction": 0.1 + i / 100,
                                   "summary": f"run {i}: the timing loop sees the output cached", "source": f"run{i}.yaml"}]
        rows.append(compare.Row(
            deck="kernelbench-hard", run_id=f"20260702_0550{i:02d}_{model}_{challenge[4:]}", model=model,
            challenge=challenge, problem=challenge[4:], deck_verdict="PASS" if deck_pass else "FAIL",
            deck_reason=None if deck_pass else "correctness: max abs diff 0.5 on shape 2",
            deck_figure=0.05 + i / 100, verdict=verdict, reason=None if verdict != verdicts.FAIL else "correct: fail on seed 42",
            figure=0.04 + i / 100 if verdict == verdicts.PASS else None, annotations=notes))
    return rows


def deck_data(rows: list[compare.Row]) -> dict:
    """What compare() returns for these rows: the summary per problem, the deck's own problems."""
    per: dict[str, list[compare.Row]] = {}
    for r in rows:
        per.setdefault(r.challenge, []).append(r)
    return {"overall": compare.summary(rows),
            "challenges": {c: {"problem": rs[0].problem, "deck": rs[0].deck, **compare.summary(rs)} for c, rs in per.items()},
            "answers": [r.to_dict() for r in rows], "disagreements": [], "annotated": [],
            "imports": [{"problems": [f"run {k} of {m} has no result file" for k, m in enumerate(MODELS[:3])]}]}


def detail(model: str, challenge: str) -> list[dict]:
    i = MODELS.index(model)
    return [{"run_id": r.run_id, "board_label": "KernelBench-Hard leaderboard", "board_peak_fraction": 0.2,
             "shapes": [{"idx": k, "label": f"{4096 >> k}×4096×4096", "ms": round(0.1 * (k + 1), 2), "tflops": 500 - 10 * k,
                         "gbps": 900, "frac": 0.3, "bound": "compute"} for k in range(4)],
             "annotations": [{"source": f"{r.run_id}.yaml", "verdict": "clean", "peak_fraction": 0.3,
                              "summary": f"{model} on {challenge}: a launch cache, not an output cache",
                              "quotes": [{"file": "solution.py", "lines": [10 + i, 14 + i], "label": "the cache's key",
                                          "text": "key = (x.shape, x.dtype)\nif key not in self.graphs:\n    capture()\n"}]}]}
            for r in deck_rows() if (r.model, r.challenge) == (model, challenge)]


@pytest.fixture
def deck(monkeypatch):
    rows = deck_rows()
    monkeypatch.setattr(compare, "compare", lambda store, **_: deck_data(rows))
    monkeypatch.setattr(compare, "published_detail", lambda store, model, challenge: detail(model, challenge))
    return rows


def on_screen(widget, screen) -> bool:
    region = widget.region
    return region.height > 0 and region.width > 0 and screen.region.contains_region(region)


def text_of(strips) -> str:
    return "\n".join("".join(seg.text for seg in strip) for strip in strips)


def shown(widget) -> str:
    """A widget's own lines, from its first (all of them: its virtual size)."""
    return text_of(widget.render_lines(Region(0, 0, widget.size.width, widget.virtual_size.height)))


def screen_rows(app) -> list[str]:
    """What the terminal shows now, row by row (as app.export_screenshot draws it)."""
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), record=True, color_system=None)
    console.print(app.screen._compositor.render_update(full=True))
    return console.export_text().splitlines()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_every_part_of_the_published_screen_is_on_screen(demo_wb, deck, size, tmp_path):
    app = BenchApp(demo_wb)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        app.open_published()
        await settle(app, pilot)
        screen = app.screen
        table = screen.query_one("#published-table", VirtualTable)
        assert table.row_count == 40
        for pane in ("#published-summary-pane", "#published-table", "#published-detail-pane"):
            assert on_screen(screen.query_one(pane), screen), (pane, screen.query_one(pane).region, size)
        assert table.region.height >= 4 and screen.query_one("#published-detail-pane").region.height >= 4
        assert "published results" in shown(screen.query_one("#published-summary", WrappedText))
        # the verdict columns up to the annotation fit the table's width, with no sideways scroll
        edge = sum(table.render_widths()[:6])
        assert edge <= table.scrollable_content_region.width, (edge, table.scrollable_content_region.width)
        assert "annotation" in shown(table)
        # the detail follows the cursor
        for row in (0, 7):
            table.move_cursor(row=row)
            await settle(app, pilot)
            head = shown(screen.query_one("#published-detail", Static)).splitlines()[0]
            assert deck[row].model in head and deck[row].challenge in head, (row, head)
        await pilot.press("down")
        await settle(app, pilot)
        text = str(screen.query_one("#published-detail", Static).render())
        assert f"{deck[8].model} / {deck[8].challenge}" in text and "annotation (" in text and "solution.py:" in text
        # the summary's last line and the detail's last line are in reach: each pane scrolls
        for pane_id, body_id in (("#published-summary-pane", "#published-summary"),
                                 ("#published-detail-pane", "#published-detail")):
            pane = screen.query_one(pane_id)
            pane.scroll_end(animate=False)
            await settle(app, pilot)
            last = [line.strip() for line in shown(screen.query_one(body_id)).splitlines() if line.strip()][-1]
            rows = screen_rows(app)[pane.region.y:pane.region.bottom]
            assert any(last in row for row in rows), (pane_id, last, rows)
        # as docs/dashboard.md shows it (BENCHTUI_SAVE_SCREENSHOTS=1 writes it there)
        screen.query_one("#published-summary-pane").scroll_home(animate=False)
        screen.query_one("#published-detail-pane").scroll_home(animate=False)
        table.move_cursor(row=2)
        await settle(app, pilot)
        folder = SCREENSHOTS if os.environ.get("BENCHTUI_SAVE_SCREENSHOTS") == "1" else tmp_path
        folder.mkdir(parents=True, exist_ok=True)
        saved = Path(app.save_screenshot(f"published-{size[0]}x{size[1]}.svg", str(folder)))
        assert saved.stat().st_size > 0
    assert app.errors == []


async def test_the_split_between_table_and_detail_moves(demo_wb, deck):
    app = BenchApp(demo_wb)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        app.open_published()
        await settle(app, pilot)
        screen = app.screen
        table, pane = screen.query_one("#published-table"), screen.query_one("#published-detail-pane")
        before = (table.region.height, pane.region.height)
        await pilot.press("plus")
        await settle(app, pilot)
        assert pane.region.height > before[1] and table.region.height < before[0]
        for _ in range(6):
            await pilot.press("minus")
        await settle(app, pilot)
        assert 4 <= pane.region.height < before[1] and table.region.height > before[0]
        assert on_screen(pane, screen) and on_screen(table, screen)
        # tab reaches each pane, to scroll it from the keyboard
        reached = []
        for _ in range(3):
            await pilot.press("tab")
            reached.append(app.focused.id if app.focused else None)
        assert set(reached) == {"published-table", "published-detail-pane", "published-summary-pane"}, reached
        # names are cut to the width: a wider terminal shows them whole
        table = screen.query_one("#published-table", VirtualTable)
        assert str(table.get_row_at(0)[0]) == "claude_c…fable-5"  # Text cells: a name is never read as markup
        await pilot.resize_terminal(120, 40)
        await settle(app, pilot)
        assert str(table.get_row_at(0)[0]) == "claude_claude-fable-5"
    assert app.errors == []


def test_names_are_cut_in_the_middle():
    from benchtui.tui.screens.published import fit

    assert fit("gemini_gemini-3.1-pro-preview", 14) == "gemini_…review"
    assert fit("kbh_01_fp8_gemm", 15) == "kbh_01_fp8_gemm"


async def test_a_big_deck_makes_cells_only_of_the_rows_in_view(demo_wb, monkeypatch):
    """600 runs: the table holds them all, but only the rows the terminal shows (and
    the cursor's) become cells, opening and after jumping to the last row."""
    from benchtui.tui.screens import published
    from benchtui.tui.widgets.virtual_table import VirtualTable

    rows = deck_rows(600)
    monkeypatch.setattr(compare, "compare", lambda store, **_: deck_data(rows))
    monkeypatch.setattr(compare, "published_detail", lambda store, model, challenge: detail(model, challenge))
    made = []
    real = published.row_cells
    monkeypatch.setattr(published, "row_cells", lambda r: made.append(r["run_id"]) or real(r))
    app = BenchApp(demo_wb)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        app.open_published()
        await settle(app, pilot)
        table = app.screen.query_one("#published-table", VirtualTable)
        assert table.row_count == 600
        assert 0 < len(made) <= 24, len(made)
        await pilot.press("ctrl+end")
        await settle(app, pilot)
        assert table.cursor_row == 599 and rows[599].run_id in made
        assert len(made) <= 48, len(made)
        text = str(app.screen.query_one("#published-detail", Static).render())
        assert f"{rows[599].model} / {rows[599].challenge}" in text and rows[599].run_id in text, text
        # the last row is drawn where the table says it is, scrolled into view
        line = screen_rows(app)[table.region.y + table.row_region(599).y - round(table.scroll_y)]
        assert all(str(cell) in line for cell in table.get_row_at(599)[:5]), line
        # a page up moves the cursor a page (the rows under the header) and keeps it in view
        page = table.scrollable_content_region.height - table.header_height
        await pilot.press("pageup")
        await settle(app, pilot)
        assert table.cursor_row == 599 - page
        assert round(table.scroll_y) <= table.cursor_row < round(table.scroll_y) + page
    assert app.errors == []


async def test_the_comparison_is_worked_out_once_per_store_change(demo_wb, deck, monkeypatch):
    """Opening the screen again with nothing written since shows the comparison worked out
    the first time; any write to the store (here by another connection), or ctrl+r, works
    it out anew. An answer's view is kept apart from the whole deck's."""
    from benchtui.store.database import Store

    calls = []
    monkeypatch.setattr(compare, "compare", lambda store, **kw: calls.append(kw) or deck_data(deck))
    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)

        async def open_and_leave(model=None, challenge=None) -> int:
            app.open_published(model, challenge)
            await settle(app, pilot)
            listed = app.screen.query_one("#published-table", VirtualTable).row_count
            assert listed == sum(model is None or r.model == model for r in deck)
            await pilot.press("escape")
            await settle(app, pilot)
            return len(calls)

        assert await open_and_leave() == 1
        assert await open_and_leave() == 1  # nothing written: the kept comparison
        assert await open_and_leave(deck[0].model, deck[0].challenge) == 2  # another view
        assert await open_and_leave() == 1 + 1  # the whole deck's still kept beside it
        with Store(demo_wb.store_path) as store, store.conn:  # a run finished in another terminal
            store.execute("insert into runs (model, challenge, status, verdict) values ('elsewhere', 'x', 'done', 'pass')")
        assert await open_and_leave() == 3
        app.open_published()
        await settle(app, pilot)
        await pilot.press("ctrl+r")
        await settle(app, pilot)
        assert len(calls) == 4
    assert app.errors == []
