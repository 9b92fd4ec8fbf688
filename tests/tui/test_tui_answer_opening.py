"""Opening an answer from the matrix.

The answer screen is built once and kept; the worker reads the answer and its
main file and highlights it (its first rows before the screen shows, the rest
after); the screen shows once it is filled. These check that what it shows is
what it showed before (the same highlighting as TextArea.code_editor, every
panel filled, nothing left from the answer before), that a big file does not
hold the screen up, and that a file that vanished or is not UTF-8 is said so.
"""
from __future__ import annotations

import asyncio
import gc
import itertools

from benchtui.tui.app import BenchApp
from benchtui.tui.screens.answer import AnswerScreen
from benchtui.tui.widgets.code_view import CodeView, prepare_code
from settling import settle
from textual.app import App
from textual.widgets import DataTable, Static, TextArea, Tree


def tree_text(tree: Tree) -> str:
    out = []

    def walk(node):
        for child in node.children:
            out.append(str(child.label))
            walk(child)

    walk(tree.root)
    return "\n".join(out)


def pane_text(screen) -> str:
    return " ".join(str(w.render()) for w in screen.query("#file-view-pane Static"))


class Reference(App):
    """Textual's own code editor over ``text``: what the file view looked like before."""

    AUTO_FOCUS = None

    def __init__(self, text: str, size: tuple[int, int] | None = None) -> None:
        super().__init__()
        self.text, self.view_size = text, size

    def compose(self):
        ref = TextArea.code_editor(self.text, language="python", read_only=True, id="ref")
        if self.view_size:
            ref.styles.width, ref.styles.height = self.view_size
        yield ref


def normalised(highlights: dict) -> dict:
    """Highlights per row, by name in order of first use (tree-sitter's order of the
    nodes of one name varies from run to run, and draws the same)."""
    out = {}
    for row, spans in highlights.items():
        if spans:
            names = [name for name, _ in itertools.groupby(s[2] for s in spans)]
            out[row] = [(name, sorted((s[0], -1 if s[1] is None else s[1]) for s in spans if s[2] == name))
                        for name in dict.fromkeys(names)]
    return out


async def reference_lines(text: str, size: tuple[int, int], rows: int, view_size: tuple[int, int] | None = None,
                          scroll_end: bool = False) -> tuple[list, dict]:
    """The first ``rows`` lines Textual's code editor draws for ``text`` (at ``view_size``),
    and its highlight map."""
    app = Reference(text, view_size)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        ref = app.query_one("#ref", TextArea)
        if scroll_end:
            ref.scroll_end(animate=False, immediate=True)
            await pilot.pause()
        return [list(ref.render_line(y)) for y in range(rows)], dict(ref._highlights)


async def test_answer_screen_shows_its_main_file_highlighted_as_before_and_every_panel(demo_wb):
    # beam_search.py (102 lines) is longer than a 30-row terminal's first rows (40): its
    # first rows are highlighted before the screen shows, the rest after
    text = (demo_wb.models_dir / "demo-careful" / "beam_search" / "beam_search.py").read_text()
    assert text.count("\n") > 40
    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        app.open_answer("demo-careful", "beam_search")
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, AnswerScreen)
        view = screen.query_one("#file-view", CodeView)
        assert view.text == text and view.language == "python" and view.read_only
        assert view.highlighted_rows is None, "the rest of the highlighting came after the first rows"
        assert "beam_search.py" in str(screen.query_one("#file-title", Static).render())
        # drawn as Textual's code editor draws it, at the top and at the end (the view does
        # not have the focus; the reference neither)
        rows = view.size.height
        lines, highlights = await reference_lines(text, (100, 30), rows, tuple(view.outer_size))
        assert [list(view.render_line(y)) for y in range(rows)] == lines
        assert normalised(view._highlights) == normalised(highlights)
        view.scroll_end(animate=False, immediate=True)
        await pilot.pause()
        end = await reference_lines(text, (100, 30), rows, tuple(view.outer_size), scroll_end=True)
        assert [list(view.render_line(y)) for y in range(rows)] == end[0]
        # everything else the screen shows
        title = str(screen.query_one("#answer-title", Static).render())
        assert "demo-careful / beam_search" in title and len(title) > len("demo-careful / beam_search  "), title
        files = tree_text(screen.query_one("#file-tree", Tree))
        for name in ("beam_search.py", "test_beam_search.py", "NOTES.md", "PROMPT.md"):
            assert name in files, files
    assert app.errors == []


async def test_answer_screen_fills_checks_runs_and_grades(demo_wb):
    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        app.open_answer("demo-careful", "backwards")
        await settle(app, pilot)
        screen = app.screen
        title = str(screen.query_one("#answer-title", Static).render())
        assert "demo-careful / backwards" in title and "pass" in title, title
        files = tree_text(screen.query_one("#file-tree", Tree))
        for name in ("layernorm.py", "test_layernorm.py", "NOTES.md", "session.jsonl"):
            assert name in files, files
        assert screen.query_one("#checks-table", DataTable).row_count > 0
        assert "run #" in str(screen.query_one("#run-summary", Static).render())
        assert str(screen.query_one("#check-detail", Static).render()).strip()
        assert screen.query_one("#history-table", DataTable).row_count > 0
        assert str(screen.query_one("#grade-panel", Static).render()).strip()
    assert app.errors == []


async def test_kept_answer_screen_shows_the_next_answer_and_nothing_of_the_last(demo_wb):
    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        app.open_answer("demo-careful", "backwards")
        await settle(app, pilot)
        first = app.screen
        await pilot.press("2")  # the Checks tab
        await settle(app, pilot)
        await pilot.press("escape")
        await settle(app, pilot)
        app.open_answer("demo-careful", "beam_search")
        await settle(app, pilot)
        screen = app.screen
        assert screen is first, "the answer screen is kept and reused"
        assert screen.model == "demo-careful" and screen.challenge == "beam_search"
        assert "demo-careful / beam_search" in str(screen.query_one("#answer-title", Static).render())
        files = tree_text(screen.query_one("#file-tree", Tree))
        assert "beam_search.py" in files and "layernorm.py" not in files, files
        assert screen.query_one("#answer-tabs").active == "tab-file"  # not the tab left open last time
        view = screen.query_one("#file-view", CodeView)
        text = (demo_wb.models_dir / "demo-careful" / "beam_search" / "beam_search.py").read_text()
        assert view.text == text and view.scroll_offset.y == 0
        assert "beam_search.py" in str(screen.query_one("#file-title", Static).render())
        # an answer opened from a screen above the kept one: a new screen, the kept one untouched
        app.open_answer("demo-careful", "backwards")
        await settle(app, pilot)
        assert app.screen is not first and app.screen.challenge == "backwards"
        assert first.challenge == "beam_search"
    assert app.errors == []


async def test_a_big_file_shows_at_once_plain_then_highlighted_off_the_screens_thread(demo_wb, monkeypatch):
    """Textual's TextArea.code_editor parsed and highlighted 1 MB twice on the UI
    thread (seconds). Here the plain text shows first, the highlighting is made in
    a worker (held there until the test has seen the screen answer a key), and
    tree-sitter is queried a chunk at a time, since it holds the GIL while it runs.
    How long the screen is held is a figure for bench/tui.py, not asserted here."""
    import threading

    from benchtui.store.database import Store
    from benchtui.tui.screens import answer as answer_module
    from benchtui.tui.widgets import code_view
    from benchtui.workbench.scan import scan_workbench
    from textual.document._syntax_aware_document import SyntaxAwareDocument

    answer = demo_wb.models_dir / "demo-careful" / "backwards"
    unit = (answer / "layernorm.py").read_text()
    big = (unit * (1024 * 1024 // len(unit) + 1))[: 1024 * 1024]
    (answer / "big.py").write_text(big)
    with Store(demo_wb.store_path) as store:
        scan_workbench(demo_wb, store)

    release = threading.Event()
    prepared = []  # (highlighted?, on the UI thread?) for each preparation of big.py
    real_prepare = answer_module.prepare_view

    def held_prepare(relpath, text, highlight=True, first_rows=None):
        if text == big:
            prepared.append((highlight, threading.current_thread() is threading.main_thread()))
            if highlight:
                release.wait(120)
        return real_prepare(relpath, text, highlight, first_rows)

    queries = []  # (rows queried, on the UI thread?) for each tree-sitter query
    real_query = SyntaxAwareDocument.query_syntax_tree

    def counted_query(self, query, start_point=None, end_point=None):
        rows = (end_point[0] if end_point else self.line_count) - (start_point[0] if start_point else 0)
        queries.append((rows, threading.current_thread() is threading.main_thread()))
        return real_query(self, query, start_point, end_point)

    monkeypatch.setattr(answer_module, "prepare_view", held_prepare)
    monkeypatch.setattr(SyntaxAwareDocument, "query_syntax_tree", counted_query)

    def shown_view():
        views = app.screen.query("#file-view") if isinstance(app.screen, AnswerScreen) else []
        view = views.first() if views else None
        return view if isinstance(view, CodeView) and view.text == big else None

    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        app.open_answer("demo-careful", "backwards", "big.py")
        try:
            for _ in range(6000):  # the plain text, while the highlighting is held in its worker
                await asyncio.sleep(0.01)
                if shown_view() is not None:
                    break
            view = shown_view()
            assert view is not None and view.language is None, "its plain text came first"
            view.focus()
            await pilot.press("pagedown")  # the screen answers keys meanwhile
            await pilot.pause()
            assert view.scroll_offset.y > 0 and not release.is_set()
        finally:
            release.set()
        for _ in range(6000):
            await asyncio.sleep(0.01)
            if shown_view() is not None and shown_view().language == "python":
                break
        view = app.screen.query_one("#file-view", CodeView)
        assert view.language == "python" and view.text == big, "highlighted in the end"
        assert view._highlights, "with tree-sitter's highlights"
    assert prepared and not any(on_ui for _, on_ui in prepared), prepared
    assert (True, False) in prepared and (False, False) in prepared
    big_rows = big.count("\n")
    assert sum(rows for rows, _ in queries) >= big_rows, "every row queried"
    assert max(rows for rows, _ in queries) <= code_view.CHUNK_ROWS, "a chunk at a time"
    assert not any(on_ui for _, on_ui in queries), "no query on the UI thread"
    assert app.errors == []


async def test_vanished_and_non_utf8_files_are_said_so(demo_wb):
    answer = demo_wb.models_dir / "demo-careful" / "backwards"
    (answer / "NOTES.md").write_bytes("caf\u00e9 in latin-1: ".encode() + b"caf\xe9\n")
    (answer / "layernorm.py").unlink()  # the main file, gone since the scan
    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        app.open_answer("demo-careful", "backwards")
        await settle(app, pilot)
        shown = pane_text(app.screen)
        assert "layernorm.py is no longer on disk" in shown and "rescans" in shown, shown
        assert "Traceback" not in shown and "Errno" not in shown
        app.screen.show_file("NOTES.md")
        await settle(app, pilot)
        shown = pane_text(app.screen)
        assert "NOTES.md" in shown and "not UTF-8" in shown, shown
        syntax = app.screen.query_one("#file-view").query_one(Static).content  # rich's Syntax, as before
        assert syntax.code == "café in latin-1: caf\ufffd\n", syntax.code
    assert app.errors == []


async def test_an_answer_folder_that_vanished_is_said_so(demo_wb):
    import shutil

    shutil.rmtree(demo_wb.models_dir / "demo-careful" / "backwards")
    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        app.open_answer("demo-careful", "backwards")
        await settle(app, pilot)
        assert isinstance(app.screen, AnswerScreen)
        shown = pane_text(app.screen)
        assert "is no longer on disk" in shown, shown
    assert app.errors == []


def test_prepared_code_is_what_textual_highlights():
    text = 'x = "a\r\nb"\r\nclass C:\r\n    """doc\r\n    string"""\r\n    def f(self): return 1  # é\r\n'
    prepared = prepare_code(text, "python")
    lines, highlights = asyncio.run(reference_lines(text, (60, 10), 6))
    assert prepared.document.lines == text.split("\r\n")
    assert normalised(prepared.highlights) == normalised(highlights)
    first = prepare_code(text * 20, "python", first_rows=4)
    whole = prepare_code(text * 20, "python")
    assert first.highlighted_rows == 4
    assert {r: s for r, s in normalised(first.highlights).items() if r < 4} == \
        {r: s for r, s in normalised(whole.highlights).items() if r < 4}
    assert prepare_code(text, None).language is None and not prepare_code(text, None).highlights


async def test_the_collector_runs_between_keys_and_is_given_back(demo_wb):
    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        app.collect_when_idle()
        assert not gc.isenabled() and gc.get_freeze_count() > 0
        await pilot.press("down")
        garbage = []
        for _ in range(3000):
            cycle: list = []
            cycle.append(cycle)
            garbage.append(cycle)
        del garbage, cycle
        assert app._collect_if_idle() is None, "not right after a key"
        app._last_input -= app.GC_IDLE_S
        assert app._collect_if_idle() == 1
        assert gc.get_count()[0] < app.GC_MIN_PENDING
    assert gc.isenabled() and gc.get_freeze_count() == 0


async def test_a_kept_answer_screen_shows_in_one_whole_frame(demo_wb):
    # Textual draws a pushed screen three times over (its layout, the repaint its resume
    # asks for, the repaint the covered screen forwards), each written whole: the kept
    # answer screen draws once (and small updates after, if any)
    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        app.open_answer("demo-careful", "backwards")
        await settle(app, pilot)
        await pilot.press("escape")
        await settle(app, pilot)
        frames = []
        display = app._display

        def counting(screen, renderable):
            if isinstance(screen, AnswerScreen) and renderable is not None:
                chops = getattr(renderable, "chops", None)  # a ChopsUpdate: what changed, per line
                frames.append(30 if chops is None else sum(1 for line in chops if any(line.values())))
            return display(screen, renderable)

        app._display = counting
        app.open_answer("demo-careful", "beam_search")
        await settle(app, pilot)
        await asyncio.sleep(0.3)
        await settle(app, pilot)
        app._display = display
        assert isinstance(app.screen, AnswerScreen) and app.screen.challenge == "beam_search"
        whole = [n for n in frames if n >= 30]  # frames that rewrite every line of the 30-line terminal
        assert len(whole) == 1, frames
    assert app.errors == []


async def test_grade_tab_keeps_a_scored_grade_apart_from_its_grader(demo_wb):
    """A judge's score with its letter ("86 (B)") is as wide as the grade column
    was: the grader's name ran into it ("86 (B)Kimi")."""
    from benchtui.grading.grades import set_grade

    app = BenchApp(demo_wb)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        set_grade(app.store, "demo-careful", "backwards", "86", grader="Kimi K2.6", grader_kind="judge")
        set_grade(app.store, "demo-careful", "backwards", "B+", grader="DeepSeek V4 Pro", grader_kind="judge")
        app.open_answer("demo-careful", "backwards")
        await settle(app, pilot)
        panel = str(app.screen.query_one("#grade-panel", Static).render())
        assert "86 (B)  Kimi K2.6" in panel and "B+      DeepSeek V4 Pro" in panel, panel
    assert app.errors == []
