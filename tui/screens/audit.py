"""Suite strength: each challenge's mutation score, its survivors, and the
highlighted survivor as a diff against the original. `e`/`n` mark a survivor
equivalent or not (stored, kept across audits); `A` asks (how many answers, a
cap of mutants per answer) then runs an audit in a worker, its counts filling
the table as mutants finish; `x` cancels it, and the rows it left say partial."""
from __future__ import annotations

import threading

from benchtui.tui.diffing import diff_texts
from benchtui.tui.screens.base import COMPACT_FOOTER_BELOW, GuardedScreen
from benchtui.tui.widgets.diff_view import DiffView
from benchtui.tui.widgets.footer import KeysFooter
from benchtui.tui.widgets.title_bar import TitleBar
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable, Static

# The README's advice (`benchtui audit --jobs 2 --mutants 40`): a whole audit of the demo is
# ~2,000 mutants, an hour or more; 40 per answer spread over the operators says most of it.
MUTANTS_PER_ANSWER = 40
JOBS = 2
SECONDS_PER_MUTANT = (1.1, 2.1)  # the README's measured cost with 2 jobs on 2 cores


def measured(answer: dict) -> int:
    """Mutants of an answer's audit that have an outcome (a cancelled one has fewer than planned)."""
    return sum(answer.get(k) or 0 for k in ("killed", "survived", "equivalent", "error"))


def _pct(score) -> str:
    return "—" if score is None else f"{score:.0%}"


def _score_style(score) -> str:
    if score is None:
        return "dim"
    return "green" if score >= 0.95 else "yellow" if score >= 0.8 else "red"


class AuditScreen(GuardedScreen):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="audit.back"),
        Binding("e", "mark(True)", "Equivalent", id="audit.equivalent"),
        Binding("n", "mark(False)", "Not equivalent", id="audit.not_equivalent"),
        Binding("A", "start", "Audit", id="audit.start"),
        Binding("x", "cancel", "Cancel", id="audit.cancel"),
        Binding("ctrl+r", "reload", "Refresh", id="audit.refresh", show=False),
    ]

    class Loaded(Message):
        def __init__(self, reports: list | None, error: str | None = None) -> None:
            super().__init__()
            self.reports, self.error = reports, error

    class DiffReady(Message):
        def __init__(self, key: str, diff, text: str) -> None:
            super().__init__()
            self.key, self.diff, self.text = key, diff, text

    class Progress(Message):
        def __init__(self, text: str, finished: bool = False, challenge: str = "", status: str = "") -> None:
            super().__init__()
            self.text, self.finished = text, finished
            self.challenge, self.status = challenge, status  # a mutant's outcome, counted live

    class Counted(Message):
        """What `A` would audit: passing answers and challenge references."""

        def __init__(self, answers: int, references: int, error: str = "") -> None:
            super().__init__()
            self.answers, self.references, self.error = answers, references, error

    def __init__(self) -> None:
        super().__init__()
        self.reports: list[dict] = []
        self.survivors: dict[str, dict] = {}
        self.cancel = threading.Event()
        self.running = False
        self.live: dict[str, dict[str, int]] = {}  # challenge -> outcome -> count, while an audit runs

    def compose(self) -> ComposeResult:
        yield TitleBar()
        yield Static("loading the stored audits…", id="audit-status")
        yield DataTable(id="audit-challenges", cursor_type="row")
        yield DataTable(id="audit-survivors", cursor_type="row")
        yield DiffView(id="audit-diff")
        yield KeysFooter(compact=self.app.size.width < COMPACT_FOOTER_BELOW)

    def on_mount(self) -> None:
        t = self.query_one("#audit-challenges", DataTable)
        t.add_columns("challenge", "score", "killed", "survived", "likely equiv.", "mutants", "answers")
        s = self.query_one("#audit-survivors", DataTable)
        s.add_columns("model", "where", "mutation", "status", "checks that ran")
        t.focus()
        self.action_reload()

    def action_reload(self) -> None:
        self.load()

    @work(thread=True, exclusive=True, group="audit-load")
    def load(self) -> None:
        try:
            from benchtui.audit.report import challenge_reports

            with self.app.open_store() as store:
                reports = challenge_reports(store)
        except Exception as exc:
            self.post_message(self.Loaded(None, f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(self.Loaded(reports))

    def on_audit_screen_loaded(self, message: Loaded) -> None:
        if message.error:
            self.query_one("#audit-status", Static).update(f"audits unavailable: {message.error}")
            self.app.report_error("audit", message.error)
            return
        self.reports = message.reports
        table = self.query_one("#audit-challenges", DataTable)
        row = table.cursor_row
        table.clear()
        partial = False
        for c in self.reports:
            done = sum(measured(a) for a in c["answers"])
            answers = ", ".join(f"{a['model']} {_pct(a['score'])}" + (f" partial {measured(a)}/{a['mutants']}"
                                                                        if measured(a) < a["mutants"] else "")
                                for a in c["answers"])
            mutants = str(c["mutants"]) if done >= c["mutants"] else f"{done} of {c['mutants']}"
            partial = partial or done < c["mutants"]
            table.add_row(c["challenge"], Text(_pct(c["score"]), style=_score_style(c["score"])), str(c["killed"]),
                          str(c["survived"]), str(c["equivalent"]), mutants, answers, key=c["challenge"])
        if not self.running:
            note = ("; partial: an audit was cancelled or stopped, its counts are of the mutants that ran "
                    "(`A` resumes from its cache)" if partial else "")
            self.query_one("#audit-status", Static).update(
                "suite strength = killed / (killed + survived); likely-equivalent mutants are not counted" + note
                if self.reports else "nothing audited yet: `A` audits every passing answer (or `benchtui audit`)")
        if self.reports:
            table.move_cursor(row=min(row, len(self.reports) - 1))
            self.show_survivors(self.reports[min(row, len(self.reports) - 1)])

    @on(DataTable.RowHighlighted, "#audit-challenges")
    def challenge_highlighted(self, event: DataTable.RowHighlighted) -> None:
        found = next((c for c in self.reports if c["challenge"] == event.row_key.value), None)
        if found:
            self.show_survivors(found)

    def show_survivors(self, report: dict) -> None:
        table = self.query_one("#audit-survivors", DataTable)
        table.clear()
        self.survivors = {}
        for a in report["answers"]:
            for s, status in [*((s, "survived") for s in a["survivors"]),
                              *((s, "marked equivalent" if s["marked"] else
                                 "allowed by the prompt" if s.get("why") else "likely equivalent")
                                for s in a["likely_equivalent"])]:
                key = f"{a['model']}\0{s['mutant_sha256']}"
                self.survivors[key] = {**s, "model": a["model"], "challenge": a["challenge"]}
                table.add_row(a["model"], f"{s['file']}:{s['line']}", s["description"],
                              Text(status, style="red" if status == "survived" else "dim"),
                              ", ".join(s["checks"][:4]) + (" …" if len(s["checks"]) > 4 else ""), key=key)
        if not self.survivors:
            self.query_one("#audit-diff", DiffView).show(None)

    @on(DataTable.RowHighlighted, "#audit-survivors")
    def survivor_highlighted(self, event: DataTable.RowHighlighted) -> None:
        s = self.survivors.get(event.row_key.value)
        if s:
            self.build_diff(event.row_key.value, s)

    @work(thread=True, exclusive=True, group="audit-diff")
    def build_diff(self, key: str, s: dict) -> None:
        from benchtui.audit.report import apply_diff, original_text

        with self.app.open_store() as store:
            original = original_text(store, self.app.workbench, s["model"], s["challenge"], s["file"])
        mutant = apply_diff(original, s["diff"]) if original is not None else None
        if mutant is None:  # the file changed since the audit: the stored diff is all there is
            self.post_message(self.DiffReady(key, None, s["diff"]))
            return
        self.post_message(self.DiffReady(key, diff_texts(original, mutant, f"{s['file']} (original)",
                                                         f"{s['file']} (mutant)"), ""))

    def on_audit_screen_diff_ready(self, message: DiffReady) -> None:
        view = self.query_one("#audit-diff", DiffView)
        view.show(message.diff)
        if message.diff is not None and view.changes:
            view.scroll_to(y=max(0, view.changes[0] - 3), animate=False)
        elif message.diff is None:
            self.query_one("#audit-status", Static).update("the file changed since this audit; its diff:\n" + message.text)

    def _current_survivor(self) -> dict | None:
        table = self.query_one("#audit-survivors", DataTable)
        if not self.survivors or table.row_count == 0:
            return None
        key = table.coordinate_to_cell_key((table.cursor_row, 0)).row_key.value
        return self.survivors.get(key)

    def action_mark(self, equivalent: bool) -> None:
        from benchtui.audit.report import mark
        from benchtui.grading.grades import default_grader_name

        s = self._current_survivor()
        if s is None:
            self.notify("no survivor highlighted")
            return
        with self.app.open_store() as store:
            mark(store, s["model"], s["challenge"], s["mutant_sha256"], equivalent, default_grader_name())
        self.notify(f"{s['file']}:{s['line']} {s['description']}: marked {'equivalent' if equivalent else 'not equivalent'}")
        self.load()

    def action_start(self) -> None:
        if self.running:
            self.notify("an audit is already running")
            return
        self.count_targets()

    @work(thread=True, exclusive=True, group="audit-count")
    def count_targets(self) -> None:
        """What an audit would take (the audit's own choice of targets), for the question."""
        import tempfile
        from pathlib import Path

        from benchtui.audit.core import REFERENCE, AuditOptions, Auditor

        try:
            with tempfile.TemporaryDirectory(prefix="benchtui-audit-count-") as tmp:
                targets = Auditor(self.app.workbench, AuditOptions(mutants=MUTANTS_PER_ANSWER)).targets(Path(tmp))
        except Exception as exc:
            self.post_message(self.Counted(0, 0, f"{type(exc).__name__}: {exc}"))
            return
        references = sum(1 for t in targets if t.model == REFERENCE)
        self.post_message(self.Counted(len(targets) - references, references))

    def on_audit_screen_counted(self, message: Counted) -> None:
        from benchtui.tui.screens.confirm import ConfirmScreen

        if message.error:
            self.app.report_error("audit", message.error)
            return
        n = message.answers + message.references
        if not n:
            self.notify("nothing to audit: no answer's latest run passes (run them first)", severity="warning")
            return
        most = n * MUTANTS_PER_ANSWER
        low, high = (round(most * s / 60) for s in SECONDS_PER_MUTANT)
        question = (f"Audit {message.answers} passing answers and {message.references} references, "
                    f"at most {MUTANTS_PER_ANSWER} mutants each (at most {most:,} mutants)?")
        detail = (f"About {low}-{high} min at {SECONDS_PER_MUTANT[0]}-{SECONDS_PER_MUTANT[1]} s a mutant with {JOBS} jobs "
                  "(less where a mutant is cached). The table fills in as mutants finish; x cancels, and the next "
                  "audit resumes from its cache. A whole audit: benchtui audit --jobs 2 (no --mutants).")

        def answered(yes: bool | None) -> None:
            if yes:
                self.start_audit()

        self.app.push_screen(ConfirmScreen(question, detail), answered)

    def start_audit(self) -> None:
        if self.running:
            return
        self.running = True
        self.live = {}
        self.cancel.clear()
        self.query_one("#audit-status", Static).update("audit: starting (baselines first)…")
        self.run_audit()

    def action_cancel(self) -> None:
        if self.running:
            self.cancel.set()
            self.query_one("#audit-status", Static).update("audit: cancelling after the mutants in flight…")

    @work(thread=True, exclusive=True, group="audit-run")
    def run_audit(self) -> None:
        from benchtui.audit.core import AuditOptions, run_audit

        def on_event(e) -> None:
            if e.kind == "planned":
                self.post_message(self.Progress(f"audit: {e.message}"))
            elif e.kind == "baseline":
                self.post_message(self.Progress(f"audit: baseline {e.model}/{e.challenge}: {e.status}"))
            elif e.kind == "mutant":
                self.post_message(self.Progress(f"audit: {e.done}/{e.total} {e.status} {e.model}/{e.challenge} {e.message}",
                                                challenge=e.challenge, status=e.status))

        try:
            run_audit(self.app.workbench, AuditOptions(jobs=JOBS, mutants=MUTANTS_PER_ANSWER), on_event=on_event,
                      cancel=self.cancel)
        except Exception as exc:
            self.post_message(self.Progress(f"audit failed: {type(exc).__name__}: {exc}", finished=True))
            return
        self.post_message(self.Progress("audit: done" if not self.cancel.is_set() else "audit: cancelled (resumes from its cache)",
                                        finished=True))

    def on_audit_screen_progress(self, message: Progress) -> None:
        self.query_one("#audit-status", Static).update(message.text)
        if message.challenge and message.status:
            self.count_live(message.challenge, message.status)
        if message.finished:
            self.running = False
            self.load()

    def count_live(self, challenge: str, status: str) -> None:
        """This audit's outcomes so far, in the challenge's row (the stored report replaces
        them when the audit ends): the table fills in as mutants finish."""
        tally = self.live.setdefault(challenge, {})
        tally[status] = tally.get(status, 0) + 1
        killed, survived = tally.get("killed", 0), tally.get("survived", 0)
        score = killed / (killed + survived) if killed + survived else None
        cells = [Text(_pct(score), style=_score_style(score)), str(killed), str(survived), str(tally.get("equivalent", 0)),
                 f"{sum(tally.values())} run", "auditing…"]
        table = self.query_one("#audit-challenges", DataTable)
        if challenge in table.rows:
            for column, value in zip(list(table.columns)[1:], cells):
                table.update_cell(challenge, column, value)
        else:
            table.add_row(challenge, *cells, key=challenge)
