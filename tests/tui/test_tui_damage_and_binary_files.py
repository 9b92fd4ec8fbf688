"""The dashboard: damaged store, binary and oversized transcripts,
screens that hide what they hold."""
from __future__ import annotations

from benchtui.tui.app import BenchApp
from settling import settle, wait_workers


async def test_tui_store_damage_found_mid_session_names_the_backup(demo_wb):
    import os

    from benchtui.store.database import Store

    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        assert app.errors == [] and not app.store_damaged
        path = demo_wb.store_path
        with Store(path, migrate=False) as store:  # every page in the main file, none in the WAL
            store.execute("pragma wal_checkpoint(truncate)")
        with open(path, "r+b") as fh:  # every page but the first (the schema) overwritten
            fh.seek(4096)
            fh.write(os.urandom(path.stat().st_size - 4096))
        app.open_answer("demo-careful", "backwards")
        await settle(app, pilot)
        assert app.is_running
        assert app.store_damaged, "damage found mid-session must stop every later write"
    damaged = [e for e in app.errors if "is damaged" in e]
    assert damaged, app.errors
    assert f"the store {path} is damaged (" in damaged[0] and "benchtui backup" in damaged[0], damaged[0]
    assert len(damaged) == 1 and damaged[0].startswith(f"loading the answer: the store {path} is damaged ("), damaged
    assert "benchtui backup" in damaged[0]


async def test_tui_binary_transcript_and_binary_file_are_named_not_printed(demo_wb):
    from benchtui.store.database import Store
    from benchtui.text.caps import BINARY_TEXT, BINARY_TRANSCRIPT
    from benchtui.tui.screens.transcript import TranscriptScreen
    from benchtui.workbench.scan import scan_workbench
    from textual.widgets import Static

    answer = demo_wb.models_dir / "demo-hasty" / "kv"
    (answer / "session.jsonl").write_bytes(b'{"type": "session"}\n\x00\x9c\xff\x00' * 50)
    (answer / "blob.py").write_bytes(b"x = 1\n\x00\x01\x02\x1b[2J")
    with Store(demo_wb.store_path) as store:
        scan_workbench(demo_wb, store)
    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        app.open_answer("demo-hasty", "kv", "blob.py")
        await settle(app, pilot)
        shown = " ".join(str(w.render()) for w in app.screen.query("#file-view-pane Static"))
        assert f"cannot show this file: {BINARY_TEXT}" in shown and "\x1b" not in shown
        await pilot.press("t")  # the binary session.jsonl is this answer's transcript
        await settle(app, pilot)
        assert isinstance(app.screen, TranscriptScreen)
        header = str(app.screen.query_one("#transcript-header", Static).render())
        assert f"session.jsonl: {BINARY_TRANSCRIPT}" in header


async def test_tui_matrix_notices_runs_written_by_another_process(demo_wb, monkeypatch):
    from benchtui.store.database import Store, now_iso
    from benchtui.tui import store_watch

    monkeypatch.setattr(store_watch, "WATCH_S", 0.1)
    app = BenchApp(demo_wb)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app, pilot)
        matrix = app.screen
        cell = next((m, c.id) for c in matrix.matrix.challenges for m in matrix.matrix.models
                    if matrix.matrix.cell(m, c.id).status == "answer" and matrix.matrix.cell(m, c.id).verdict != "pass")
        with Store(demo_wb.store_path) as store:  # what a `benchtui run` in another terminal writes
            store.db["runs"].insert({"model": cell[0], "challenge": cell[1], "status": "done", "verdict": "pass",
                                     "started_at": now_iso(), "finished_at": now_iso()})
        for _ in range(20):
            await pilot.pause(0.1)
            await wait_workers(app)
            if matrix.matrix.cell(*cell).verdict == "pass":
                break
        assert matrix.matrix.cell(*cell).verdict == "pass"
    assert app.errors == []


async def test_tui_matrix_keeps_the_scan_note_after_help(demo_wb):
    from textual.widgets import Static

    app = BenchApp(demo_wb, scan_on_start=True)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(app, pilot)
        await settle(app, pilot)
        status = lambda: str(app.screen.query_one("#matrix-status", Static).render())  # noqa: E731
        assert "indexed" in status() and "warning(s)" in status()
        await pilot.press("question_mark")
        await settle(app, pilot)
        await pilot.press("escape")
        await settle(app, pilot)
        assert "indexed" in status() and "warning(s)" in status()


async def test_tui_sort_by_grade_uses_judge_grades_when_no_human_graded(demo_wb):
    from benchtui.grading.grades import set_grade
    from benchtui.store.database import Store
    from textual.widgets import Static

    with Store(demo_wb.store_path) as store:
        store.execute("delete from grades")
        store.conn.commit()
        models = store.model_names()
        last = models[-1]
        for a in store.query("select model, challenge from answers where status = 'answer'"):
            set_grade(store, a["model"], a["challenge"], "A" if a["model"] == last else "C",
                      grader="Judge LLM", grader_kind="judge")
    app = BenchApp(demo_wb)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(app, pilot)
        matrix = app.screen
        while matrix.sort_mode != "grade":
            await pilot.press("s")
            await settle(app, pilot)
        assert matrix.ordered()[0][0] == last
        assert "sort: grade (human, else judge)" in str(matrix.query_one("#matrix-status", Static).render())
        await pilot.press("l")
        await settle(app, pilot)
        from benchtui.tui.screens.leaderboard import rankings_table

        title = str(rankings_table(app.screen.board).title)
        assert "a person's, else a judge's" in title and "judge)" in title


async def test_tui_answer_tabs_follow_keys_whatever_has_focus_and_remap(demo_wb, tmp_path):
    from benchtui.tui.screens.help import HelpScreen
    from textual.widgets import TabbedContent

    keys = tmp_path / "keys.toml"
    keys.write_text('[keys]\n"answer.tab" = "f1,f2,f3,f4,f5"\n')
    app = BenchApp(demo_wb, config_path=keys)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app, pilot)
        app.open_answer("demo-careful", "backwards")
        await settle(app, pilot)
        tabs = app.screen.query_one(TabbedContent)
        await pilot.press("f2")
        await pilot.pause()
        assert tabs.active == "tab-checks"
        app.screen.query_one("#checks-table").focus()
        await pilot.pause()
        await pilot.press("f4")
        await pilot.pause()
        assert tabs.active == "tab-runs"
        await pilot.press("question_mark")
        await settle(app, pilot)
        assert isinstance(app.screen, HelpScreen)
        shown = " ".join(str(w.render()) for w in app.screen.query("Static"))
        assert "Matrix:" not in shown
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("1")  # the digits are remapped away
        await pilot.pause()
        assert tabs.active == "tab-runs"
    assert app.errors == []


async def test_tui_answer_digits_switch_tabs_from_the_checks_table(demo_wb):
    from textual.widgets import TabbedContent

    app = BenchApp(demo_wb)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app, pilot)
        app.open_answer("demo-careful", "backwards")
        await settle(app, pilot)
        tabs = app.screen.query_one(TabbedContent)
        await pilot.press("2")
        await pilot.pause()
        app.screen.query_one("#checks-table").focus()
        await pilot.pause()
        await pilot.press("4")
        await pilot.pause()
        assert tabs.active == "tab-runs"


async def test_tui_transcript_wraps_to_the_width_left_by_the_scrollbar_at_first_open(demo_wb):
    """At 80 columns the first build wrapped to the width before the scrollbar
    appeared, and the character under the scrollbar was lost until `e`."""
    from benchtui.store.database import Store
    from benchtui.tui.screens.transcript import TranscriptScreen
    from benchtui.tui.widgets.transcript_view import TranscriptView
    from benchtui.workbench.scan import scan_workbench
    from tui_demo import pi_session

    (demo_wb.models_dir / "demo-careful" / "backwards" / "long-session.jsonl").write_text(pi_session(6, pad=2))
    with Store(demo_wb.store_path) as store:
        scan_workbench(demo_wb, store)
    app = BenchApp(demo_wb)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        app.open_transcript("demo-careful", "backwards", "long-session.jsonl")
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        view = screen.query_one(TranscriptView)
        assert view.show_vertical_scrollbar  # enough rows to scroll
        first = [r.text for r in view.rows]
        assert max(len(t) for t in first) <= view.scrollable_content_region.width
        screen.rebuild(keep=True)  # what `e` twice (or any later rebuild) lays out
        await pilot.pause()
        assert [r.text for r in view.rows] == first


async def test_tui_transcript_says_its_filter_and_recounts_hits(demo_wb):
    from textual.widgets import Input

    app = BenchApp(demo_wb)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app, pilot)
        app.open_transcript("demo-careful", "backwards", "review-session.jsonl")
        await settle(app, pilot)
        screen = app.screen
        assert screen.sub_title == "filter: all"
        await pilot.press("slash")
        await pilot.pause()
        screen.query_one("#transcript-search", Input).value = "layer"
        await pilot.press("enter")
        await settle(app, pilot)
        total = len(screen.hits)
        assert total > 1 and screen.sub_title.startswith("filter: all · /layer: hit 1/")
        while screen.filter_mode != "user turns":
            await pilot.press("f")
            await settle(app, pilot)
        assert screen.sub_title.startswith("filter: user turns · /layer: ")
        assert f"/{total}" not in screen.sub_title or len(screen.hits) == total
        assert f"{len(screen.hits)} hit(s)" in screen.sub_title


async def test_tui_grade_steps_make_one_row_and_a_note_is_on_top(demo_wb):
    from benchtui.store.database import Store
    from benchtui.tui.screens.grades import GradesScreen
    from textual.widgets import DataTable, Input

    app = BenchApp(demo_wb)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(app, pilot)
        app.push_screen(GradesScreen("demo-hasty", "backwards"))
        await settle(app, pilot)
        await pilot.press("b")
        await settle(app, pilot)
        await pilot.press("plus", "plus", "minus")  # B -> B+ -> A- -> B+
        await settle(app, pilot)
        await pilot.press("N")
        await pilot.pause()
        app.screen.query_one("#grade-note", Input).value = "reads the cache twice"
        await pilot.press("enter")
        await settle(app, pilot)
        hist = app.screen.query_one("#grade-history", DataTable)
        assert str(hist.get_row_at(0)[-1]) == "reads the cache twice"  # newest first: the note is in view
        assert hist.size.height >= 20  # the table takes the room below, not 8 rows above empty space
        # A read that began before the note was written, arriving last, must not hide it.
        app.screen.post_message(app.screen.Loaded([], [], [], seq=0))
        await settle(app, pilot)
        hist = app.screen.query_one("#grade-history", DataTable)
        assert str(hist.get_row_at(0)[-1]) == "reads the cache twice"
        await pilot.press("escape")
        await settle(app, pilot)
    with Store(demo_wb.store_path) as store:
        rows = store.query("select letter from grades g join graders r on r.id = g.grader_id "
                           "where model = 'demo-hasty' and challenge = 'backwards' and r.name = 'reviewer' order by g.id")
    assert [r["letter"] for r in rows] == ["B", "B+"]
    assert app.errors == []


async def test_tui_every_footer_keeps_quit_and_help_at_80_columns(demo_wb):
    from benchtui.tui.widgets.footer import KeysFooter

    app = BenchApp(demo_wb)
    opens = [lambda: None,
             lambda: app.open_answer("demo-careful", "backwards"),
             lambda: app.open_transcript("demo-careful", "backwards", "review-session.jsonl"),
             lambda: app.open_compare("demo-careful", "backwards"),
             lambda: app.open_grades("demo-careful", "backwards"),
             lambda: app.open_runs([("demo-careful", "backwards")], "answer"),
             lambda: app.open_leaderboard()]
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        for open_screen in opens:
            while len(app.screen_stack) > 1:
                app.pop_screen()
            await settle(app, pilot)
            open_screen()
            await settle(app, pilot)
            shown = set()
            for footer in app.screen.query(KeysFooter):  # every screen's: one line of text
                line = str(footer.render())
                shown |= {d for d in ("Quit", "Help") if d in line[:80] and footer.region.right <= 80}
            assert {"Quit", "Help"} <= shown, (type(app.screen).__name__, shown)
    assert app.errors == []


async def test_tui_matrix_legend_on_one_line_at_140_and_scan_note_whole_at_80(demo_wb):
    from textual.widgets import Static

    app = BenchApp(demo_wb, scan_on_start=True)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(app, pilot)
        await settle(app, pilot)
        assert app.screen.query_one("#legend", Static).size.height == 1
    app = BenchApp(demo_wb, scan_on_start=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await settle(app, pilot)
        status = app.screen.query_one("#matrix-status", Static)
        assert "warning(s)" in str(status.render()) and status.size.height == 2


async def test_tui_damage_found_by_the_first_rescan_stops_every_write(demo_wb):
    """A big store is checked by the rescan worker, not before the first frame:
    found damaged, the dashboard says so once, does not rescan, writes nothing."""
    import hashlib
    import os

    path = demo_wb.store_path
    with open(path, "r+b") as fh:
        fh.seek((path.stat().st_size // 2) // 4096 * 4096)
        fh.write(os.urandom(16 * 1024))
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    app = BenchApp(demo_wb, scan_on_start=True)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app, pilot)
        await settle(app, pilot)
        assert app.store_damaged and "benchtui backup" in app.store_damaged
        assert any("is damaged" in e for e in app.errors)
        app.open_grades("demo-careful", "backwards")
        await settle(app, pilot)
        await pilot.press("a")  # a grade: refused, not written
        await settle(app, pilot)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    wal = path.with_name(path.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0  # nor into its write-ahead log
    assert any("not saved" in e and "is damaged" in e for e in app.errors)


async def test_tui_matrix_status_says_the_store_is_damaged_once_the_notice_is_gone(demo_wb):
    """A store whose header is overwritten (a big store reaches the dashboard
    unchecked): the status line said "loading the store…" for good once the
    notice had gone."""
    path = demo_wb.store_path
    with open(path, "r+b") as fh:
        fh.write(b"X" * 31)
    app = BenchApp(demo_wb, scan_on_start=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await settle(app, pilot)
        app.clear_notifications()
        status = str(app.screen.query_one("#matrix-status").render())
        assert "loading" not in status and "the store is damaged (file is not a database)" in status, status
        assert app.store_damaged


async def test_tui_grades_screen_refuses_a_grade_where_the_folder_holds_no_answer(demo_wb):
    """demo-quitter/kv holds only its prompt: `benchtui grade set` refuses a grade
    there, and so does the grades screen (its judges' grades are still shown)."""
    from benchtui.store.database import Store
    from benchtui.tui.screens.grades import GradesScreen

    app = BenchApp(demo_wb, scan_on_start=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        app.push_screen(GradesScreen("demo-quitter", "kv"))
        await settle(app, pilot)
        await pilot.press("a")
        await pilot.press("plus")
        await settle(app, pilot)
        notices = [n.message for n in app._notifications]
        assert any("demo-quitter/kv holds no answer" in n and "nothing to grade" in n for n in notices), notices
        await pilot.press("escape")
        await settle(app, pilot)
    with Store(demo_wb.store_path) as store:
        assert store.query("select id from grades where model = 'demo-quitter' and challenge = 'kv'") == []
    assert app.errors == []
