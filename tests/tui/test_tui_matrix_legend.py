"""The matrix legend explains every glyph the matrix can draw: each answer
verdict, a verdict it does not know, the scan-warning mark and the "not read
yet" cell; on screen it lists what the matrix shows."""
from __future__ import annotations

from benchtui.records.verdicts import ANSWER_VERDICTS
from benchtui.store.database import Store
from benchtui.store.queries import Cell
from benchtui.tui.app import BenchApp
from benchtui.tui.glyphs import legend
from benchtui.tui.screens.matrix import _PENDING, cell_text
from settling import wait_workers
from textual.widgets import DataTable, Static

# every verdict a cell can carry: engine/store/queries.load_matrix's, and one from a newer version
MATRIX_VERDICTS = sorted(ANSWER_VERDICTS | {"running", "a_verdict_from_a_newer_version"})


def glyphs_of(text: str) -> set[str]:
    """A cell's verdict glyph (its first character) and the marks after it (its
    grade letters are explained as grades)."""
    return {text[0]} | {ch for ch in text[1:] if not ch.isalnum() and ch not in " +-"} if text else set()


def test_every_glyph_a_cell_can_draw_is_in_the_full_legend():
    full = legend().plain
    for verdict in MATRIX_VERDICTS:
        for warnings in (0, 2):
            cell = Cell("m", "c", 1, "answer", verdict, 1, "B+", "A-", warnings)
            for glyph in glyphs_of(cell_text(cell).plain):
                assert glyph in full, (verdict, glyph, full)
    assert _PENDING.plain in full
    assert "B+" in full and "A-" in full  # the grades' two styles


def test_no_verdict_glyph_reads_as_a_grade():
    """A cell is "glyph grade judge-grade": a glyph that is a grade's letter ("C" for a
    compile error beside "A  B-") reads as one more grade; colour alone is no cue."""
    from benchtui.grading.grades import LETTERS
    from benchtui.tui.glyphs import UNKNOWN_GLYPH, VERDICTS

    starts = {letter[0] for letter in LETTERS}
    for verdict, (glyph, _, _) in VERDICTS.items():
        assert glyph not in starts and glyph.upper() not in starts, (verdict, glyph)
    assert UNKNOWN_GLYPH not in starts


def test_a_legend_for_some_verdicts_explains_each_of_them():
    for verdict in MATRIX_VERDICTS:
        cell = cell_text(Cell("m", "c", 1, "answer", verdict, 1, None, None, 0))
        shown = legend({verdict}).plain
        glyph = cell.plain[0]
        assert glyph in shown, (verdict, shown)
        # the glyph is followed by its label, never by another entry's
        label = shown.split(glyph, 1)[1].split()[0]
        assert label.replace("_", " ").startswith(verdict.replace("_", " ").split()[0][:4]), (verdict, shown)


def screen_glyphs(table: DataTable) -> set[str]:
    out: set[str] = set()
    for row in range(table.row_count):
        for cell in table.get_row_at(row)[1:]:
            out |= glyphs_of(str(cell))
    return out


async def test_the_legend_on_screen_explains_every_glyph_on_the_matrix(demo_wb):
    with Store(demo_wb.store_path) as store:
        for model, challenge, status, verdict in (("demo-careful", "fuse", "done", "partial"),
                                                  ("demo-hasty", "fuse", "interrupted", None),
                                                  ("demo-careful", "kv", "done", "missing_dependency"),
                                                  ("demo-hasty", "kv", "done", "a_verdict_from_a_newer_version")):
            store.db["runs"].insert({"model": model, "challenge": challenge, "status": status, "verdict": verdict,
                                     "backend": "cpu", "started_at": "2025-06-16T10:00:00.000Z"})
    app = BenchApp(demo_wb)
    for size in ((80, 24), (140, 45)):
        async with app.run_test(size=size) as pilot:
            for _ in range(3):
                await pilot.pause()
                await wait_workers(app)
            table = app.screen.query_one("#matrix", DataTable)
            shown = str(app.screen.query_one("#legend", Static).render())
            drawn = screen_glyphs(table)
            assert {"◐", "∉", "?"} <= drawn  # the seeded verdicts are on the matrix
            for glyph in drawn:
                assert glyph in shown, (glyph, shown)
            assert "∉ missing dependency" in shown or "∉ missing dep" in shown
            assert "? a_verdict_from_a_newer_version" in shown
            legend_widget = app.screen.query_one("#legend", Static)
            from rich.text import Text  # every line of it in view: none cut by the pane's height

            lines = Text(shown).wrap(app.console, legend_widget.content_region.width)
            assert legend_widget.content_region.height >= len(lines), (size, shown)
        app = BenchApp(demo_wb)
