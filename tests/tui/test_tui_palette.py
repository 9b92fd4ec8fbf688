"""ctrl+p: benchtui's own jump palette (tui/widgets/jump_palette.py), through Textual's pilot."""
from __future__ import annotations

import inspect
import sqlite3

from benchtui.tui.app import BenchApp
from benchtui.tui.widgets.jump_palette import JumpInput, JumpList, JumpPalette, search
from settling import settle
from textual.widget import Widget


def palette_of(app) -> JumpPalette:
    return app.screen.query_one(JumpPalette)


def texts(palette: JumpPalette) -> list[str]:
    return [hit.text for hit in palette.hits]


def shown(palette: JumpPalette) -> list[str]:
    """What the list shows: each option's prompt, its lines joined."""
    listing = palette.query_one(JumpList)
    return [str(listing.get_option_at_index(i).prompt) for i in range(listing.option_count)]


async def open_palette(app, pilot) -> JumpPalette:
    await pilot.press("ctrl+p")
    await settle(app, pilot)
    palette = palette_of(app)
    assert palette.is_open and palette.visible
    assert isinstance(app.focused, JumpInput)
    return palette


async def test_ctrl_p_opens_the_palette_on_the_first_targets_and_the_system_commands(demo_wb):
    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        assert not app.screen.query(JumpPalette)  # mounted the first time it opens
        palette = await open_palette(app, pilot)
        assert not app.screen_stack[1:], app.screen_stack  # no screen pushed: an overlay on the matrix
        found = texts(palette)
        assert found[:3] == ["model demo-careful", "model demo-hasty", "model demo-quitter"]
        assert "challenge kv" in found and "answer demo-hasty/kv" in found
        assert {"Theme", "Quit", "Keys", "Screenshot"} <= set(found)  # Textual's system commands
        assert "Maximize" in found  # about the table underneath, not the palette's input
        await pilot.press(*"maxi")
        assert texts(palette)[0] == "Maximize"
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.screen.maximized is app.screen.query_one("#matrix")
        palette = await open_palette(app, pilot)
        assert any(line.startswith("model demo-careful\njump to the model's column") for line in shown(palette))
        assert palette.query_one(JumpList).highlighted == 0
    assert app.errors == []


async def test_words_in_any_order_fuzzy_fallback_and_highlighted_letters(demo_wb):
    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        palette = await open_palette(app, pilot)
        await pilot.press(*"kv demo-hasty")  # searched as each key lands, no settling needed
        spaced = texts(palette)
        assert spaced and all("demo-hasty/kv" in t for t in spaced), spaced
        assert spaced[0] == "answer demo-hasty/kv"
        prompt = palette.hits[0].prompt
        marked = {i for span in prompt.spans if "underline" in str(span.style) for i in range(span.start, span.end)}
        text = prompt.plain
        assert {text.index("kv"), text.index("kv") + 1} <= marked and text.index("demo-hasty") in marked
        for _ in "kv demo-hasty":
            await pilot.press("backspace")
        await pilot.press(*"demo-hasty/kv")
        assert set(texts(palette)) <= set(spaced) and texts(palette)
        index = palette.index
        assert texts(palette) == [h.text for h in search(app, index, "demo-hasty/kv", app.screen)]
        # letters in order when no word is found as it is (the index's fuzzy fallback)
        fuzzy = [h.text for h in search(app, index, "dmhsty kvcach", app.screen)]
        assert fuzzy and all("demo-hasty/kv" in t for t in fuzzy), fuzzy
        assert [h.text for h in search(app, index, "demo-hasty zzz", app.screen)] == []
        palette.query_one(JumpInput).value = "demo-hasty zzz"
        await pilot.pause()
        assert palette.hits == [] and shown(palette) == ["nothing matches"]
        await pilot.press("enter")  # nothing to run
        await pilot.pause()
        assert palette.is_open and type(app.screen).__name__ == "MatrixScreen"
    assert app.errors == []


async def test_enter_on_a_model_jumps_the_matrix_cursor_to_its_column(demo_wb):
    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        table = app.screen.query_one("#matrix")
        assert app.screen.current()[0] != "demo-quitter"
        palette = await open_palette(app, pilot)
        await pilot.press(*"model quitter")
        assert texts(palette)[0] == "model demo-quitter"
        await pilot.press("enter")
        await settle(app, pilot)
        assert not palette.is_open and not palette.visible
        assert app.screen.current()[0] == "demo-quitter"
        assert app.focused is table and not table.held_focus
    assert app.errors == []


async def test_enter_on_an_answer_opens_it_and_keys_move_the_highlight(demo_wb):
    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        palette = await open_palette(app, pilot)
        await pilot.press(*"hasty kv")
        listing = palette.query_one(JumpList)
        assert texts(palette)[:2] == ["answer demo-hasty/kv", "file demo-hasty/kv/NOTES.md"]
        await pilot.press("down", "down", "up")
        assert listing.highlighted == 1
        await pilot.press("pagedown")
        assert listing.highlighted == len(palette.hits) - 1
        await pilot.press("pageup")
        assert listing.highlighted == 0
        matrix = app.screen
        closed_under: list[str] = []
        original_close = palette.close

        def close(*args, **kwargs):
            if palette.is_open:
                closed_under.append(type(app.screen).__name__)
            return original_close(*args, **kwargs)

        palette.close = close
        await pilot.press("enter")
        await settle(app, pilot)
        # it stayed until the answer covered it: the matrix was not drawn without it first
        assert closed_under == ["AnswerScreen"]
        assert type(app.screen).__name__ == "AnswerScreen"
        assert (app.screen.model, app.screen.challenge) == ("demo-hasty", "kv")
        assert not palette.is_open  # closed under the answer, as its screen was covered
        await pilot.press("escape")
        await settle(app, pilot)
        assert app.screen is matrix and not palette.is_open
        assert app.focused is matrix.query_one("#matrix")
    assert app.errors == []


async def test_a_jump_that_opens_nothing_still_closes_the_palette(demo_wb, monkeypatch):
    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        monkeypatch.setattr(app, "open_answer", lambda *args, **kwargs: app.notify("no such answer"))
        monkeypatch.setattr(JumpPalette, "COVER_WAIT_S", 0.05)
        palette = await open_palette(app, pilot)
        await pilot.press(*"hasty kv", "enter")
        await pilot.pause(0.2)
        await settle(app, pilot)
        assert type(app.screen).__name__ == "MatrixScreen"
        assert not palette.is_open


async def test_a_click_runs_the_option_under_the_mouse(demo_wb):
    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        palette = await open_palette(app, pilot)
        await pilot.press(*"hasty kv notes")
        assert texts(palette)[0] == "file demo-hasty/kv/NOTES.md"
        await pilot.click(JumpList, offset=(4, 1))  # below the list's top rule: the first option
        await settle(app, pilot)
        assert type(app.screen).__name__ == "AnswerScreen"
        assert app.screen.current_file == "NOTES.md"
    assert app.errors == []


async def test_escape_closes_it_and_the_focus_returns(demo_wb):
    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        table = app.screen.query_one("#matrix")
        before = app.screen.current()
        palette = await open_palette(app, pilot)
        assert table.held_focus and not table.has_focus  # it keeps its focused look underneath
        await pilot.press(*"model")
        await pilot.press("escape")
        await settle(app, pilot)
        assert not palette.is_open and not palette.visible
        assert app.focused is table and not table.held_focus
        assert app.screen.current() == before
        # opened again: an empty query, the first targets
        palette = await open_palette(app, pilot)
        assert palette.query_one(JumpInput).value == "" and texts(palette)[0] == "model demo-careful"
        # the focus taken elsewhere (tab) closes it, and the table looks blurred
        await pilot.press("tab")
        await settle(app, pilot)
        assert not palette.is_open and not table.held_focus
    assert app.errors == []


async def test_system_commands_are_listed_and_run(demo_wb):
    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        palette = await open_palette(app, pilot)
        await pilot.press(*"theme")
        assert texts(palette)[0] == "Theme"
        await pilot.press("enter")
        await settle(app, pilot)
        assert type(app.screen).__name__ == "CommandPalette"  # Textual's theme picker
        await pilot.press("escape")
        await settle(app, pilot)
        palette = await open_palette(app, pilot)
        await pilot.press(*"quit")
        assert "Quit" in texts(palette)
        palette.query_one(JumpList).highlighted = texts(palette).index("Quit")
        await pilot.press("enter")
        await settle(app, pilot)
    assert app.return_code == 0 and not app.is_running


async def test_the_palette_from_the_leaderboard_and_the_help_screen(demo_wb):
    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        app.open_leaderboard()
        await settle(app, pilot)
        assert type(app.screen).__name__ == "LeaderboardScreen"
        focused = app.focused
        palette = await open_palette(app, pilot)
        assert palette.screen is app.screen  # mounted on the leaderboard
        await pilot.press("escape")
        await settle(app, pilot)
        assert type(app.screen).__name__ == "LeaderboardScreen" and app.focused is focused
        await open_palette(app, pilot)
        await pilot.press(*"challenge fuse")
        await pilot.press("enter")
        await settle(app, pilot)
        assert type(app.screen).__name__ == "MatrixScreen"
        assert app.screen.current()[1] == "fuse"
        # over the help screen (modal: ctrl+p is a priority binding) to a transcript
        await pilot.press("question_mark")
        await settle(app, pilot)
        assert type(app.screen).__name__ == "HelpScreen"
        palette = await open_palette(app, pilot)
        await pilot.press(*"transcript careful backwards/session")
        assert texts(palette)[0] == "transcript demo-careful/backwards/session.jsonl"
        await pilot.press("enter")
        await settle(app, pilot)
        assert type(app.screen).__name__ == "TranscriptScreen"
    assert app.errors == []


async def test_no_palette_over_a_question(demo_wb):
    from benchtui.tui.screens.confirm import ConfirmScreen

    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        app.push_screen(ConfirmScreen("Really?", "a question waits for its answer"))
        await settle(app, pilot)
        await pilot.press("ctrl+p")
        await settle(app, pilot)
        assert type(app.screen).__name__ == "ConfirmScreen" and not app.screen.query(JumpPalette)
    assert app.errors == []


async def test_a_broken_store_gives_a_notification_not_a_traceback(demo_wb):
    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        with sqlite3.connect(demo_wb.store_path) as conn:
            conn.execute("drop table scans")
        palette = await open_palette(app, pilot)
        assert any(n.message.startswith("palette: ") and "scans" in n.message for n in app._notifications)
        assert [t for t in texts(palette) if t[0].islower()] == []  # no targets
        assert "Quit" in texts(palette)  # the system commands still work
        await pilot.press(*"model")
        await pilot.press("escape")
        await settle(app, pilot)
        assert app.is_running and type(app.screen).__name__ == "MatrixScreen"


def test_the_matrix_table_replays_textual_focus_handlers_less_their_refresh():
    """MatrixTable._on_blur/_on_focus stand in for Widget's while the palette holds
    the table's focus: each must still be Textual's three steps and no more."""
    for name, flag, message in (("_on_blur", "False", "DescendantBlur"), ("_on_focus", "True", "DescendantFocus")):
        body = [line.strip() for line in inspect.getsource(getattr(Widget, name)).splitlines()[1:] if line.strip()]
        assert body == [f"self.has_focus = {flag}", "self.refresh()", "if self.parent is not None:",
                        f"self.parent.post_message(events.{message}(self))"], body


async def test_opening_typing_and_closing_leave_the_matrix_table_alone(demo_wb):
    """What keeps ctrl+p fast at 50 x 200: under the palette the table is not
    restyled (a restyle drops every DataTable cache), not repainted, and its
    scrollbars are not repainted on each layout; the list is not rendered twice
    when it reappears."""
    app = BenchApp(demo_wb)
    async with app.run_test(size=(50, 16)) as pilot:  # small: the table scrolls both ways
        await settle(app, pilot)
        table = app.screen.query_one("#matrix")
        assert table.show_vertical_scrollbar and table.show_horizontal_scrollbar
        await open_palette(app, pilot)
        await pilot.press("escape")
        await settle(app, pilot)
        calls: list[str] = []
        for widget, name in ((table, "notify_style_update"), (table, "refresh"),
                             (table.vertical_scrollbar, "refresh"), (table.horizontal_scrollbar, "refresh"),
                             (palette_of(app).query_one(JumpList), "_clear_caches")):
            original = getattr(widget, name)

            def spy(*args, _name=f"{type(widget).__name__}.{name}", _original=original, **kwargs):  # noqa: B008 - binds this widget's name when the spy is made, as meant
                calls.append(_name)
                return _original(*args, **kwargs)

            setattr(widget, name, spy)
        await open_palette(app, pilot)
        await pilot.press(*"demo kv")
        await settle(app, pilot)
        await pilot.press("escape")
        await settle(app, pilot)
        assert app.focused is table
        assert calls == [], calls
    assert app.errors == []


async def test_the_matrix_mounts_its_palette_hidden_after_the_rescan(demo_wb):
    """The first ctrl+p then only shows it (mounting it took ~0.2 s at 50 x 200)."""
    app = BenchApp(demo_wb, scan_on_start=True)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await settle(app, pilot)
        palette = palette_of(app)
        assert not palette.is_open and not palette.visible
        assert app.focused is app.screen.query_one("#matrix")
        assert await open_palette(app, pilot) is palette
    assert app.errors == []
