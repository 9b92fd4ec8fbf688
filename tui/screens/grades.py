"""Grade one answer: a letter per rubric dimension, +/- steps, a note, the
history, judge grades beside yours, and a blind mode."""
from __future__ import annotations

import itertools

from benchtui.grading import grades as G
from benchtui.store import answers_sql
from benchtui.tui.glyphs import grade_style
from benchtui.tui.screens.base import COMPACT_FOOTER_BELOW
from benchtui.tui.screens.whole_frame import ReadAheadScreen
from benchtui.tui.widgets.footer import KeysFooter
from benchtui.tui.widgets.title_bar import TitleBar
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import DataTable, Input, Static


def step_letter(letter: str | None, step: int) -> str | None:
    """'B' +1 -> 'B+', 'B+' +1 -> 'A-', 'A' +1 -> 'A'; None stays None."""
    if letter is None:
        return None
    i = G.LETTERS.index(letter) - step  # LETTERS is best first
    return G.LETTERS[max(0, min(i, len(G.LETTERS) - 1))]


class GradesScreen(ReadAheadScreen):
    # Below 100 columns the rubric goes under the table, so grades and judge names keep their width.
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]
    BINDINGS = [
        Binding("escape", "back", "Back", id="grades.back"),
        # The letters are listed at the top of the rubric pane, not in the footer: five
        # there pushed `q Quit` and `? Help` off an 80-column footer.
        Binding("a", "letter('A')", "A", id="grades.a", show=False),
        Binding("b", "letter('B')", "B", id="grades.b", show=False),
        Binding("c", "letter('C')", "C", id="grades.c", show=False),
        Binding("d", "letter('D')", "D", id="grades.d", show=False),
        Binding("f", "letter('F')", "F", id="grades.f", show=False),
        Binding("plus,equals_sign", "step(1)", "Raise", id="grades.plus"),  # B to B+: "+ +" said nothing
        Binding("minus", "step(-1)", "Lower", id="grades.minus"),
        Binding("N", "note", "Note", id="grades.note"),
        Binding("x", "blind", "Blind", id="grades.blind"),
        Binding("right_square_bracket", "next_ungraded", "Next ungraded", id="grades.next"),
    ]

    class Loaded(Message):
        def __init__(self, current: list, history: list, notes: list, seq: int) -> None:
            super().__init__()
            self.current, self.history, self.notes = current, history, notes
            self.seq = seq  # when the read began: a later read saw at least as much

    def __init__(self, model: str, challenge: str, *, blind: bool = False) -> None:
        super().__init__()
        self.model, self.challenge = model, challenge
        self.blind = blind
        self.mine: dict[str, str] = {}       # dimension -> my current letter
        self.judges: dict[str, list[str]] = {}  # dimension -> "letter (judge)" strings
        self.grader = G.default_grader_name()
        self._pending: dict[str, str] = {}  # dimension -> letter stepped to, not yet written
        self._stored: dict[str, str] = {}   # dimension -> my letter as the store holds it
        self._step_timer = None
        self._rubric_shown: Text | None = None  # show_rubric's last text
        # Loads run in threads and may finish out of order; an older read arriving
        # last would hide a note just saved, so each read is numbered as it starts.
        self._load_seq = itertools.count(1)
        self._shown_seq = 0

    def compose(self) -> ComposeResult:
        yield TitleBar()
        yield Static(id="grades-title", classes="title-bar")
        with Horizontal(id="grades-body"):
            with Vertical(id="grades-table"):
                yield DataTable(id="grades-dims", cursor_type="row")
                yield Static("history", classes="status")
                yield DataTable(id="grade-history", cursor_type="row")
            yield Static(id="rubric")
        yield Input(placeholder="note on this answer (enter saves, esc cancels)", id="grade-note")
        yield KeysFooter(compact=self.app.size.width < COMPACT_FOOTER_BELOW)

    def on_mount(self) -> None:
        self.query_one("#grade-note").display = False
        table = self.query_one("#grades-dims", DataTable)
        table.add_column("dimension", key="dim")
        table.add_column("yours", key="mine")
        table.add_column("judges", key="judges")
        for d in G.DIMENSIONS:
            table.add_row(d.title, "", "", key=d.id)
        table.move_cursor(row=len(G.DIMENSIONS) - 1)  # overall first: it is the one the matrix shows
        table.focus()
        self.fill_or_load()

    def read(self, app) -> Loaded:
        seq = next(self._load_seq)
        with app.open_store() as store:
            current = G.current_grades(store, dimension=None, model=self.model, challenge=self.challenge)
            history = G.grade_history(store, self.model, self.challenge)
            notes = G.notes_for(store, self.model, self.challenge)
        return self.Loaded(current, history, notes, seq)

    def read_ahead(self, app) -> list:
        return [self.read(app)]

    def load_self(self) -> None:
        self.load()

    @work(thread=True, exclusive=True, group="grades-load")
    def load(self) -> None:
        try:
            loaded = self.read(self.app)
        except Exception as exc:
            self.app.call_from_thread(self.app.report_error, "loading grades", exc)
            return
        self.post_message(loaded)

    def on_grades_screen_loaded(self, message: Loaded) -> None:
        if message.seq < self._shown_seq:
            return  # a read that began before the one already shown: stale
        self._shown_seq = message.seq
        self._stored = {g.dimension: g.letter for g in message.current if g.grader == self.grader}
        self.mine = {**self._stored, **self._pending}  # steps not yet written stay shown
        self.judges = {}
        for g in message.current:
            if g.grader_kind == "judge":
                self.judges.setdefault(g.dimension, []).append(f"{g.display} ({g.grader})")
        self.history = message.history
        self.notes = message.notes
        self.refresh_view()

    @property
    def hidden(self) -> bool:
        """Blind mode hides names and judges until the human overall grade is saved."""
        return self.blind and G.OVERALL not in self.mine

    def refresh_view(self) -> None:
        hidden = self.hidden
        title = Text()
        title.append("answer under review" if hidden else f"{self.model} / {self.challenge}", style="bold")
        if hidden:
            title.append(f"  ({self.challenge}; blind: model and judges hidden until you grade overall)", style="dim")
        elif self.blind:
            title.append("  (blind mode: on from the next ungraded answer)", style="dim")
        title.append(f"   grader: {self.grader}", style="dim")
        self.query_one("#grades-title", Static).update(title)
        table = self.query_one("#grades-dims", DataTable)
        # Rows are rebuilt (not updated in place): a column's width follows its widest
        # cell, so no grade or judge name is cut, and a row has one line per judge.
        cursor = table.cursor_row
        table.clear()
        for d in G.DIMENSIONS:
            mine = self.mine.get(d.id)
            judges = [] if hidden else self.judges.get(d.id, [])
            table.add_row(d.title, Text(mine or "·", style="bold " + grade_style(mine)),
                          Text("\n".join(judges) or ("hidden" if hidden else "—"), style="italic dim"),
                          key=d.id, height=max(1, len(judges)))
        table.move_cursor(row=cursor)
        hist = self.query_one("#grade-history", DataTable)
        hist.clear(columns=True)
        hist.add_columns("when", "dimension", "grade", "by", "note")
        # Grades and notes in one list, newest first: a note just saved is the top row.
        rows = []
        for g in getattr(self, "history", []):
            if hidden and g.grader_kind == "judge":
                continue
            style = "strike dim" if not g.valid else ""
            rows.append((g.created_at or "", (g.created_at or "")[:16], g.dimension, Text(g.display, style=style),
                         "judge" if hidden and g.grader_kind == "judge" else g.grader, g.note or ""))
        for n in getattr(self, "notes", []):
            rows.append((n.created_at, n.created_at[:16], Text("note", style="bold cyan"), "", n.author, n.text))
        for row in sorted(rows, key=lambda r: r[0], reverse=True):
            hist.add_row(*row[1:])
        self.show_rubric()

    def current_dimension(self) -> G.Dimension:
        table = self.query_one("#grades-dims", DataTable)
        return G.DIMENSIONS[max(0, min(table.cursor_row, len(G.DIMENSIONS) - 1))]

    @on(DataTable.RowHighlighted, "#grades-dims")
    def show_rubric(self, event: object = None) -> None:
        d = self.current_dimension()
        # The keys first: the pane is 7 rows tall at 80x24, and a hint at its end was cut.
        text = Text("a b c d f: set the letter   + -: step   N: note   ]: next ungraded   x: blind\n", style="dim")
        text.append(d.title + "\n", style="bold")
        text.append(d.description + "\n\n")
        mine = self.mine.get(d.id)
        text.append("yours: ", style="dim")
        text.append(mine or "—", style="bold " + grade_style(mine))
        if not self.hidden:
            for judge in self.judges.get(d.id, []):
                text.append(f"   judge: {judge}", style="italic dim")
        if text == self._rubric_shown:
            return  # the cursor's own highlight events, after the first frame: no layout for nothing
        self._rubric_shown = text
        self.query_one("#rubric", Static).update(text)

    # -- grading -------------------------------------------------------------------
    def nothing_to_grade(self) -> bool:
        """As `benchtui grades set` refuses it: a cell whose folder holds no answer
        (only its prompt) is shown with its judges' grades, never graded here."""
        try:
            why = G.missing_answer(self.app.store, self.model, self.challenge)
        except Exception as exc:
            self.app.report_error("grade not saved", exc)
            return True
        if why:
            self.notify(f"{why}: nothing to grade (`benchtui grades set ... --allow-missing` grades it anyway)",
                        severity="warning", timeout=6)
        return bool(why)

    def action_letter(self, letter: str) -> None:
        if self.nothing_to_grade():
            return
        self.save(self.current_dimension().id, letter)

    STEP_SETTLE_S = 1.0  # +/- steps within this long make one history row: the letter you stop at

    def action_step(self, step: int) -> None:
        if self.nothing_to_grade():
            return
        dim = self.current_dimension().id
        new = step_letter(self.mine.get(dim), step)
        if new is None:
            self.notify("set a letter first (a b c d f)", severity="warning", timeout=3)
            return
        self.mine[dim] = new  # shown at once; written once the stepping stops
        self.refresh_view()
        self._pending[dim] = new
        if self._step_timer is not None:
            self._step_timer.stop()
        self._step_timer = self.set_timer(self.STEP_SETTLE_S, self.flush_steps)

    def flush_steps(self, reload: bool = True) -> None:
        """Write the letters the +/- steps stopped at (one row per dimension)."""
        if self._step_timer is not None:
            self._step_timer.stop()
            self._step_timer = None
        pending, self._pending = self._pending, {}
        wrote = False
        for dim, letter in pending.items():
            if letter == self._stored.get(dim):
                continue  # stepped back to where it was: nothing to record
            # Here, not in a worker: this also runs as the screen goes away, when its
            # workers are cancelled; one insert takes a few ms.
            try:
                G.set_grade(self.app.store, self.model, self.challenge, letter, dimension=dim, grader=self.grader)
                self._stored[dim] = letter
                wrote = True
            except Exception as exc:
                self.app.report_error(f"grade {letter} not saved", exc)
        if wrote and reload:
            self.load()

    def save(self, dimension: str, letter: str, note: str | None = None) -> None:
        self.flush_steps()
        self.mine[dimension] = letter  # shown at once; the worker makes it durable
        self.refresh_view()
        self.write_grade(dimension, letter, note)

    @work(thread=True, group="grades-write")  # not exclusive: a write is never cancelled
    def write_grade(self, dimension: str, letter: str, note: str | None) -> None:
        try:
            with self.app.open_store() as store:
                G.set_grade(store, self.model, self.challenge, letter, dimension=dimension,
                            grader=self.grader, note=note)
        except Exception as exc:
            self.app.call_from_thread(self.app.report_error, f"grade {letter} not saved", exc)
        self.load()

    def action_note(self) -> None:
        box = self.query_one("#grade-note", Input)
        box.display = True
        box.focus()

    @on(Input.Submitted, "#grade-note")
    def note_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        event.input.value = ""
        event.input.display = False
        self.query_one("#grades-dims").focus()
        if text:
            self.flush_steps()
            self.write_note(text)

    @work(thread=True, group="grades-write")
    def write_note(self, text: str) -> None:
        try:
            with self.app.open_store() as store:
                G.add_note(store, self.model, self.challenge, text, author=self.grader)
        except Exception as exc:
            self.app.call_from_thread(self.app.report_error, "note not saved", exc)
        self.load()

    def action_blind(self) -> None:
        self.blind = not self.blind
        self.refresh_view()
        if not self.blind:
            self.notify("blind mode off: model and judges shown", timeout=3)
        elif G.OVERALL in self.mine:  # nothing to hide: say so, or the key seems to do nothing
            self.notify("blind mode on, but you have already graded this answer overall, so its model and judges "
                        "stay shown; ] opens the next ungraded answer blind", timeout=8)
        else:
            self.notify("blind mode on: model and judges hidden until you grade overall", timeout=3)

    def action_next_ungraded(self) -> None:
        self.flush_steps(reload=False)
        with self.app.open_store() as store:
            rows = answers_sql.ungraded_by(store, self.grader, G.OVERALL)
        rows = [r for r in rows if r != (self.model, self.challenge)]
        if not rows:
            self.notify("every answer has your overall grade", timeout=3)
            return
        self.app.switch_screen(GradesScreen(*rows[0], blind=self.blind))

    def action_back(self) -> None:
        box = self.query_one("#grade-note", Input)
        if box.display:
            box.display = False
            self.query_one("#grades-dims").focus()
            return
        self.flush_steps(reload=False)
        self.app.pop_screen()

    def on_unmount(self) -> None:
        self.flush_steps(reload=False)  # quitting or switching screens never loses the letter stepped to
