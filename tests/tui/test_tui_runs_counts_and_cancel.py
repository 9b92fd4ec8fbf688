"""Runs screen: the done count counts what finished, a cancelled
batch says how many finished and how many never started, log lines do not
repeat their kind, and a `busy` answer (another process runs it) is shown."""
from __future__ import annotations

from benchtui.runner import orchestrate
from benchtui.runner.orchestrate import RunEvent
from benchtui.store.database import Store
from benchtui.tui.app import BenchApp
from fakes import like
from settling import settle
from textual.widgets import Static


async def start_column_batch(app, pilot):
    """The Runs screen opened from demo-careful/backwards, its scope the whole
    column, the batch started: the screen."""
    await settle(app, pilot)
    app.open_runs([("demo-careful", "backwards")], "answer")
    await settle(app, pilot)
    screen = app.screen
    screen.query_one("#runs-scope").value = "column"
    await pilot.pause()
    screen.action_start()
    await settle(app, pilot)
    return screen


async def test_tui_runs_counts_and_cancel_summary(demo_wb, monkeypatch):
    @like(orchestrate.run_answers)
    def fake_run_answers(workbench, pairs, *, on_event=None, cancel=None, **kw):
        n = len(pairs)
        with Store(workbench.store_path) as store:
            for i, (m, c) in enumerate(pairs[:2]):  # two finish
                on_event(RunEvent("started", m, c, None, None, "", 0, n))  # a start carries no done count
                run_id = store.db["runs"].insert({"model": m, "challenge": c, "status": "done", "verdict": "pass"}).last_pk
                on_event(RunEvent("finished", m, c, run_id, "pass", "", i + 1, n))
            m, c = pairs[2]
            on_event(RunEvent("started", m, c, None, None, "", 0, n))
            on_event(RunEvent("busy", m, c, 7, None, "already running (run #7, process 1): not run twice", 3, n))
            cancel.set()
            for i, (m, c) in enumerate(pairs[3:]):
                on_event(RunEvent("cancelled", m, c, None, None, "cancelled before it started", 4 + i, n))
        return []

    monkeypatch.setattr(orchestrate, "run_answers", fake_run_answers)
    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await start_column_batch(app, pilot)
        total = len(screen.batch_rows)
        assert total >= 5
        progress = str(screen.query_one("#runs-progress", Static).render())
        assert f"2 finished, {total - 3} cancelled, 1 busy" in progress
        lines = list(screen.query_one("#runs-log").lines)
        assert any(line.endswith(": cancelled before it started") for line in lines)
        assert not any("cancelled cancelled" in line for line in lines)
        assert any("busy" in line and "not run twice" in line for line in lines)
    assert app.errors == []


async def test_tui_runs_done_count_survives_a_start(demo_wb, monkeypatch):
    shown = []
    @like(orchestrate.run_answers)
    def fake_run_answers(workbench, pairs, *, on_event=None, cancel=None, **kw):
        n = len(pairs)
        with Store(workbench.store_path) as store:
            m, c = pairs[0]
            run_id = store.db["runs"].insert({"model": m, "challenge": c, "status": "done", "verdict": "pass"}).last_pk
            on_event(RunEvent("started", m, c, None, None, "", 0, n))
            on_event(RunEvent("finished", m, c, run_id, "pass", "", 1, n))
            on_event(RunEvent("started", *pairs[1], None, None, "", 0, n))
        import time

        time.sleep(0.5)  # let the screen handle the events, then read what it shows mid-batch
        shown.append(app.call_from_thread(lambda: str(app.screen.query_one("#runs-progress", Static).render())))
        return []

    monkeypatch.setattr(orchestrate, "run_answers", fake_run_answers)
    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await start_column_batch(app, pilot)
    # the last event was a start: the count still says the one that finished
    assert shown and shown[0].startswith("1/"), shown


async def test_tui_quit_mid_run_asks_first(demo_wb):
    from benchtui.tui.screens.confirm import ConfirmScreen

    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        app.open_runs([("demo-careful", "backwards")], "answer")
        await settle(app, pilot)
        runs = app.screen
        runs.running = True  # a batch in progress (its worker is not needed to ask)
        runs.batch_rows = {"q:demo-careful/backwards": ["", "demo-careful", "backwards", "started", "", ""]}
        await pilot.press("q")
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmScreen) and app.is_running
        assert "1 answer(s) not finished" in str(app.screen.query_one("#confirm-detail", Static).render())
        await pilot.press("n")
        await settle(app, pilot)
        assert app.screen is runs and app.is_running
        import threading

        runs.cancel_event = threading.Event()
        await pilot.press("q")
        await settle(app, pilot)
        await pilot.press("y")
        await settle(app, pilot)
        assert runs.cancel_event.is_set()
        assert app.return_code == 0  # the `y` quit the app (None: it never exited)


async def test_ctrl_c_asks_benchtuis_quit_question_and_quits_when_idle(demo_wb):
    """Ctrl-C is benchtui's quit: its question while runs are going (not Textual's
    generic notice), and a plain quit otherwise."""
    from benchtui.tui.screens.confirm import ConfirmScreen

    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await settle(app, pilot)
        app.open_runs([("demo-careful", "backwards")], "answer")
        await settle(app, pilot)
        runs = app.screen
        runs.running = True
        runs.batch_rows = {"q:demo-careful/backwards": ["", "demo-careful", "backwards", "started", "", ""]}
        await pilot.press("ctrl+c")
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmScreen) and app.is_running
        assert not [n for n in app._notifications if "quit" in n.message.lower()]
        await pilot.press("n")
        await settle(app, pilot)
        runs.running = False
        await pilot.press("ctrl+c")
        await settle(app, pilot)
    assert app.return_code == 0
