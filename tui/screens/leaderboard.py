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


def rankings_table(lb) -> Table:
    t = Table(title="Rankings (overall grade)", expand=True, title_justify="left")
    # "#" and "model" keep their width at 80 columns; the rest may shrink.
    for col, min_width in (("#", 2), ("model", 12), ("mean", None), ("graded", None), ("best", None), ("worst", None), ("pass rate", None)):
        t.add_column(col, no_wrap=True, min_width=min_width)
    for s in lb.model_summaries:
        rate = f"{s.passed}/{s.verified}" if s.verified else "—"
        t.add_row(str(s.rank or "—"), s.model, Text(s.band, style="bold " + grade_style(s.band)), str(s.graded),
                  f"{s.best or '—'} {s.best_letter or ''}", f"{s.worst or '—'} {s.worst_letter or ''}", rate)
    return t


def winners_table(lb) -> Table:
    t = Table(title="Per-challenge winners", expand=True, title_justify="left")
    for col in ("challenge", "winner(s)", "best", "mean", "passed"):
        t.add_column(col)
    for c in lb.challenge_summaries:
        t.add_row(c.title, ", ".join(c.winners) or "—", c.best_letter or "—", c.band,
                  f"{c.passed}/{c.verified}" if c.verified else "—")
    return t


def h2h_table(lb) -> Table:
    t = Table(title="Head to head (wins-losses-ties)", expand=True, title_justify="left")
    t.add_column("model")
    t.add_column("vs")
    t.add_column("record")
    t.add_column("over")
    for h in lb.head_to_head:
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
        lb = message.board
        self.query_one("#leader-rank", Static).update(rankings_table(lb))
        self.query_one("#leader-plot", Static).update(grade_histogram(lb, width=max(10, self.size.width // 3)))
        self.query_one("#leader-winners", Static).update(winners_table(lb))
        self.query_one("#leader-h2h", Static).update(h2h_table(lb))
