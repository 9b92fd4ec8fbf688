"""Start hidden-suite runs for a selection, watch them live, cancel, read logs."""
from __future__ import annotations

import threading

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from tui.screens.base import GuardedScreen
from textual.widgets import DataTable, Footer, Header, Label, Log, Select, Static

from engine import queries
from tui.glyphs import verdict_text
from tui.messages import RunProgress, RunsDone

SCOPES = (("this answer", "answer"), ("this model (column)", "column"),
          ("this challenge (row)", "row"), ("every answer", "all"))
BACKENDS = (("auto", "auto"), ("cpu", "cpu"), ("cuda", "cuda"), ("mlx", "mlx"))


class RunsScreen(GuardedScreen):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="runs.back"),
        Binding("s", "start", "Start", id="runs.start"),
        Binding("x", "cancel", "Cancel", id="runs.cancel"),
        Binding("ctrl+r", "reload", "Refresh", id="runs.refresh", show=False),
    ]

    def __init__(self, pairs: list[tuple[str, str]], scope: str = "answer") -> None:
        super().__init__()
        self.anchor = pairs[0] if pairs else None
        self.scope = scope if scope in dict((v, k) for k, v in SCOPES) else "answer"
        self.cancel_event: threading.Event | None = None
        self.running = False

    def compose(self) -> ComposeResult:
        yield Header()
        where = f"{self.anchor[0]} / {self.anchor[1]}" if self.anchor else "no cell selected"
        yield Static(Text.assemble(("Runs", "bold"), f"  from {where}"), classes="title-bar")
        with Horizontal(id="runs-controls"):
            yield Label("scope")
            yield Select(SCOPES, value=self.scope if self.anchor else "all", allow_blank=False, id="runs-scope")
            yield Label("backend")
            yield Select(BACKENDS, value="auto", allow_blank=False, id="runs-backend")
        yield Static("s: start   x: cancel   enter: show a run's log", id="runs-progress")
        yield DataTable(id="runs-table", cursor_type="row")
        yield Log(id="runs-log", highlight=False)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#runs-table", DataTable)
        table.add_column("run", key="run")
        table.add_column("model", key="model")
        table.add_column("challenge", key="challenge")
        table.add_column("state", key="state")
        table.add_column("verdict", key="verdict")
        table.add_column("message", key="message")
        self.action_reload()
        table.focus()

    def action_reload(self) -> None:
        table = self.query_one("#runs-table", DataTable)
        if self.running:
            return
        table.clear()
        for r in queries.recent_runs(self.app.store, 100):
            table.add_row(str(r["id"]), r["model"], r["challenge"], r["status"] or "",
                          verdict_text(r["verdict"] or r["status"]), (r["message"] or "")[:80], key=f"run:{r['id']}")

    def selection(self) -> list[tuple[str, str]]:
        scope = self.query_one("#runs-scope", Select).value
        rows = self.app.store.query("select model, challenge from answers where present = 1 and status = 'answer' "
                                    "order by model, challenge")
        pairs = [(r["model"], r["challenge"]) for r in rows]
        if scope == "all" or self.anchor is None:
            return pairs
        model, challenge = self.anchor
        if scope == "column":
            return [p for p in pairs if p[0] == model]
        if scope == "row":
            return [p for p in pairs if p[1] == challenge]
        return [p for p in pairs if p == (model, challenge)]

    # -- running -----------------------------------------------------------------------
    def action_start(self) -> None:
        if self.running:
            self.notify("runs are in progress; x cancels them", severity="warning")
            return
        pairs = self.selection()
        if not pairs:
            self.notify("nothing to run in this selection (no answers)", severity="warning")
            return
        backend = str(self.query_one("#runs-backend", Select).value)
        table = self.query_one("#runs-table", DataTable)
        table.clear()
        for model, challenge in pairs:
            table.add_row("", model, challenge, "queued", "", "", key=f"q:{model}/{challenge}")
        self.running = True
        self.cancel_event = threading.Event()
        self.query_one("#runs-progress", Static).update(f"starting {len(pairs)} run(s) on {backend}…")
        self.run_batch(pairs, backend, self.cancel_event)

    @work(thread=True, exclusive=True, group="runs")
    def run_batch(self, pairs: list[tuple[str, str]], backend: str, cancel: threading.Event) -> None:
        try:
            from engine.runner.orchestrate import run_answers

            run_answers(self.app.workbench, pairs, backend=backend, cancel=cancel,
                        on_event=lambda e: self.post_message(RunProgress(e)))
        except Exception as exc:
            self.app.call_from_thread(self.app.report_error, "runs stopped", exc)
        self.post_message(RunsDone(len(pairs), cancel.is_set()))

    def on_run_progress(self, message: RunProgress) -> None:
        e = message.event
        table = self.query_one("#runs-table", DataTable)
        key = f"q:{e.model}/{e.challenge}"
        try:
            table.update_cell(key, "state", e.kind)
            if e.run_id is not None:
                table.update_cell(key, "run", str(e.run_id))
            if e.verdict:
                table.update_cell(key, "verdict", verdict_text(e.verdict))
            table.update_cell(key, "message", (e.message or "")[:80])
        except Exception:
            pass  # a row for a pair this screen did not queue: ignore
        self.query_one("#runs-progress", Static).update(f"{e.done}/{e.total} done · {e.model}/{e.challenge}: {e.kind}")
        if e.kind in ("finished", "error"):
            self.query_one(Log).write_line(f"{e.model}/{e.challenge}: {e.kind} {e.verdict or ''} {e.message}")

    def on_runs_done(self, message: RunsDone) -> None:
        self.running = False
        word = "cancelled" if message.cancelled else "finished"
        self.query_one("#runs-progress", Static).update(f"{message.count} run(s) {word}")
        self.notify(f"runs {word}", timeout=3)

    def action_cancel(self) -> None:
        if self.cancel_event and self.running:
            self.cancel_event.set()
            self.notify("cancelling: running children are stopped", timeout=3)
        else:
            self.notify("nothing is running", timeout=2)

    # -- logs --------------------------------------------------------------------------
    @on(DataTable.RowSelected, "#runs-table")
    def show_log(self, event: DataTable.RowSelected) -> None:
        table = event.data_table
        run_cell = table.get_cell(event.row_key, "run")
        log = self.query_one(Log)
        log.clear()
        if not run_cell:
            log.write_line("this run has not started yet")
            return
        run = queries.run_row(self.app.store, int(run_cell))
        if run is None:
            log.write_line("run not found")
            return
        log.write_line(f"run #{run['id']} {run['model']}/{run['challenge']} {run['status']} {run['verdict'] or ''} "
                       f"on {run['backend'] or '?'} ({run['device'] or '?'})")
        log.write_line(run["message"] or "")
        for title, key in (("stdout", "stdout"), ("stderr", "stderr"), ("self-check", "self_output")):
            if run[key]:
                log.write_line(f"--- {title} ---")
                log.write_lines(str(run[key]).splitlines())
        for c in queries.run_checks(self.app.store, run["id"]):
            log.write_line(f"[{c['verdict']}] {c['name']}: {c['value'] or ''} (threshold {c['threshold'] or '-'}) {c['message'] or ''}")

    def on_unmount(self) -> None:
        if self.cancel_event is not None:
            self.cancel_event.set()  # leaving the screen stops its runs rather than orphaning them
