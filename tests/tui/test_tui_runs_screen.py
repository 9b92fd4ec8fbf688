"""The Runs screen as a newcomer meets it: a finished batch is summed up by
what became of it (not "21 finished (21 queued)"), a run the machine refuses
says so with the reason, the focus starts on the scope selector where it can be
seen, the hint says how to change scope and backend, and the answer screen's
"not run yet" says the keys that really start a run."""
from __future__ import annotations

from benchtui.host.backends import BackendUnavailable
from benchtui.runner import orchestrate
from benchtui.runner.orchestrate import RunEvent
from benchtui.store.database import Store
from benchtui.tui.app import BenchApp
from settling import settle
from textual.widgets import DataTable, Log, Select, Static

REASON = "backend cuda is not usable on this machine (no NVIDIA GPU found)"


def text_of(screen, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


async def test_a_finished_batch_is_summed_up_without_a_queued_count(demo_wb, monkeypatch):
    def fake_run_answers(workbench, pairs, *, on_event=None, cancel=None, **kw):
        with Store(workbench.store_path) as store:
            for i, (m, c) in enumerate(pairs):
                on_event(RunEvent("started", m, c, None, None, "", i, len(pairs)))
                run_id = store.db["runs"].insert({"model": m, "challenge": c, "status": "done", "verdict": "pass"}).last_pk
                on_event(RunEvent("finished", m, c, run_id, "pass", "", i + 1, len(pairs)))
        return []

    monkeypatch.setattr(orchestrate, "run_answers", fake_run_answers)
    app = BenchApp(demo_wb)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(app, pilot)
        app.open_runs([("demo-careful", "backwards")], "column")
        await settle(app, pilot)
        await pilot.press("s")
        await settle(app, pilot)
        total = len(app.screen.batch_rows)
        assert total >= 2
        progress = text_of(app.screen, "#runs-progress")
        assert f"{total} of {total} finished" in progress and "queued" not in progress, progress
        said = [n.message for n in app._notifications]
        assert any(f"{total} finished" in m and "queued" not in m for m in said), said
    assert app.errors == []


async def test_a_refused_backend_shows_refused_with_its_reason(demo_wb, monkeypatch):
    def refuse(backend: str) -> None:
        raise BackendUnavailable(REASON)

    monkeypatch.setattr(orchestrate, "require_backend", refuse)
    app = BenchApp(demo_wb)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(app, pilot)
        app.open_runs([("demo-careful", "backwards")], "answer")
        await settle(app, pilot)
        app.screen.query_one("#runs-backend", Select).value = "cuda"
        await pilot.pause()
        await pilot.press("s")
        await settle(app, pilot)
        live = app.screen.query_one("#runs-live", DataTable)
        row = [str(c) for c in live.get_row_at(0)]
        # the reason, cut between words to the table's width, and whole in the log below
        assert row[3] == "refused" and row[5].endswith("…") and REASON.startswith(row[5][:-1]), row
        assert f"refused: {REASON}" in "\n".join(app.screen.query_one(Log).lines)
        progress = text_of(app.screen, "#runs-progress")
        assert "refused" in progress and "queued" not in progress, progress
        said = [n.message for n in app._notifications]
        assert any("refused" in m and "cuda" in m for m in said) and not any("queued" in m for m in said), said
        assert app.screen.running is False
    assert app.errors == []


async def test_focus_starts_on_the_scope_selector_and_shows(demo_wb):
    app = BenchApp(demo_wb)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        app.open_runs([("demo-careful", "backwards")], "answer")
        await settle(app, pilot)
        scope = app.screen.query_one("#runs-scope", Select)
        assert app.screen.focused is scope
        focused_look = scope.query_one("SelectCurrent").rich_style
        await pilot.press("tab")
        await settle(app, pilot)
        assert app.screen.focused is app.screen.query_one("#runs-backend", Select)
        blurred_look = scope.query_one("SelectCurrent").rich_style
        assert focused_look.bgcolor != blurred_look.bgcolor  # a filled field, not only a thin border
        hint = text_of(app.screen, "#runs-hint")
        for words in ("tab", "scope", "backend", "enter", "s", "x"):
            assert words in hint, hint
        assert len(hint) <= 78  # one line at 80 columns
    assert app.errors == []


async def test_the_checks_tab_says_the_keys_that_start_a_run(demo_wb, monkeypatch):
    started = []

    def fake_run_answers(workbench, pairs, **kw):
        started.extend(pairs)
        return []

    monkeypatch.setattr(orchestrate, "run_answers", fake_run_answers)
    with Store(demo_wb.store_path) as store:
        never = store.query("select model, challenge from answers a where status = 'answer' and not exists "
                            "(select 1 from runs r where r.model = a.model and r.challenge = a.challenge) limit 1")[0]
    app = BenchApp(demo_wb)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        app.open_answer(never["model"], never["challenge"])
        await settle(app, pilot)
        await pilot.press("2")
        await settle(app, pilot)
        summary = text_of(app.screen, "#run-summary")
        assert "r" in summary and "then s" in summary, summary
        await pilot.press("r")  # what the text says, key for key
        await settle(app, pilot)
        await pilot.press("s")
        await settle(app, pilot)
        assert started == [(never["model"], never["challenge"])]
    assert app.errors == []


async def test_the_runs_screen_keeps_textuals_batch_and_anchor(demo_wb):
    """The screen's own state must not shadow Textual's Widget.batch() and
    Widget.anchor(): recomposing the screen (or the app while it is shown)
    calls ``screen.batch()``."""
    app = BenchApp(demo_wb)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        app.open_runs([("demo-careful", "backwards")], "answer")
        await settle(app, pilot)
        screen = app.screen
        assert callable(screen.anchor) and callable(screen.batch)
        await screen.recompose()
        await settle(app, pilot)
        assert screen.query_one("#runs-hint", Static) and screen.query_one("#runs-scope", Select).value == "answer"


async def test_a_run_of_a_waiting_folder_reads_waiting_as_results_says(demo_wb):
    """An older run recorded for a folder holding only its PROMPT.md shows `waiting`
    in the history, the word `results` and its JSON use."""
    folder = demo_wb.root / "models" / "demo-quitter" / "backwards"
    for f in folder.iterdir():
        if f.name != "PROMPT.md":
            f.unlink()
    (folder / "PROMPT.md").write_text("Write layernorm.\n")
    with Store(demo_wb.store_path) as store:
        from benchtui.workbench.scan import scan_workbench

        scan_workbench(demo_wb, store)
        run_id = store.db["runs"].insert({"model": "demo-quitter", "challenge": "backwards", "status": "done",
                                          "verdict": "no_answer"}).last_pk
    app = BenchApp(demo_wb)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        app.open_runs([("demo-quitter", "backwards")], "answer")
        await settle(app, pilot)
        table = app.screen.query_one("#runs-table", DataTable)
        row = table.get_row(f"run:{run_id}")
        assert "waiting" in str(row[4]) and "no answer" not in str(row[4]), row
    assert app.errors == []
