"""Pilot tests: drive each screen's main flow on a copy of the demo workbench."""
from __future__ import annotations

from benchtui.grading.aggregates import leaderboard
from benchtui.grading.grades import current_grade
from benchtui.store.database import Store
from benchtui.tui.app import BenchApp
from fakes import like
from rich.console import Console
from settling import settle
from textual.widgets import DataTable, Static


def matrix_cell_text(app, model: str, challenge: str) -> str:
    table = app.screen.query_one("#matrix", DataTable)
    return str(table.get_cell(challenge, model))


async def test_tui_matrix_shows_verdicts_and_opens_an_answer(demo_wb):
    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        table = app.screen.query_one("#matrix", DataTable)
        assert table.row_count >= 3 and len(table.columns) >= 4
        assert matrix_cell_text(app, "demo-careful", "backwards").startswith("✓ B+")  # pass, human B+, judge A
        assert "A" in matrix_cell_text(app, "demo-careful", "backwards")
        app.screen.focus_cell("demo-careful", "backwards")
        await pilot.press("enter")
        await settle(app, pilot)
        assert type(app.screen).__name__ == "AnswerScreen"
        title = str(app.screen.query_one("#answer-title", Static).render())
        assert "demo-careful / backwards" in title and "pass" in title
        checks = app.screen.query_one("#checks-table", DataTable)
        assert checks.row_count == 2  # matches_reference + speedup
        assert app.screen.current_file is not None  # a source file is shown
        await pilot.press("escape")
        assert type(app.screen).__name__ == "MatrixScreen"
    assert app.errors == []


async def test_tui_grading_a_cell_shows_in_the_matrix(demo_wb):
    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        app.screen.focus_cell("demo-hasty", "backwards")
        assert "B" not in matrix_cell_text(app, "demo-hasty", "backwards")
        before = app.screen.matrix
        await pilot.press("g")
        await settle(app, pilot)
        assert type(app.screen).__name__ == "GradesScreen"
        await pilot.press("b", "plus")  # overall is preselected: B, then B+
        await settle(app, pilot)
        await pilot.press("escape")
        await settle(app, pilot)
        assert matrix_cell_text(app, "demo-hasty", "backwards").split()[1] == "B+"
        assert app.screen.current() == ("demo-hasty", "backwards")  # the cursor survived the refresh
        # a read that began before the grade, posted last, does not take it back off
        app.screen.post_message(app.screen.Loaded(before, seq=0))
        await settle(app, pilot)
        assert matrix_cell_text(app, "demo-hasty", "backwards").split()[1] == "B+"
    with Store(demo_wb.store_path) as store:
        assert current_grade(store, "demo-hasty", "backwards", grader="reviewer").letter == "B+"
        rows = store.query("select letter from grades where model='demo-hasty' and challenge='backwards' order by id")
        assert [r["letter"] for r in rows] == ["B", "B+"]  # append-only: nothing overwritten
    assert app.errors == []


async def test_tui_blind_mode_hides_names_until_graded(demo_wb):
    from benchtui.tui.screens.grades import GradesScreen

    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        app.push_screen(GradesScreen("demo-careful", "beam_search", blind=True))
        await settle(app, pilot)
        # demo-careful/beam_search has a judge grade but no grade by "reviewer" on... it does (A-):
        screen = app.screen
        screen.mine.pop("overall", None)
        screen.refresh_view()
        title = str(screen.query_one("#grades-title", Static).render())
        assert "demo-careful" not in title
        judges = str(screen.query_one("#grades-dims", DataTable).get_cell("overall", "judges"))
        assert judges == "hidden"
        await pilot.press("a")
        await settle(app, pilot)
        title = str(screen.query_one("#grades-title", Static).render())
        assert "demo-careful" in title
        assert "Judge LLM" in str(screen.query_one("#grades-dims", DataTable).get_cell("overall", "judges"))
    assert app.errors == []


async def test_tui_transcript_folds_filters_search_and_turns(demo_wb):
    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        app.open_transcript("demo-careful", "backwards", "review-session.jsonl")
        await settle(app, pilot)
        screen = app.screen
        view = screen.query_one("#transcript-view")
        header = str(screen.query_one("#transcript-header", Static).render())
        assert "tool calls" in header and "$" in header and "failed" in header
        kinds = [r.kind for r in view.rows]
        assert "code" in kinds and "diff+" in kinds and "diff-" in kinds  # a write as code, an edit as a diff
        assert any(r.kind == "warn" for r in view.rows)  # the malformed line and its warning
        n_rows = len(view.rows)
        fold = next(i for i, r in enumerate(view.rows) if r.fold and "thinking" in r.text)
        view.move_to(fold)
        await pilot.press("enter")
        assert len(view.rows) > n_rows and any(r.kind == "thinking" for r in view.rows)
        await pilot.press("enter")
        assert len(view.rows) == n_rows
        # next user turn
        view.move_to(0)
        await pilot.press("right_square_bracket")
        assert view.rows[view.cursor].role == "user" and view.cursor > 0
        # search: hits inside folded tool output open their folds
        await pilot.press("slash")
        await pilot.press(*"AssertionError")
        await pilot.press("enter")
        assert len(screen.hits) == 3 and "AssertionError" in view.rows[view.cursor].text
        first = view.cursor
        await pilot.press("n")
        assert view.cursor != first
        # filter: user turns only
        await pilot.press("f", "f", "f", "f")
        assert screen.filter_mode == "user turns"
        assert {r.role for r in view.rows if r.kind == "header"} == {"user"}
    assert app.errors == []


async def test_tui_transcript_error_is_a_message_not_a_crash(demo_wb):
    answer = demo_wb.root / "models" / "demo-careful" / "backwards"
    (answer / "broken.jsonl").write_bytes(b"\x00\x01binary")
    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        app.open_transcript("demo-careful", "backwards", "broken.jsonl")
        await settle(app, pilot)
        header = str(app.screen.query_one("#transcript-header", Static).render())
        assert "broken.jsonl: binary file (NUL bytes), not a text transcript" in header, header
        assert app.is_running


async def test_tui_compare_side_by_side_unified_and_changes(demo_wb):
    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        app.open_compare("demo-careful", "backwards")
        await settle(app, pilot)
        screen = app.screen
        view = screen.query_one("#diff-view")
        assert screen.other == "demo-hasty"
        first = screen.pairs[0]
        assert first[0]["relpath"] == "layernorm.py" and first[1]["relpath"] == "layer_norm.py"
        assert view.diff is not None and view.diff.changes
        await pilot.press("n")
        assert view.cursor in view.diff.changes
        side_rows = len(view.rows)
        await pilot.press("u")
        assert view.unified and view.rows is view.diff.unified and len(view.rows) != side_rows
        assert "unified" in str(screen.query_one("#compare-bar", Static).render())
    assert app.errors == []


async def test_tui_leaderboard_shows_rankings_and_plot(demo_wb):
    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("l")
        await settle(app, pilot)
        plot = app.screen.query_one("#leader-plot", Static).render()
        assert "Grade distribution" in str(plot) and "█" in str(plot)
        console = Console(width=100, record=True, color_system=None)
        console.print(app.screen.query_one("#leader-rank").shown)  # what its lines were rendered from
        rank_lines = console.export_text().splitlines()
    with Store(demo_wb.store_path) as store:
        board = leaderboard(store)
    assert len(board.model_summaries) == 3
    rows = [next((i for i, line in enumerate(rank_lines) if f" {m.model} " in line), None)
            for m in board.model_summaries]
    assert None not in rows and rows == sorted(rows), rank_lines  # every model, in the board's order
    for m, row in zip(board.model_summaries, rows):
        cells = [cell.strip() for cell in rank_lines[row].split("│")[1:-1]]
        assert cells[:4] == [str(m.rank or "—"), m.model, m.band, str(m.graded)], cells
        assert cells[-1] == f"{m.passed}/{m.verified}", cells
    assert [m.rank for m in board.model_summaries][0] == 1  # the demo's graded model leads
    assert app.errors == []


async def test_tui_runs_live_progress_and_log(demo_wb, monkeypatch):
    import benchtui.runner.orchestrate as orchestrate
    from benchtui.runner.orchestrate import RunEvent

    seen = {}

    @like(orchestrate.run_answers)
    def fake_run_answers(workbench, pairs, *, backend="auto", on_event=None, cancel=None, **_):
        seen["pairs"], seen["backend"] = list(pairs), backend
        with Store(workbench.store_path) as store:
            for i, (m, c) in enumerate(pairs):
                on_event(RunEvent("started", m, c, None, None, "", i, len(pairs)))
                run_id = store.db["runs"].insert({"model": m, "challenge": c, "status": "done", "verdict": "pass",
                                                  "message": "ok", "stdout": "hello from the child"}).last_pk
                on_event(RunEvent("finished", m, c, run_id, "pass", "ok", i + 1, len(pairs)))
        return []

    monkeypatch.setattr(orchestrate, "run_answers", fake_run_answers)
    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        app.screen.focus_cell("demo-careful", "backwards")
        await pilot.press("r")
        await settle(app, pilot)
        screen = app.screen
        assert type(screen).__name__ == "RunsScreen"
        screen.query_one("#runs-scope").value = "column"
        await pilot.press("s")
        await settle(app, pilot)
        assert all(m == "demo-careful" for m, _ in seen["pairs"]) and len(seen["pairs"]) >= 3
        table = screen.query_one("#runs-live", DataTable)
        states = {str(table.get_cell(f"q:{m}/{c}", "state")) for m, c in seen["pairs"]}
        assert states == {"finished"}
        assert "finished" in str(screen.query_one("#runs-progress", Static).render())
        table.move_cursor(row=0)
        await pilot.press("enter")
        await pilot.pause()
        assert any("hello from the child" in line for line in screen.query_one("#runs-log").lines)
    assert app.errors == []


async def test_tui_keys_are_remappable_from_the_config_file(demo_wb, tmp_path, monkeypatch):
    config = tmp_path / "keys.toml"
    config.write_text('[keys]\n"matrix.leaderboard" = "L"\n"nope.unknown" = "z"\n', encoding="utf-8")
    app = BenchApp(demo_wb, config_path=config)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await pilot.press("l")
        await settle(app, pilot)
        assert type(app.screen).__name__ == "MatrixScreen"  # l no longer opens it
        await pilot.press("L")
        await settle(app, pilot)
        assert type(app.screen).__name__ == "LeaderboardScreen"
    assert app.key_config.keymap == {"matrix.leaderboard": "L"}


async def test_tui_help_palette_and_quit(demo_wb):
    app = BenchApp(demo_wb)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert type(app.screen).__name__ == "HelpScreen"
        await pilot.press("escape")
        app.open_answer("demo-hasty", "fuse")
        await settle(app, pilot)
        app.jump_matrix(model="demo-quitter", challenge="fuse")  # what a palette hit calls
        await settle(app, pilot)
        assert app.screen.current() == ("demo-quitter", "fuse")
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0


async def test_tui_a_handler_bug_becomes_a_notification(demo_wb):
    app = BenchApp(demo_wb)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)

        def boom() -> None:
            raise RuntimeError("kaboom")

        app.screen.action_cycle_sort = boom  # type: ignore[method-assign]
        await pilot.press("s")
        await pilot.pause()
        assert app.is_running
        assert any("kaboom" in e for e in app.errors)


async def test_tui_leaderboard_comes_back_rendered_unless_the_store_changed(demo_wb):
    """Leaving the leaderboard and coming back shows the board already rendered
    (no worker: at 50 models it is ~1 s of CPU); a grade written meanwhile, by
    this app or another connection, makes it compute the board again."""
    from benchtui.grading.grades import set_grade
    from benchtui.tui.screens.leaderboard import LeaderboardScreen

    computed = []
    original = LeaderboardScreen.compute

    def counting(self, *args, **kwargs):
        computed.append(args)
        return original(self, *args, **kwargs)

    LeaderboardScreen.compute = counting
    try:
        app = BenchApp(demo_wb)
        async with app.run_test(size=(100, 40)) as pilot:
            await settle(app, pilot)

            async def visit() -> str:
                await pilot.press("l")
                await settle(app, pilot)
                text = str(app.screen.query_one("#leader-plot", Static).render())
                await pilot.press("escape")
                await settle(app, pilot)
                return text

            first = await visit()
            assert len(computed) == 1
            assert await visit() == first and len(computed) == 1  # kept: nothing written
            with Store(demo_wb.store_path) as other:  # another connection writes a grade
                set_grade(other, "demo-careful", "backwards", "F", grader="someone")
            third = await visit()
            assert len(computed) == 2 and third != first  # the new F shows in the distribution
            set_grade(app.store, "demo-careful", "kv", "F", grader="someone")  # the app's own connection
            await visit()
            assert len(computed) == 3
    finally:
        LeaderboardScreen.compute = original
    assert app.errors == []
