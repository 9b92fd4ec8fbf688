"""Start hidden-suite runs for a selection, watch them live, cancel, read logs.

Two tables: the batch started here (shown once a batch starts, live) above
the run history (always shown; it gains each run as it finishes). Enter on a
row of either shows that run's log below. Columns get explicit widths,
measured from what they hold (the live table also from every state and
verdict a row can reach), the message taking the room the others leave
at any terminal width (tui/widgets/fitted_table.py), and the live table is rebuilt on each event rather
than updated cell by cell: an auto-width DataTable widens a column only in
its idle handler (after ``update_cell``, only when asked to), and a frame
painted before that keeps cells cut ("finish", "compi").
"""
from __future__ import annotations

import threading

from benchtui.store import answers_sql, queries
from benchtui.tui.glyphs import VERDICTS, check_value, verdict_text
from benchtui.tui.messages import RunProgress, RunsDone
from benchtui.tui.screens.base import COMPACT_FOOTER_BELOW, GuardedScreen
from benchtui.tui.widgets.fitted_table import Column, FittedTable
from benchtui.tui.widgets.footer import KeysFooter
from benchtui.tui.widgets.title_bar import TitleBar
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import DataTable, Label, Log, Select, Static

# Short enough for the 24-column select: a longer label wraps and the controls take a row more.
SCOPES = (("this answer", "answer"), ("this model", "column"), ("this challenge", "row"), ("every answer", "all"))
BACKENDS = (("auto", "auto"), ("cpu", "cpu"), ("cuda", "cuda"), ("mlx", "mlx"))
COLUMNS = ("run", "model", "challenge", "state", "verdict", "message")
NODE = "node"  # a seventh column, shown once some row ran on a cluster node (benchtui run --cluster)
STATES = ("queued", "started", "finished", "error", "cancelled", "busy", "refused", "running", "done", "interrupted",
          "retrying")
ENDED = ("finished", "error", "cancelled", "busy", "refused")  # a batch row that will not change again
# One line at 80 columns: how to reach and change the two selectors, and the screen's keys.
HINT = "tab: scope → backend → runs · enter: change / run's log · s start · x cancel"


def message_text(text) -> str:
    """A run's message on one line: its table cell is cut to the room the table has
    (tui/widgets/fitted_table.py); the log shows it whole."""
    return " ".join(str(text or "").split())


def columns_for(rows: list[tuple]) -> tuple[str, ...]:
    """The six columns, and ``node`` when some row ran on a cluster node."""
    return COLUMNS + ((NODE,) if any(len(r) > len(COLUMNS) and r[len(COLUMNS)] for r in rows) else ())


def fill_runs(table: FittedTable, rows: list[tuple], floor: dict[str, int] | None = None) -> None:
    """``rows`` as (key, cells): each column as wide as its widest cell, label or floor,
    the message taking the room the others leave (cut between words where it lacks room)."""
    floor = floor or {}
    keys = columns_for([cells for _, cells in rows])
    # the message gives way first, then the names (an interrupted run's state and a compile
    # error's verdict leave 80 columns too few for both whole); the run's log says them whole
    names = ("model", "challenge")
    spec = [Column(k, shrink=k == "message" or k in names, fill=k == "message",
                   floor=12 if k == "message" else 8 if k in names else floor.get(k, 0))
            for k in keys]
    table.fill(spec, [(key, tuple(cells[:len(keys)])) for key, cells in rows])


class RunsScreen(GuardedScreen):
    AUTO_FOCUS = "#runs-scope"  # what a newcomer sets first; tab goes on to the backend, then the runs
    DEFAULT_CSS = """
    #runs-live { height: auto; max-height: 7; }
    #runs-hint { height: 1; padding: 0 1; color: $text-muted; }
    .runs-title { height: 1; padding: 0 1; text-style: bold; }
    /* the focused selector filled, not only Textual's thin border: visible at a glance */
    #runs-controls Select:focus > SelectCurrent { background: $accent 40%; }
    """
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="runs.back"),
        Binding("s", "start", "Start", id="runs.start"),
        Binding("x", "cancel", "Cancel", id="runs.cancel"),
        Binding("ctrl+r", "reload", "Refresh", id="runs.refresh", show=False),
    ]

    def __init__(self, pairs: list[tuple[str, str]], scope: str = "answer") -> None:
        super().__init__()
        # Not `anchor` nor `batch`: Textual's Widget methods of those names (recompose calls batch())
        self.cell = pairs[0] if pairs else None
        self.scope = scope if scope in dict((v, k) for k, v in SCOPES) else "answer"
        self.cancel_event: threading.Event | None = None
        self.running = False
        self.batch_rows: dict[str, list] = {}  # the live table's rows by key: run, model, challenge, state, verdict, message

    def compose(self) -> ComposeResult:
        yield TitleBar()
        where = f"{self.cell[0]} / {self.cell[1]}" if self.cell else "no cell selected"
        yield Static(Text.assemble(("Runs", "bold"), f"  from {where}"), classes="title-bar")
        with Horizontal(id="runs-controls"):
            yield Label("scope")
            yield Select(SCOPES, value=self.scope if self.cell else "all", allow_blank=False, id="runs-scope")
            yield Label("backend")
            yield Select(BACKENDS, value="auto", allow_blank=False, id="runs-backend")
        yield Static(HINT, id="runs-hint")
        yield Static("", id="runs-progress")
        # two tables of the same columns: each titled, so neither reads as the other
        yield Static("this batch", id="runs-live-title", classes="runs-title")
        yield FittedTable(id="runs-live", cursor_type="row")
        yield Static("run history (newest first; enter: its log)", id="runs-table-title", classes="runs-title")
        yield FittedTable(id="runs-table", cursor_type="row")
        yield Log(id="runs-log", highlight=False)
        yield KeysFooter(compact=self.app.size.width < COMPACT_FOOTER_BELOW)

    def on_mount(self) -> None:
        self.query_one("#runs-live", DataTable).display = False
        self.query_one("#runs-live-title", Static).display = False
        self.query_one("#runs-progress", Static).display = False  # shown once a batch starts: no blank row
        self.action_reload()
        self.query_one("#runs-scope", Select).focus()
        from benchtui.tui.store_watch import watch_store

        watch_store(self, self.action_reload)  # runs started elsewhere appear in the history

    # -- history -----------------------------------------------------------------------
    def action_reload(self) -> None:
        """The run history, newest first. A run highlighted below the top stays
        highlighted; on the top row the cursor stays on the newest run."""
        table = self.query_one("#runs-table", DataTable)
        keep = None
        if table.row_count and table.cursor_row > 0:
            try:
                keep = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
            except Exception:
                keep = None
        recent = queries.recent_runs(self.app.store, 100)
        said = queries.no_answer_words(self.app.store, recent)  # `waiting`, as `results` says it
        fill_runs(table, [(f"run:{r['id']}", (str(r["id"]), r["model"], r["challenge"], r["status"] or "",
                                                verdict_text(said.get(r["id"]) or r["verdict"] or r["status"]),
                                                message_text(r["message"]), r.get("node") or ""))
                          for r in recent])
        if keep is not None:
            try:  # noqa: SIM105 - a best-effort step: try/except keeps the skipped failure visible where it is
                table.move_cursor(row=table.get_row_index(keep), scroll=True)
            except Exception:
                pass  # that run is no longer among the latest

    def selection(self) -> list[tuple[str, str]]:
        scope = self.query_one("#runs-scope", Select).value
        pairs = answers_sql.answered_cells(self.app.store)
        if scope == "all" or self.cell is None:
            return pairs
        model, challenge = self.cell
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
        self.batch_rows = {f"q:{model}/{challenge}": ["", model, challenge, "queued", "", "", ""] for model, challenge in pairs}
        self.render_live()
        self.query_one("#runs-live", DataTable).display = True
        self.query_one("#runs-live-title", Static).display = True
        self.query_one("#runs-progress", Static).display = True
        if not isinstance(self.focused, DataTable):
            # the runs are what to watch now, and enter there shows a log (on a
            # selector it would open its dropdown again)
            self.query_one("#runs-table", DataTable).focus()
        self.running = True
        self.cancel_event = threading.Event()
        from benchtui.host.config import default_cluster

        cluster = default_cluster()
        self.query_one("#runs-progress", Static).update(f"starting {len(pairs)} run(s) on {backend}"
                                                         + (f", on the cluster {cluster}" if cluster else "") + "…")
        self.run_batch(pairs, backend, self.cancel_event)

    @work(thread=True, exclusive=True, group="runs")
    def run_batch(self, pairs: list[tuple[str, str]], backend: str, cancel: threading.Event) -> None:
        from benchtui.host.backends import BackendUnavailable

        try:
            from benchtui.host.config import default_cluster
            from benchtui.runner.orchestrate import run_answers

            address = default_cluster()  # [cluster] address in the config file, or $BENCHTUI_CLUSTER
            if address is None:
                run_answers(self.app.workbench, pairs, backend=backend, cancel=cancel,
                            on_event=lambda e: self.post_message(RunProgress(e)))
            else:
                from benchtui.cluster.ray_cluster import open_cluster

                # x cancels the Ray tasks too (force: their workers and sandboxes go)
                with open_cluster(address) as cluster:
                    run_answers(self.app.workbench, pairs, backend=backend, cancel=cancel, cluster=cluster, jobs=None,
                                on_event=lambda e: self.post_message(RunProgress(e)))
        except BackendUnavailable as exc:  # the machine's, not the answers': none is run or recorded
            self.post_message(RunsDone(len(pairs), cancel.is_set(), refused=str(exc)))
            return
        except Exception as exc:
            self.app.call_from_thread(self.app.report_error, "runs stopped", exc)
        self.post_message(RunsDone(len(pairs), cancel.is_set()))

    def render_live(self) -> None:
        """The batch's rows, rebuilt from ``self.batch_rows`` (a few rows: cheap);
        the highlighted row stays highlighted."""
        table = self.query_one("#runs-live", FittedTable)
        newest = max((int(r["id"]) for r in queries.recent_runs(self.app.store, 1)), default=0)
        fill_runs(table, [(key, tuple(row)) for key, row in self.batch_rows.items()],
                  {"run": len(str(newest + len(self.batch_rows))), "state": max(map(len, STATES)),
                   "verdict": max(verdict_text(v).cell_len for v in VERDICTS)})

    def on_run_progress(self, message: RunProgress) -> None:
        e = message.event
        row = self.batch_rows.get(f"q:{e.model}/{e.challenge}")
        if row is not None:  # else a pair this screen did not queue: ignore
            row[3] = e.kind
            if e.run_id is not None:
                row[0] = str(e.run_id)
            if e.verdict:
                row[4] = verdict_text(e.verdict)
            row[5] = message_text(e.message)
            if getattr(e, "node", ""):
                row[6] = e.node
            self.render_live()
        # Counted here from the rows: a `started` event carries no count of the runs already done.
        done = sum(1 for r in self.batch_rows.values() if r[3] in ENDED)
        where = f" on node {e.node}" if getattr(e, "node", "") and e.kind in ("running", "retrying") else ""
        self.query_one("#runs-progress", Static).update(f"{done}/{len(self.batch_rows) or e.total} done · "
                                                         f"{e.model}/{e.challenge}: {e.kind}{where}")
        if e.kind in ENDED:
            # "cancelled before it started", not "cancelled cancelled before it started"
            kind = "" if e.message.startswith(e.kind) else e.kind
            self.query_one(Log).write_line(" ".join(
                part for part in (f"{e.model}/{e.challenge}:", kind, e.verdict, e.message) if part))
            self.action_reload()  # the history gains the run that just ended

    def batch_summary(self) -> str:
        """What became of the batch, by state: "35 of 35 finished", "7 finished, 28
        cancelled" (of a batch of 35), "1 refused"."""
        counts: dict[str, int] = {}
        for row in self.batch_rows.values():
            counts[row[3]] = counts.get(row[3], 0) + 1
        order = [s for s in STATES if s in counts]
        if len(order) == 1 and len(self.batch_rows) > 1:
            return f"{len(self.batch_rows)} of {len(self.batch_rows)} {order[0]}"
        parts = ", ".join(f"{counts[s]} {s}" for s in order) or "nothing run"
        return parts + (f" (a batch of {len(self.batch_rows)})" if len(order) > 1 else "")

    def on_runs_done(self, message: RunsDone) -> None:
        self.running = False
        if message.refused:
            for row in self.batch_rows.values():
                if row[3] == "queued":
                    row[3], row[5] = "refused", message_text(message.refused)
            self.render_live()
            self.query_one(Log).write_line(f"refused: {message.refused}")
        summary = self.batch_summary()
        self.query_one("#runs-progress", Static).update(summary)
        if message.refused:
            self.notify(f"runs refused: {message.refused}", severity="warning", timeout=10)
        else:
            self.notify(f"runs {'cancelled' if message.cancelled else 'done'}: {summary}", timeout=5)
        self.action_reload()

    def action_cancel(self) -> None:
        if self.cancel_event and self.running:
            self.cancel_event.set()
            self.notify("cancelling: running children are stopped", timeout=3)
        else:
            self.notify("nothing is running", timeout=2)

    # -- logs --------------------------------------------------------------------------
    @on(DataTable.RowSelected)
    def show_log(self, event: DataTable.RowSelected) -> None:
        table = event.data_table
        run_cell = str(table.get_cell(event.row_key, "run"))
        log = self.query_one(Log)
        log.clear()
        if not run_cell:
            log.write_line("this run has not started yet")
            return
        run = queries.run_row(self.app.store, int(run_cell))
        if run is None:
            log.write_line("run not found")
            return
        where = " ".join(p for p in (run["backend"], f"({run['device']})" if run["device"] else "") if p)
        log.write_line(" ".join(p for p in (f"run #{run['id']}", f"{run['model']}/{run['challenge']}", run["status"],
                                            run["verdict"], f"on {where}" if where else "",
                                            f"node {run['node']}" if run.get("node") else "") if p))
        if run["message"]:
            log.write_line(run["message"])
        for title, key in (("stdout", "stdout"), ("stderr", "stderr"), ("self-check", "self_output")):
            if run[key]:
                log.write_line(f"--- {title} ---")
                log.write_lines(str(run[key]).splitlines())
        for c in queries.run_checks(self.app.store, run["id"]):
            value, threshold = check_value(c["value"]), check_value(c["threshold"])
            log.write_line(" ".join(p for p in (f"[{c['verdict']}] {c['name']}:", value,
                                                f"(threshold {threshold})" if threshold else "", c["message"]) if p))

    def on_unmount(self) -> None:
        if self.cancel_event is not None:
            self.cancel_event.set()  # leaving the screen stops its runs rather than orphaning them
