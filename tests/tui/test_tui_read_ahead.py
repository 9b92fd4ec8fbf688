"""The grades, transcript and compare screens read their data before
they are shown (BenchApp.open_read_ahead), so a key draws one whole frame.

These check that each screen is filled before its first frame without reading
again for itself; that a slow read shows the screen at once and fills it when
the data comes; that a failed read falls back to the screen's own reading;
that the last key asked wins; and that a stale diff never replaces the one
shown.
"""
from __future__ import annotations

import threading

from benchtui.tui.app import BenchApp
from benchtui.tui.screens.compare import CompareScreen
from benchtui.tui.screens.grades import GradesScreen
from benchtui.tui.screens.transcript import TranscriptScreen
from benchtui.tui.screens.whole_frame import ReadAheadScreen
from benchtui.tui.widgets.diff_view import DiffView
from settling import settle
from textual.widgets import DataTable, OptionList


def count_own_loads(monkeypatch) -> list[str]:
    """Record every time a read-ahead screen starts reading for itself."""
    calls: list[str] = []
    for cls in (GradesScreen, TranscriptScreen, CompareScreen):
        original = cls.load_self

        def spy(self, _original=original, _name=cls.__name__):
            calls.append(_name)
            return _original(self)

        monkeypatch.setattr(cls, "load_self", spy)
    return calls


def filled_when_mounted(monkeypatch) -> dict:
    """What each screen held at the end of its on_mount, before its first frame."""
    seen: dict = {}
    original = ReadAheadScreen.fill_or_load

    def spy(self):
        original(self)
        if isinstance(self, GradesScreen):
            seen["grades"] = self.query_one("#grade-history", DataTable).row_count
        elif isinstance(self, TranscriptScreen):
            seen["transcript"] = len(self.entries)
        elif isinstance(self, CompareScreen):
            seen["compare"] = (self.other, self.query_one(DiffView).diff is not None)

    monkeypatch.setattr(ReadAheadScreen, "fill_or_load", spy)
    return seen


async def test_each_screen_is_filled_before_its_first_frame(demo_wb, monkeypatch):
    own = count_own_loads(monkeypatch)
    seen = filled_when_mounted(monkeypatch)
    app = BenchApp(demo_wb)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(app, pilot)
        for open_screen in (lambda: app.open_grades("demo-careful", "backwards"),
                            lambda: app.open_transcript("demo-careful", "backwards", "review-session.jsonl"),
                            lambda: app.open_compare("demo-careful", "backwards")):
            open_screen()
            await settle(app, pilot)
            assert isinstance(app.screen, ReadAheadScreen)
            app.pop_screen()
            await settle(app, pilot)
    assert own == []  # none read again for itself
    assert seen["grades"] > 0  # demo-careful/backwards has grades: its history was in the first frame
    assert seen["transcript"] > 0
    assert seen["compare"][0] is not None and seen["compare"][1]  # the first pair's diff too
    assert app.errors == []


async def test_a_slow_read_shows_the_screen_then_fills_it(demo_wb, monkeypatch):
    own = count_own_loads(monkeypatch)
    release = threading.Event()
    original = GradesScreen.read_ahead

    def slow(self, app):
        release.wait(10)
        return original(self, app)

    monkeypatch.setattr(GradesScreen, "read_ahead", slow)
    app = BenchApp(demo_wb)
    app.READ_AHEAD_WAIT_S = 0.05
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(app, pilot)
        app.open_grades("demo-careful", "backwards")
        for _ in range(20):
            await pilot.pause(0.02)
            if isinstance(app.screen, GradesScreen):
                break
        screen = app.screen
        assert isinstance(screen, GradesScreen)  # shown before its data came
        assert screen.query_one("#grade-history", DataTable).row_count == 0
        release.set()
        await settle(app, pilot)
        assert screen.query_one("#grade-history", DataTable).row_count > 0  # filled when it came
    assert own == []
    assert app.errors == []


async def test_a_failed_read_falls_back_to_the_screens_own(demo_wb, monkeypatch):
    own = count_own_loads(monkeypatch)

    def broken(self, app):
        raise OSError("disk went away")

    monkeypatch.setattr(TranscriptScreen, "read_ahead", broken)
    app = BenchApp(demo_wb)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(app, pilot)
        app.open_transcript("demo-careful", "backwards", "review-session.jsonl")
        await settle(app, pilot)
        assert isinstance(app.screen, TranscriptScreen)
        assert app.screen.entries  # it read for itself
    assert own == ["TranscriptScreen"]
    assert app.errors == []


async def test_the_last_screen_asked_for_wins(demo_wb):
    app = BenchApp(demo_wb)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(app, pilot)
        app.open_grades("demo-careful", "backwards")
        app.open_compare("demo-careful", "backwards")  # a second key before the first showed
        await settle(app, pilot)
        assert [type(s).__name__ for s in app.screen_stack] == ["MatrixScreen", "CompareScreen"]
    assert app.errors == []


async def test_compare_drops_a_diff_made_for_a_pair_no_longer_shown(demo_wb):
    app = BenchApp(demo_wb)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(app, pilot)
        app.open_compare("demo-careful", "backwards")
        await settle(app, pilot)
        screen = app.screen
        files = screen.query_one("#compare-files", OptionList)
        assert files.option_count >= 2, "the demo pair needs two files to pair"
        shown = screen.query_one(DiffView).diff
        stale = screen.diff(app, 1, screen.pairs[1], screen.roots, screen.other)  # made for pair 1 ...
        assert stale.diff is not None and stale.diff != shown
        screen.post_message(stale)  # ... arriving while pair 0 is shown
        await settle(app, pilot)
        assert screen.query_one(DiffView).diff is shown
        files.highlighted = 1  # highlighting pair 1 makes and shows its diff
        await settle(app, pilot)
        assert screen.query_one(DiffView).diff == stale.diff
    assert app.errors == []


async def test_a_new_screen_is_styled_once_and_drawn_as_it_stays(demo_wb, monkeypatch):
    """WholeFrameScreen: the breakpoint class and the hidden toast rack are in place
    at mount, and neither the first resume nor the first resize restyles the screen
    (each would draw another frame after the first)."""
    from textual.widgets._toast import ToastRack

    restyled: list[str] = []
    at_mount: dict = {}
    original_update = GradesScreen.update_node_styles
    original_fill = ReadAheadScreen.fill_or_load

    def update_node_styles(self, animate: bool = True):
        if self.is_mounted:
            restyled.append(type(self).__name__)
        return original_update(self, animate)

    def fill(self):
        at_mount["classes"] = set(self.classes)
        at_mount["racks"] = len(self.query(ToastRack))
        at_mount["filled"] = True
        original_fill(self)

    rack_layouts: list[bool] = []
    original_show = ToastRack.show

    def show(self, notifications):  # Textual's, as the screen resumes
        before = dict(self.styles.inline.get_rules())
        original_show(self, notifications)
        changed = dict(self.styles.inline.get_rules()) != before
        if at_mount.get("filled") and isinstance(self.screen, GradesScreen) and changed:
            rack_layouts.append(True)  # its style changed after the first frame: another layout
    monkeypatch.setattr(ToastRack, "show", show)

    from textual.screen import Screen

    relaid: list[str] = []  # whole layouts and repaints after the first frame, for nothing
    original_resized, original_resume = Screen._screen_resized, Screen._on_screen_resume

    def screen_resized(self, size):
        if isinstance(self, GradesScreen):
            relaid.append("resize")
        return original_resized(self, size)

    from textual.widget import Widget

    in_resume: list[bool] = []
    original_refresh = Widget.refresh

    def widget_refresh(self, *regions, **kwargs):  # what the screen's own refresh passes on
        if in_resume and isinstance(self, GradesScreen) and not regions and not kwargs:
            relaid.append("resume repaint")
        return original_refresh(self, *regions, **kwargs)

    def on_screen_resume(self, event):
        in_resume.append(True)
        try:
            return original_resume(self, event)
        finally:
            in_resume.pop()

    monkeypatch.setattr(Widget, "refresh", widget_refresh)

    monkeypatch.setattr(Screen, "_screen_resized", screen_resized)
    monkeypatch.setattr(Screen, "_on_screen_resume", on_screen_resume)

    monkeypatch.setattr(GradesScreen, "update_node_styles", update_node_styles)
    monkeypatch.setattr(ReadAheadScreen, "fill_or_load", fill)
    for size, expected in (((140, 45), "-wide"), ((80, 24), "-narrow")):
        app = BenchApp(demo_wb)
        async with app.run_test(size=size, notifications=True) as pilot:  # (off by default in tests)
            await settle(app, pilot)
            restyled.clear()
            at_mount.clear()
            rack_layouts.clear()
            relaid.clear()
            app.open_grades("demo-careful", "backwards")
            await settle(app, pilot)
            assert isinstance(app.screen, GradesScreen)
            assert expected in at_mount["classes"], at_mount
            assert at_mount["racks"] == 1 and rack_layouts == []
            assert restyled == []
            assert relaid == []
            app.pop_screen()
            await settle(app, pilot)
        assert app.errors == []


async def test_each_screen_a_key_opens_is_drawn_in_one_frame(demo_wb, monkeypatch):
    """Grades, transcript and compare (read ahead) and the kept answer screen are
    written to the terminal once: no second layout or repaint after the first frame
    (a widget's late layout request, a scrollbar's, an OptionList's Resize, a focus
    moved after the frame, the mount's own layout request: each was one more frame).
    So is the matrix on the way back (the removed screen's layout request was one more)."""
    frames: list[str] = []
    original = BenchApp._display

    def display(self, screen, renderable):
        if renderable is not None:
            frames.append(type(screen).__name__)
        return original(self, screen, renderable)

    monkeypatch.setattr(BenchApp, "_display", display)
    app = BenchApp(demo_wb)
    async with app.run_test(size=(140, 45), notifications=True) as pilot:
        await settle(app, pilot)
        transcript = app.store.conn.execute(
            "select f.relpath from files f join answers a on a.id = f.answer_id where a.model = ? "
            "and a.challenge = ? and f.kind = 'transcript'", ("demo-careful", "backwards")).fetchone()[0]
        app.keep_answer_screen()
        await settle(app, pilot)
        openers = {"GradesScreen": lambda: app.open_grades("demo-careful", "backwards"),
                   "TranscriptScreen": lambda: app.open_transcript("demo-careful", "backwards", transcript),
                   "CompareScreen": lambda: app.open_compare("demo-careful", "backwards"),
                   "AnswerScreen": lambda: app.open_answer("demo-careful", "backwards")}
        # the kept answer screen twice: its first showing (sized then) and a later one
        for name, opener in [*openers.items(), ("AnswerScreen", lambda: app.open_answer("demo-hasty", "backwards"))]:
            frames.clear()
            opener()
            await settle(app, pilot)
            assert type(app.screen).__name__ == name
            assert frames == [name], (name, frames)
            frames.clear()
            app.pop_screen()
            await settle(app, pilot)
            # back: the matrix drawn once as it resumes, not again once the screen left is removed
            assert frames == ["MatrixScreen"], (name, "back", frames)
    assert app.errors == []
