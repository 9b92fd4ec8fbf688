"""The head-to-head table (1,225 rows at 50 models) is rendered a slice
at a time, so that leaving the leaderboard stops it; its lines must be those of
the whole table, whatever the width, wrapping included."""
from __future__ import annotations

from functools import partial
from types import SimpleNamespace

from benchtui.tui.screens import leaderboard as L
from rich.console import Console
from rich.text import Text
from settling import wait_workers


def board(n_models: int, long_names: bool = False):
    names = [f"model-{i:02d}" + ("-with-a-rather-long-name" * (i % 3) if long_names else "") for i in range(n_models)]
    pairs = []
    for i, a in enumerate(names):
        for j, b in enumerate(names[i + 1:], i + 1):
            graded = [] if (i + j) % 7 == 0 else [f"task_{k}" for k in range((i * j) % 9 + 1)]
            text = Text(f"{(i * 3 + j) % 9}-{(i + j * 5) % 9}-{(i * j) % 3}", style="bold green" if i % 2 else "red")
            pairs.append(SimpleNamespace(model_a=a, model_b=b, challenges=graded, text=text))
    return SimpleNamespace(head_to_head=pairs)


def whole(lb, console, options):
    return console.render_lines(L.h2h_table(lb), options, pad=True, new_lines=False)


def test_the_sliced_head_to_head_is_the_whole_table_line_for_line():
    console = Console(width=200, color_system="truecolor", force_terminal=True)
    # 1,225 rows at their natural widths; 136 rows whose long names wrap; 3 rows, not sliced
    for n_models, long_names, width in ((50, False, 140), (17, True, 60), (17, True, 100), (3, False, 80)):
        lb = board(n_models, long_names)
        options = console.options.update(width=width, max_width=width, min_width=width)
        sliced = L.h2h_lines(lb, console, options)
        assert sliced == whole(lb, console, options), (n_models, long_names, width)
    assert len(board(50).head_to_head) > 10 * L.H2H_CHUNK  # the case that matters is sliced


def test_the_sliced_winners_are_the_whole_table_line_for_line():
    console = Console(width=200, color_system="truecolor", force_terminal=True)
    for n, long_names, width in ((208, False, 136), (60, True, 60), (3, False, 80)):
        summaries = [SimpleNamespace(title=f"Task {i:03d}" + (" with a rather long title" * (i % 3) if long_names else ""),
                                     winners=[f"model-{j:02d}" for j in range(i % 4)], best_letter="AB"[i % 2] if i % 5 else None,
                                     band=("A-", "B+", "—")[i % 3], passed=i % 4, verified=(i % 7) and 3)
                     for i in range(n)]
        lb = SimpleNamespace(challenge_summaries=summaries)
        options = console.options.update(width=width, max_width=width, min_width=width)
        sliced = L.sliced_lines(partial(L.winners_table, lb), L.winners_rows(lb), console, options)
        whole = console.render_lines(L.winners_table(lb), options, pad=True, new_lines=False)
        assert sliced == whole, (n, long_names, width)


def test_a_cancelled_render_stops_between_slices():
    console = Console(width=140, force_terminal=True)
    options = console.options.update(width=140, max_width=140, min_width=140)
    looks = []

    def cancelled():
        looks.append(True)
        return len(looks) > 2  # left after two slices

    assert L.h2h_lines(board(50), console, options, cancelled) is None
    assert len(looks) == 3


async def test_escape_stops_the_render_before_the_screen_goes(demo_wb, monkeypatch):
    import threading

    from benchtui.tui.app import BenchApp

    started, seen_cancelled = threading.Event(), threading.Event()

    def slow_board(lb, console, width, cancelled=lambda: False):
        started.set()
        for _ in range(500):  # a long render, looking between slices as h2h_lines does
            if cancelled():
                seen_cancelled.set()
                return
            threading.Event().wait(0.01)
        yield from ()

    monkeypatch.setattr(L, "render_board", slow_board)
    await leave_the_leaderboard_while(BenchApp(demo_wb), started, seen_cancelled)  # within a slice, not after 5 s


async def leave_the_leaderboard_while(app, started, stopped) -> None:
    """Open the leaderboard, press escape once ``started`` is set: ``stopped`` must be
    set within 2 s and the matrix shown."""
    async with app.run_test(size=(140, 45)) as pilot:
        for _ in range(3):
            await pilot.pause()
            await wait_workers(app)
        app.open_leaderboard()
        await pilot.pause()
        assert started.wait(5)
        await pilot.press("escape")
        assert stopped.wait(2)
        await pilot.pause()
        assert type(app.screen).__name__ == "MatrixScreen"
    assert app.errors == []


async def test_escape_goes_back_before_the_panes_waiting_to_be_shown(demo_wb, monkeypatch):
    """Escape is handled as it arrives, not after the panes the render posted before it
    (each drawn first: two leaderboard frames before the matrix came back)."""
    import asyncio

    from benchtui.tui.app import BenchApp
    from textual import events

    shown = []

    taken_in = asyncio.Event()

    async def slow_show(self, message):  # a pane the screen takes in until the test says
        await taken_in.wait()
        shown.append(message)

    monkeypatch.setattr(L.LeaderboardScreen, "on_leaderboard_screen_loaded", slow_show)
    app = BenchApp(demo_wb)
    async with app.run_test(size=(140, 45)) as pilot:
        for _ in range(3):
            await pilot.pause()
            await wait_workers(app)
        app.open_leaderboard()
        await pilot.pause(0.2)
        assert type(app.screen).__name__ == "LeaderboardScreen" and not shown  # the first pane is being taken in
        try:
            app.post_message(events.Key("escape", None))  # (pilot.press would wait for the screen's queue)
            for _ in range(3000):
                if type(app.screen).__name__ == "MatrixScreen":
                    break
                await asyncio.sleep(0.01)
            assert type(app.screen).__name__ == "MatrixScreen" and not shown  # back before the pane is taken in
        finally:
            taken_in.set()
    assert app.errors == []


async def test_escape_stops_computing_the_board(demo_wb, monkeypatch):
    """Left while the board is still being computed (~0.3 s at 50 x 200), the worker
    stops at its next checkpoint instead of holding the GIL against the matrix."""
    import threading

    import benchtui.grading.aggregates
    from benchtui.tui.app import BenchApp

    started, stopped = threading.Event(), threading.Event()

    def slow_leaderboard(store, *, grader=None, checkpoint=lambda: None):
        started.set()
        try:
            for _ in range(500):
                checkpoint()
                threading.Event().wait(0.01)
        except BaseException:
            stopped.set()
            raise
        raise AssertionError("never stopped")

    monkeypatch.setattr(benchtui.grading.aggregates, "leaderboard", slow_leaderboard)
    await leave_the_leaderboard_while(BenchApp(demo_wb), started, stopped)  # at the next checkpoint, not after 5 s
