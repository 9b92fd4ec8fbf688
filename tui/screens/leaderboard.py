"""Rankings, per-challenge winners, head-to-head records and a grade histogram."""
from __future__ import annotations

from collections import Counter

from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from tui.screens.base import GuardedScreen
from textual.widgets import Footer, Header, Static

from engine.grades import LETTERS
from tui.glyphs import grade_style


def _best_worst(letter: str | None, challenge: str | None) -> Text:
    """The grade first, then the challenge: a narrow column cuts the name, never the grade."""
    if not letter:
        return Text("—")
    return Text.assemble((letter, "bold " + grade_style(letter)), f" {challenge or ''}")


def rankings_table(lb, width: int | None = None) -> Table:
    """``width``: the cells the table gets; best/worst then share what the others leave."""
    kinds = Counter(g.grader_kind for g in getattr(lb, "matrix", {}).values())
    counted = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) or "none yet"
    t = Table(title=f"Rankings (overall grade: a person's, else a judge's; {counted})", expand=True, title_justify="left")
    summaries = list(lb.model_summaries)
    # Every column but best/worst keeps its full width at 80 columns (a mean band such as
    # "A-/B+" is never cut to "A…"); best/worst shrink, cutting the challenge name only.
    widest = lambda values, floor: max([floor, *(len(v) for v in values)])  # noqa: E731
    columns = (("#", widest([str(s.rank or "—") for s in summaries], 1)),
               ("model", min(widest([s.model for s in summaries], 5), 24)),
               ("mean", widest([s.band or "" for s in summaries], 4)),
               ("graded", 6), ("best", 4), ("worst", 5), ("passed", 6))
    share = None
    if width:
        fixed = sum(w for c, w in columns if c not in ("best", "worst")) + 3 * len(columns) + 1
        share = max((width - fixed) // 2, 5)
    for col, min_width in columns:
        t.add_column(col, no_wrap=True, min_width=min_width, overflow="ellipsis",
                     max_width=share if col in ("best", "worst") else None)
    for s in summaries:
        rate = f"{s.passed}/{s.verified}" if s.verified else "—"
        t.add_row(str(s.rank or "—"), s.model, Text(s.band, style="bold " + grade_style(s.band)), str(s.graded),
                  _best_worst(s.best_letter, s.best), _best_worst(s.worst_letter, s.worst), rate)
    return t


def winners_table(lb) -> Table:
    t = Table(title="Per-challenge winners", expand=True, title_justify="left")
    for col in ("challenge", "winner(s)", "best", "mean", "passed"):
        t.add_column(col)
    for c in lb.challenge_summaries:
        t.add_row(c.title, ", ".join(c.winners) or "—", c.best_letter or "—", c.band,
                  f"{c.passed}/{c.verified}" if c.verified else "—")
    return t


H2H_LEGEND = ("record: the left model's wins-losses-ties against the right one, over the challenges both "
              "have an overall grade for. leads = more wins than losses, trails = fewer, "
              "level = as many wins as losses (even).")


def h2h_table(lb) -> Table:
    t = Table(title="Head to head (wins-losses-ties)", expand=True, title_justify="left",
              caption=H2H_LEGEND, caption_justify="left")
    t.add_column("model")
    t.add_column("vs")
    t.add_column("record (W-L-T)")
    t.add_column("over")
    for h in lb.head_to_head:
        if not h.challenges:  # nothing graded for both: no record to speak of
            t.add_row(h.model_a, h.model_b, Text("—", style="dim"), Text("no challenge graded for both", style="dim"))
            continue
        t.add_row(h.model_a, h.model_b, h.text, f"{len(h.challenges)} challenge(s)")
    return t


def grade_histogram(lb, width: int = 40) -> Text:
    """One bar per letter: how many current overall grades have it."""
    counts = Counter(g.letter for g in lb.matrix.values())
    out = Text("Grade distribution\n", style="bold")
    top = max(counts.values(), default=0)
    for letter in LETTERS:
        n = counts.get(letter, 0)
        bar = "█" * (round(n / top * width) if top else 0)
        out.append(f"{letter:<3}", style="bold")
        out.append(bar or " ", style=grade_style(letter))
        out.append(f" {n}\n", style="dim")
    return out


class LeaderboardScreen(GuardedScreen):
    BINDINGS = [Binding("escape", "app.pop_screen", "Back", id="leaderboard.back"),
                Binding("ctrl+r", "reload", "Refresh", id="leaderboard.refresh")]

    class Loaded(Message):
        def __init__(self, board, error: str | None = None) -> None:
            super().__init__()
            self.board, self.error = board, error

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="leader-body"):
            yield Static("computing…", id="leader-rank", classes="leader-pane")
            yield Static(id="leader-plot", classes="leader-pane")
            yield Static(id="leader-winners", classes="leader-pane")
            yield Static(id="leader-h2h", classes="leader-pane")
        yield Footer()

    def on_mount(self) -> None:
        self.action_reload()

    def action_reload(self) -> None:
        self.compute()

    @work(thread=True, exclusive=True, group="leaderboard")
    def compute(self) -> None:
        try:
            from engine.aggregates import leaderboard

            with self.app.open_store() as store:
                board = leaderboard(store)
        except Exception as exc:
            self.post_message(self.Loaded(None, f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(self.Loaded(board))

    def on_leaderboard_screen_loaded(self, message: Loaded) -> None:
        if message.error:
            self.query_one("#leader-rank", Static).update(f"leaderboard unavailable: {message.error}")
            self.app.report_error("leaderboard", message.error)
            return
        self.board = message.board
        self.show_board()

    def on_resize(self) -> None:
        if getattr(self, "board", None) is not None:
            self.show_board()

    def show_board(self) -> None:
        lb = self.board
        self.query_one("#leader-rank", Static).update(rankings_table(lb, width=self.size.width - 2))
        self.query_one("#leader-plot", Static).update(grade_histogram(lb, width=max(10, self.size.width // 3)))
        self.query_one("#leader-winners", Static).update(winners_table(lb))
        self.query_one("#leader-h2h", Static).update(h2h_table(lb))
