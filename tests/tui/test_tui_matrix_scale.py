"""The matrix's faster paths show what the plain ones did:
cells rendered without Rich's layout passes, rows cut to the visible columns,
filters and sorts from facts computed once per load, and the palette's index."""
from __future__ import annotations

import itertools
import os
import random

from benchtui.store.queries import Cell, ChallengeInfo, Matrix
from benchtui.tui.app import BenchApp
from benchtui.tui.glyphs import VERDICTS
from benchtui.tui.screens.matrix import FILTERS, SORTS, MatrixScreen, cell_text, not_passing
from benchtui.tui.widgets.matrix_table import MatrixTable
from rich.text import Text
from settling import settle
from textual.widgets import DataTable


def synthetic_matrix(n_models: int = 12, n_challenges: int = 30, seed: int = 3) -> Matrix:
    rng = random.Random(seed)
    models = [f"model-{i:02d}" for i in range(n_models)]
    challenges = [ChallengeInfo(f"c{i:03d}", f"Challenge {rng.choice('zyxabc')}{i}", "", i) for i in range(n_challenges)]
    m = Matrix(models, challenges)
    letters = [None, "A", "A-", "B+", "B", "C", "D", "F"]
    for model, ch in itertools.product(models, challenges):
        if rng.random() < 0.1:
            continue  # no folder
        status = "no_answer" if rng.random() < 0.05 else "answer"
        verdict = "no_answer" if status == "no_answer" else rng.choice(list(VERDICTS) + ["not_run"])
        m.cells[model, ch.id] = Cell(model, ch.id, 1, status, verdict, None, rng.choice(letters),
                                     rng.choice(letters), rng.choice([0, 0, 0, 2]))
    return m


def naive_ordered(m: Matrix, sort_mode: str, filter_mode: str):
    """The matrix's ordering as it was computed before (per key, cell by cell)."""
    from benchtui.grading.grades import POINTS

    models = list(m.models)
    if sort_mode == "passes":
        models.sort(key=lambda x: -sum(m.cell(x, c.id).verdict == "pass" for c in m.challenges))
    elif sort_mode == "grade":
        def mean(model):
            pts = [POINTS[g] for c in m.challenges
                   if (g := m.cell(model, c.id).human or m.cell(model, c.id).judge) in POINTS]
            return -(sum(pts) / len(pts)) if pts else 1.0
        models.sort(key=mean)
    challenges = list(m.challenges)
    if sort_mode == "name":
        challenges.sort(key=lambda c: c.label.lower())
    if filter_mode == "not passing":
        challenges = [c for c in challenges if any(not_passing(m.cell(x, c.id)) for x in models)]
    elif filter_mode == "ungraded":
        challenges = [c for c in challenges
                      if any(m.cell(x, c.id).status == "answer" and not m.cell(x, c.id).human for x in models)]
    return models, challenges


def test_facts_order_and_filter_as_the_cell_by_cell_rules_did():
    m = synthetic_matrix()
    screen = MatrixScreen()
    screen.matrix = m
    for sort_mode, filter_mode in itertools.product(SORTS, FILTERS):
        screen.sort_mode, screen.filter_mode = sort_mode, filter_mode
        assert screen.ordered() == naive_ordered(m, sort_mode, filter_mode), (sort_mode, filter_mode)


def test_cells_that_read_the_same_share_one_text():
    a = Cell("m1", "c1", 1, "answer", "pass", 3, "A", "B", 0)
    b = Cell("m2", "c9", 2, "answer", "pass", 4, "A", "B", 0)
    c = Cell("m2", "c9", 2, "answer", "pass", 4, "A", "B", 5)
    assert cell_text(a) is cell_text(b)
    assert cell_text(c) is not cell_text(a) and str(cell_text(c)) == str(cell_text(a)) + "⚠"


async def test_fast_cell_rendering_is_richs_segment_for_segment(demo_wb):
    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        table = app.screen.query_one(MatrixTable)
        texts = {str(cell_text(Cell("m", "c", 1, "answer", v, None, h, j, w))): cell_text(
            Cell("m", "c", 1, "answer", v, None, h, j, w))
            for v in list(VERDICTS) + ["not_run"] for h in (None, "A", "B-") for j in (None, "C+") for w in (0, 1)}
        cells = list(texts.values()) + [Text("Flash Attn Forward"), Text("")]
        compared = 0
        for cell, row in itertools.product(cells, (0, 1)):
            for cursor, hover in ((False, False), (True, False), (False, True)):
                for column in (0, 1):  # the fixed column and a model's
                    key = next(iter(table.rows))
                    col = table.ordered_columns[column].key
                    table._data[key][col] = cell
                    width = max(cell.cell_len, 3) + 2 * table.cell_padding + 1
                    base = table._get_row_style(row, table.rich_style)
                    fixed = column < table.fixed_columns
                    comp, post = table._get_styles_to_render_cell(
                        False, False, fixed, hover, cursor, table.show_cursor, table._show_hover_cursor,
                        table.cursor_foreground_priority == "css", table.cursor_background_priority == "css")
                    fast = table._render_fast(cell, width, base + comp, post)
                    from rich.padding import Padding
                    from rich.segment import Segment
                    from textual.renderables.styled import Styled

                    options = app.console_options.update_dimensions(width, 1).update(no_wrap=True)
                    rich = app.console.render_lines(Styled(Padding(cell, (0, table.cell_padding)),
                                                           pre_style=base + comp, post_style=post), options)
                    assert fast == rich, (str(cell), row, cursor, hover, column)
                    merged = table._render_fast(cell, width, base + comp, post, merged=True)
                    assert merged == [list(Segment.simplify(line)) for line in rich], (str(cell), "merged")
                    compared += 1
        assert compared > 100
        # texts of one shape (same length, style and spans: "✗", "!" and "C" are all bold red)
        # are styled once and sliced after: the ones compared after the first are those
        shapes = {(len(c.plain), c.cell_len, c.style, tuple(c._spans)) for c in cells}
        assert len(shapes) < len(cells) - 10
    assert app.errors == []


def without_meta(strip) -> list[tuple]:
    """A painted line as (text, style) runs, the styles without metadata, adjacent
    runs of one style merged (without metadata, neighbouring cells may share one)."""
    from rich.segment import Segment

    plain = [Segment(seg.text, seg.style.clear_meta_and_links() if seg.style else None) for seg in strip]
    return [(seg.text, seg.style) for seg in Segment.simplify(plain)]


async def _painted(workbench, steps) -> list:
    """Each line of the matrix (text and styles) after each step of keys."""
    app = BenchApp(workbench)
    out = []
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        table = app.screen.query_one(MatrixTable)
        for keys in steps:
            for key in keys:
                await pilot.press(key)
            await settle(app, pilot)
            # styles without their metadata: Textual puts the cell's row and column on
            # each segment, the matrix finds them from the mouse's position (compared below)
            out.append([without_meta(table.render_line(y)) for y in range(table.size.height)])
            out.append((table.cursor_coordinate, [r.key.value for r in table.ordered_rows],
                        [(c.key.value, c.width) for c in table.ordered_columns], app.screen.current()))
    assert app.errors == []
    return out


async def _clicked(workbench, clicks) -> list:
    """The cursor, hover and selections after each click (content offsets in the table)."""
    app = BenchApp(workbench)
    out, selected = [], []
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        table = app.screen.query_one(MatrixTable)
        app.open_answer = lambda model, challenge: selected.append((model, challenge))  # a second click on a cell
        for step in clicks:
            if isinstance(step, str):
                await pilot.press(step)
            else:
                await pilot.hover(MatrixTable, offset=step)
                await pilot.click(MatrixTable, offset=step)
            await settle(app, pilot)
            out.append((step, table.cursor_coordinate, table.hover_coordinate, table._show_hover_cursor,
                        tuple(selected), table.scroll_offset))
    assert app.errors == []
    return out


async def test_matrix_mouse_lands_where_textuals_metadata_says(demo_wb, monkeypatch):
    """Clicks and hovers find the cell from the mouse's position: the same cell as
    Textual's per-segment metadata finds, sideways scrolled, fixed column and
    the space after the last column included; a second click opens the cell."""
    from benchtui.store.database import Store
    from benchtui.workbench.scan import scan_workbench

    for model in [f"a-long-model-name-{i}" for i in range(8)]:
        (demo_wb.models_dir / model / "fuse").mkdir(parents=True)
        (demo_wb.models_dir / model / "fuse" / "a.py").write_text("x = 1\n")
    with Store(demo_wb.store_path) as store:
        scan_workbench(demo_wb, store)
    clicks = [(30, 3), (30, 3), (2, 5), (25, 2), (79, 4), "end", (40, 6), (40, 6), "right", "right", "right",
              "right", (45, 4), (10, 4), (5, 0), (60, 1)]
    fast = await _clicked(demo_wb, clicks)
    for name in ("_render_cell", "_render_line_in_row"):
        monkeypatch.setattr(MatrixTable, name, getattr(DataTable, name))
    for name in ("_on_click", "_on_mouse_move"):  # handlers: Textual calls each class's own
        monkeypatch.delattr(MatrixTable, name)
    plain = await _clicked(demo_wb, clicks)
    assert any(step[4] for step in fast), "no click opened a cell"
    assert fast == plain


async def test_matrix_paints_what_textuals_own_datatable_paints(demo_wb, monkeypatch):
    """Every line of the matrix, styles included, after sorts, filters, cursor
    moves and scrolls sideways, is the line Textual's own DataTable code paints."""
    from benchtui.store.database import Store
    from benchtui.workbench.scan import scan_workbench

    for model in [f"a-long-model-name-{i}" for i in range(8)]:
        (demo_wb.models_dir / model / "fuse").mkdir(parents=True)
        (demo_wb.models_dir / model / "fuse" / "a.py").write_text("x = 1\n")
    with Store(demo_wb.store_path) as store:
        scan_workbench(demo_wb, store)
    steps = [[], ["s"], ["s", "f"], ["down", "down", "right"], ["right"] * 12, ["end", "left"], ["f", "s", "home"]]
    fast = await _painted(demo_wb, steps)
    for name in ("_render_cell", "_update_dimensions", "_render_line_in_row", "_get_row_style", "render_lines",
                 "ordered_columns"):
        monkeypatch.setattr(MatrixTable, name, getattr(DataTable, name))

    def add_rows_one_by_one(table, rows):
        for key, cells in rows:
            table.add_row(*cells, key=key)

    monkeypatch.setattr(MatrixTable, "add_rows_at_once", add_rows_one_by_one)
    plain = await _painted(demo_wb, steps)
    assert len(fast) == 2 * len(steps) and all(lines for lines in fast)
    for i, (ours, theirs) in enumerate(zip(fast, plain)):
        assert ours == theirs, steps[i // 2]


def test_palette_index_finds_every_word_in_any_order_then_fuzzily_capped_in_priority_order():
    from benchtui.tui.palette_index import PaletteIndex

    rows = [("model", f"model-{m:02d}", None, None) for m in range(50)]
    rows += [("challenge", None, f"task_{c:03d}", None) for c in range(200)]
    rows += [("answer", f"model-{m:02d}", f"task_{c:03d}", None) for m in range(50) for c in range(200)]
    rows += [("transcript" if rel.endswith(".jsonl") else "file", f"model-{m:02d}", f"task_{c:03d}", rel)
             for m in range(50) for c in range(200) for rel in ("NOTES.md", "session.jsonl", "solution.py")]
    index = PaletteIndex(rows)
    lowered = [(t, t.lower()) for t in index.texts]  # lowered once: 41,000 texts, 19 queries

    def naive(query: str, limit: int = 50) -> list[str]:
        # every word in the text (each word narrows the last word's hits, in order)
        words = query.lower().split()
        hits = lowered
        for w in words:
            hits = [(t, low) for t, low in hits if w in low]
        if not hits:
            import re
            hits = lowered
            for p in [re.compile(".*?".join(map(re.escape, w))) for w in words]:
                hits = [(t, low) for t, low in hits if p.search(low)]
        return [t for t, _ in hits[:limit]]

    for query in ["model-4 task_19", "task_19 MODEL-4", "notes model-07 task_123", "session", "m", "task_1999",
                  "mdl07tsk123", "zzz", "model-49 solution task_199", "challenge task_00",
                  # fuzzy with several words (the longest leads), a word nothing holds, regex characters
                  "tsk123 mdl07", "m07 sltn t12", "mdl07 zq", "zq mdl07", "m.d", "t[1", "a^b", "n\\", "ss ss"]:
        assert [t.text for t in index.search(query)] == naive(query), query
    assert len(index.search("model")) == 50  # capped
    assert index.search("model-07/task_123 ")[0].text == "answer model-07/task_123"
    hit = index.search("model-07 task_123 session")[0]
    assert (hit.action, hit.model, hit.challenge, hit.relpath) == ("transcript", "model-07", "task_123", "session.jsonl")
    assert index.search("   ") == []


async def test_back_on_the_matrix_reloads_only_when_the_store_changed(demo_wb):
    from benchtui.grading.grades import set_grade

    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        matrix = app.screen
        loads = []
        real = matrix.reload
        matrix.reload = lambda *a, **k: (loads.append(a), real(*a, **k))
        await pilot.press("question_mark")
        await settle(app, pilot)
        await pilot.press("escape")
        await settle(app, pilot)
        assert loads == []  # help came and went: nothing written, nothing reloaded
        app.open_answer("demo-hasty", "backwards")
        await settle(app, pilot)
        with app.open_store() as store:  # another connection writes a grade meanwhile
            set_grade(store, "demo-hasty", "backwards", "D", grader="reviewer")
        await pilot.press("escape")
        await settle(app, pilot)
        assert loads and matrix.matrix.cell("demo-hasty", "backwards").human == "D"
    assert app.errors == []


async def test_leaderboard_panes_are_their_tables_rendered_once_at_their_width(demo_wb):
    """The leaderboard's panes hold their tables' lines, rendered off the UI thread at
    the pane's width: what a Static would paint, without re-rendering per layout pass."""
    from benchtui.tui.screens.leaderboard import RenderedPane
    from rich.console import Console

    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(app, pilot)
        app.open_leaderboard()
        await settle(app, pilot)
        screen = app.screen
        for pane in screen.query(RenderedPane):
            assert pane._strips is not None and pane.size.width == screen._shown_width
            console = Console(width=pane.size.width, color_system=None, file=open(os.devnull, "w"))  # noqa: SIM115 - the file stays open for the test's lifetime
            want = [segments_text(line) for line in console.render_lines(pane.shown, pad=True, new_lines=False)]
            assert [strip.text for strip in pane._strips] == want
            assert pane.size.height == len(want)  # its height is its line count
    assert app.errors == []


def segments_text(line) -> str:
    return "".join(seg.text for seg in line)


def test_a_first_frames_matrix_holds_the_first_challenges_cells_exactly(demo_wb):
    """load_matrix(first=k): every model and challenge, the first k challenges' cells
    exactly as the whole read has them, and nothing else; partial only when cut."""
    from benchtui.store.database import Store
    from benchtui.store.queries import load_matrix

    with Store(demo_wb.store_path) as store:
        whole = load_matrix(store)
        part = load_matrix(store, first=3)
        assert load_matrix(store, first=len(whole.challenges)) == whole  # nothing cut: not partial
    first = {c.id for c in whole.challenges[:3]}
    assert part.partial and not whole.partial
    assert part.models == whole.models and part.challenges == whole.challenges
    assert part.cells == {k: v for k, v in whole.cells.items() if k[1] in first}
    assert any(k[1] not in first for k in whole.cells)  # something was left out


def test_a_first_frames_matrix_reads_only_the_models_that_can_show(demo_wb):
    """load_matrix(first=k, width=w): only the cells of the first k challenges and
    of the models whose columns (name and two cells of padding at least) fit in
    w cells; every other cell is not read, and says so (is_read)."""
    from benchtui.store.database import Store
    from benchtui.store.queries import load_matrix, models_that_fit

    assert models_that_fit(["ab", "cde", "f"], 9) == ["ab", "cde"]  # 4 + 5 = 9 cells
    assert models_that_fit(["ab", "cde", "f"], 8) == ["ab"]
    assert models_that_fit(["a-long-name"], 3) == ["a-long-name"]  # the first column shows, cut
    assert models_that_fit(["ab", "cde"], 100) == ["ab", "cde"]
    with Store(demo_wb.store_path) as store:
        whole = load_matrix(store)
        first_model = whole.models[0]
        part = load_matrix(store, width=len(first_model) + 2)  # every challenge, one model
        window = load_matrix(store, first=3, width=len(first_model) + 2)
        assert load_matrix(store, width=1000) == whole  # every model fits: not partial
    assert part.partial and part.models == whole.models and part.challenges == whole.challenges
    assert part.cells == {k: v for k, v in whole.cells.items() if k[0] == first_model}
    first = {c.id for c in whole.challenges[:3]}
    assert window.cells == {k: v for k, v in whole.cells.items() if k[0] == first_model and k[1] in first}
    for model in whole.models:
        for ch in whole.challenges:
            assert window.is_read(model, ch.id) == (model == first_model and ch.id in first)
            assert whole.is_read(model, ch.id)
    assert any(k[0] != first_model for k in whole.cells)  # something was left out


async def test_a_partial_first_matrix_is_read_whole_before_sorting_or_filtering(demo_wb, monkeypatch):
    """The first frame may show a screenful of rows (the rest as "…"); a sort or a
    filter before the worker has read the rest reads it first, so it never sorts
    or filters on part of the matrix. Without the key, the worker completes it."""
    from benchtui.store.queries import MatrixPrefetch

    async def first_frame(reload_works: bool, keys: list[str]):
        app = BenchApp(demo_wb, scan_on_start=False)
        app.prefetched_matrix = MatrixPrefetch(demo_wb.store_path, first=2)
        with monkeypatch.context() as patch:
            if not reload_works:  # the worker never brings the rest
                patch.setattr(MatrixScreen, "reload", lambda self, rescan=False: None)
            return await _drive(app, keys)

    async def _drive(app, keys):
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(app, pilot)
            screen = app.screen
            table = screen.query_one(MatrixTable)
            shown_partial = screen.matrix.partial
            pending = sum(1 for row in table.ordered_rows for c in table.get_row(row.key)[1:] if c.plain == "…")
            for key in keys:
                await pilot.press(key)
            await settle(app, pilot)
            order = [r.key.value for r in table.ordered_rows]
            cols = [c.key.value for c in table.ordered_columns]
            return shown_partial, pending, screen.matrix, order, cols, app.errors

    partial, pending, matrix, _, _, errors = await first_frame(False, [])
    assert partial and pending > 0 and matrix.partial and errors == []  # "…" where cells are not read yet
    _, _, matrix, order, cols, errors = await first_frame(False, ["s", "f"])
    assert not matrix.partial and errors == []
    whole = await first_frame(True, ["s", "f"])
    assert (order, cols) == (whole[3], whole[4]) and not whole[2].partial
    _, _, matrix, *_ = await first_frame(True, [])
    assert not matrix.partial  # the worker read the rest after the first frame


async def test_cells_of_models_not_read_yet_show_pending_not_no_folder(demo_wb, monkeypatch):
    """A first frame read for a narrow window: the other models' cells say "…"
    (not read yet), never "no folder", until the worker has read them."""
    from benchtui.store.database import Store
    from benchtui.store.queries import MatrixPrefetch, load_matrix

    with Store(demo_wb.store_path) as store:
        whole = load_matrix(store)
    first_model = whole.models[0]
    app = BenchApp(demo_wb, scan_on_start=False)
    app.prefetched_matrix = MatrixPrefetch(demo_wb.store_path, width=len(first_model) + 2)
    monkeypatch.setattr(MatrixScreen, "reload", lambda self, rescan=False: None)  # the rest never comes
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        table = app.screen.query_one(MatrixTable)
        models = [c.key.value for c in table.ordered_columns][1:]
        for row in table.ordered_rows:
            for model, cell in zip(models, table.get_row(row.key)[1:]):
                if model == first_model:
                    assert cell.plain != "…"
                else:
                    assert cell.plain == "…", (model, row.key.value, cell.plain)
    assert app.errors == []
