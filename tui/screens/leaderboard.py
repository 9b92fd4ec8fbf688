"""Rankings, per-challenge winners, head-to-head records and a grade histogram."""
from __future__ import annotations

from collections import Counter
from functools import partial

from benchtui.grading.grades import LETTERS
from benchtui.tui.glyphs import grade_style
from benchtui.tui.screens.base import COMPACT_FOOTER_BELOW, GuardedScreen
from benchtui.tui.store_watch import store_fingerprint
from benchtui.tui.widgets.footer import KeysFooter
from benchtui.tui.widgets.title_bar import TitleBar
from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.strip import Strip
from textual.widgets import Static
from textual.worker import get_current_worker

NO_ANSWER_MARK = "(no answer)"  # engine/grading/exports.py's: a grade on an answer the workbench does not hold


def _answerless(lb) -> set:
    return getattr(lb, "no_answer", set())


def _best_worst(letter: str | None, challenge: str | None, no_answer: bool = False) -> Text:
    """The grade first, then the challenge: a narrow column cuts the name, never the grade."""
    if not letter:
        return Text("—")
    return Text.assemble((letter, "bold " + grade_style(letter)), f" {NO_ANSWER_MARK}" if no_answer else "",
                         f" {challenge or ''}")


def no_answer_caption(lb) -> str | None:
    """The export's note on grades of answers the workbench does not hold, which count all the same."""
    cells = sorted(_answerless(lb))
    if not cells:
        return None
    return (f"{NO_ANSWER_MARK}: graded, but the workbench holds no answer for it; the grade counts in the rankings, "
            "winners and records all the same: " + ", ".join(f"{m} on {c}" for m, c in cells))


def _captions(*lines: str | None) -> str | None:
    return "\n".join(line for line in lines if line) or None


def rankings_table(lb, width: int | None = None) -> Table:
    """``width``: the cells the table gets; best/worst then share what the others leave."""
    kinds = Counter(g.grader_kind for g in getattr(lb, "matrix", {}).values())
    counted = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) or "none yet"
    summaries = list(lb.model_summaries)
    t = Table(title=f"Rankings (overall grade: a person's, else a judge's; {counted})", expand=True, title_justify="left",
              caption=_captions(not_judged_caption(summaries, lambda s: s.model), no_answer_caption(lb)),
              caption_justify="left")
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
        t.add_row(str(s.rank or "—"), s.model + (" (folder gone)" if s.model in getattr(lb, "gone", ()) else ""),
                  Text(s.band, style="bold " + grade_style(s.band)), str(s.graded),
                  _best_worst(s.best_letter, s.best, (s.model, s.best) in _answerless(lb)),
                  _best_worst(s.worst_letter, s.worst, (s.model, s.worst) in _answerless(lb)), rate)
    return t


def not_judged_caption(summaries, name) -> str | None:
    """What the passed column leaves out: "passed of judged; not judged: m1 2 skipped: no GPU"."""
    apart = [f"{name(s)}: {', '.join(f'{n} {why}' for why, n in s.not_judged.items())}"
             for s in summaries if getattr(s, "not_judged", None)]
    return "passed: of the answers the suite judged; not judged: " + "; ".join(apart) if apart else None


def winners_rows(lb) -> list[tuple]:
    gone = _answerless(lb)
    return [(c.title, ", ".join(w + (f" {NO_ANSWER_MARK}" if gone and (w, c.challenge) in gone else "") for w in c.winners) or "—",
             c.best_letter or "—", c.band,
             f"{c.passed}/{c.verified}" if c.verified else "—") for c in lb.challenge_summaries]


def winners_table(lb, rows: list[tuple] | None = None, *, head: bool = True, tail: bool = True,
                  widths: list[int] | None = None) -> Table:
    """The per-challenge winners, or one slice of its ``rows`` (as h2h_table)."""
    t = (Table if widths is None else _FixedWidths)(
        title="Per-challenge winners" if head else None, expand=True, title_justify="left", show_header=head,
        caption=not_judged_caption(lb.challenge_summaries, lambda c: c.title) if tail else None, caption_justify="left")
    if widths is not None:
        t.widths = widths
    for col in ("challenge", "winner(s)", "best", "mean", "passed"):
        t.add_column(col)
    for row in winners_rows(lb) if rows is None else rows:
        t.add_row(*row)
    return t


H2H_LEGEND = ("record: the left model's wins-losses-ties against the right one, over the challenges both "
              "have an overall grade for. leads = more wins than losses, trails = fewer, "
              "level = as many wins as losses (even).")


H2H_HEADERS = ("model", "vs", "record (W-L-T)", "over")


def h2h_rows(lb) -> list[tuple]:
    """A row per pair with a challenge graded for both (the others have no record: the
    legend counts them); a model whose folder is gone says so."""
    name = getattr(lb, "shown_name", lambda m: m)
    gone = _answerless(lb)

    def over(h) -> str:
        answerless = sum(1 for c in h.challenges if (h.model_a, c) in gone or (h.model_b, c) in gone)
        return f"{len(h.challenges)} challenge(s)" + (f", {answerless} {NO_ANSWER_MARK}" if answerless else "")

    return [(name(h.model_a), name(h.model_b), h.text, over(h)) for h in lb.head_to_head if h.challenges]


def h2h_legend(lb) -> str:
    empty = sum(1 for h in lb.head_to_head if not h.challenges)
    return H2H_LEGEND + (f" {empty} pair{'s' if empty != 1 else ''} with no challenge graded for both "
                         "left out." if empty else "") + (f" {NO_ANSWER_MARK}: of those challenges, the ones graded "
                                                          "where the workbench holds no answer." if _answerless(lb) else "")


def h2h_table(lb, rows: list[tuple] | None = None, *, head: bool = True, tail: bool = True,
              widths: list[int] | None = None) -> Table:
    """The head-to-head table, or one slice of its ``rows``: ``head`` with the title
    and the column headers, ``tail`` with the legend, ``widths`` the whole table's."""
    t = (Table if widths is None else _FixedWidths)(
        title="Head to head (wins-losses-ties)" if head else None, expand=True, title_justify="left",
        caption=h2h_legend(lb) if tail else None, caption_justify="left", show_header=head)
    if widths is not None:
        t.widths = widths
    for name in H2H_HEADERS:
        t.add_column(name)
    for row in h2h_rows(lb) if rows is None else rows:
        t.add_row(*row)
    return t


class _FixedWidths(Table):
    """A table laid out with column widths given, not measured from its own rows
    (Rich's private ``_calculate_column_widths``; tests compare the lines with the
    whole table's, so a Rich that changes it fails there)."""

    widths: list[int] = []

    def _calculate_column_widths(self, console, options) -> list[int]:
        return list(self.widths)


H2H_CHUNK = 25  # rows rendered (~10 ms) between two looks at whether the screen is still wanted


def h2h_lines(lb, console, options, cancelled=lambda: False) -> list | None:
    """The head-to-head table's lines (1,225 rows at 50 models are ~0.5 s of Rich's
    work), rendered a slice at a time: see sliced_lines."""
    return sliced_lines(partial(h2h_table, lb), h2h_rows(lb), console, options, cancelled)


def sliced_lines(make_table, rows: list[tuple], console, options, cancelled=lambda: False) -> list | None:
    """The lines of ``make_table(rows)``, rendered H2H_CHUNK rows at a time, so that
    a screen left meanwhile stops it within a slice and the keys after it do not
    wait on it. Each slice (``make_table(part, head=, tail=, widths=)``) is laid out
    with the whole table's column widths and the borders between slices are cut: the
    lines are the whole table's. None once ``cancelled()``."""
    whole = make_table(rows)
    if len(rows) <= H2H_CHUNK:
        return console.render_lines(whole, options, pad=True, new_lines=False)
    widths = whole._calculate_column_widths(console, options.update_width(options.max_width - whole._extra_width))
    lines = []
    for start in range(0, len(rows), H2H_CHUNK):
        if cancelled():
            return None
        head, tail = start == 0, start + H2H_CHUNK >= len(rows)
        part = console.render_lines(make_table(rows[start:start + H2H_CHUNK], head=head, tail=tail, widths=widths),
                                    options, pad=True, new_lines=False)
        if not head:
            part = part[1:]  # the slice's top border
        if not tail:
            part = part[:-1]  # its bottom border
        lines.extend(part)
    return lines


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


class RenderedPane(Static):
    """A Static that shows its renderable as lines rendered once, off the UI
    thread, at a known width. Textual measures a Static's height by rendering
    it, on every layout pass: at 50 models the head-to-head table has 1,225
    rows and a pass cost ~0.7 s; here a pass reads ``len(lines)``, and a frame
    copies only the visible lines. ``render()`` still returns the renderable."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._strips: list[Strip] | None = None
        self.shown = None  # the renderable the lines came from
        self._styled: dict[int, Strip] = {}
        self._styled_for = None

    def show(self, renderable, strips: list[Strip] | None) -> None:
        """``strips``: the renderable rendered at this pane's width, made Strips off the
        UI thread (render_board: ~2,400 of them at 50 models, a tenth of a second of CPU
        the key's frame would otherwise wait on); None: render it the usual way."""
        self._strips = strips
        self._styled, self._styled_for = {}, None
        self.shown = renderable
        self.update(renderable)

    def get_content_height(self, container, viewport, width: int) -> int:
        if self._strips is not None:
            return len(self._strips)
        return super().get_content_height(container, viewport, width)

    def render_line(self, y: int) -> Strip:
        if self._strips is None:
            return super().render_line(y)
        style = self.rich_style  # the pane's own colours under the table's, as a Static paints them
        if y >= len(self._strips):
            return Strip.blank(self.size.width, style)
        if self._styled_for != style:
            self._styled, self._styled_for = {}, style
        strip = self._styled.get(y)
        if strip is None:
            strip = self._styled[y] = self._strips[y].apply_style(style)
        return strip


def render_board(lb, console, width: int, cancelled=lambda: False):
    """(pane id, renderable, its lines at ``width`` as Strips) for each pane, top first;
    plain Rich work, safe off the UI thread. A generator: the rankings can be shown while
    the long tables below them (1,225 head-to-head rows at 50 models) still render.
    Stops, yielding nothing more, once ``cancelled()``."""
    options = console.options.update(width=width, max_width=width, min_width=width)
    panes = [("#leader-rank", lambda: rankings_table(lb, width=width)),
             ("#leader-plot", lambda: grade_histogram(lb, width=max(10, width // 3)))]
    for pane, make in panes:
        if cancelled():
            return
        renderable = make()
        yield pane, renderable, [Strip(line) for line in console.render_lines(renderable, options, pad=True,
                                                                              new_lines=False)]
    # (a row per challenge: 200 rows are ~0.13 s of Rich's work, sliced like the head-to-head)
    for pane, make, rows in (("#leader-winners", partial(winners_table, lb), winners_rows(lb)),
                             ("#leader-h2h", partial(h2h_table, lb), h2h_rows(lb))):
        lines = sliced_lines(make, rows, console, options, cancelled)
        if lines is None:
            return
        yield pane, make(rows), [Strip(line) for line in lines]


def pane_width(screen_width: int) -> int:
    """The panes' width on a screen this wide: the body's, less its vertical scrollbar
    (Textual's default two cells; it shows as soon as the board is long)."""
    return max(20, screen_width - 2)


def keep_board(app) -> None:
    """In a worker thread: the board and its panes at the width the leaderboard
    screen will ask for, kept on the app for the store as it is now, so that the
    first ``l`` after a store change shows a board computed once, not on the key
    (~1 s of CPU at 50 models x 200 challenges). The screen checks the store's
    fingerprint and its width against what is kept, and computes anew on any
    difference."""
    from benchtui.grading.aggregates import leaderboard

    worker = get_current_worker()

    def checkpoint() -> None:  # the app is quitting, or the matrix reloading: stop within a few ms
        if worker.is_cancelled:
            raise _Left

    fingerprint = app.call_from_thread(store_fingerprint, app)  # the app's connection, on its own thread
    width = pane_width(app.size.width)
    kept = getattr(app, "leaderboard_kept", None)
    if fingerprint is None or (kept is not None and kept[:2] == (fingerprint, width)):
        return
    try:
        with app.open_store() as store:
            board = leaderboard(store, checkpoint=checkpoint)
    except _Left:
        return
    panes = list(render_board(board, app.console, width, lambda: worker.is_cancelled))
    if len(panes) == 4:  # all of them: a render stopped part way is not kept
        app.leaderboard_kept = (fingerprint, width, board, panes)


class _Left(Exception):
    """Raised at a checkpoint of the board's computation once its screen is left."""


class LeaderboardScreen(GuardedScreen):
    # Back is a priority binding: the app runs it as the key arrives. An ordinary one
    # waited in this screen's queue behind the panes its worker had posted, each drawn
    # first (two leaderboard frames, ~60 ms, before the matrix came back).
    BINDINGS = [Binding("escape", "back", "Back", id="leaderboard.back", priority=True),
                Binding("ctrl+r", "reload", "Refresh", id="leaderboard.refresh")]

    class Loaded(Message):
        def __init__(self, board, error: str | None = None, panes=None, width: int = 0) -> None:
            super().__init__()
            self.board, self.error, self.panes, self.width = board, error, panes, width

    def compose(self) -> ComposeResult:
        yield TitleBar()
        yield Static(Text.assemble(("Leaderboard", "bold"), ("  rankings · winners per challenge · head-to-head · grades",
                                                            "dim")), classes="title-bar", id="leader-title")
        with VerticalScroll(id="leader-body"):
            yield RenderedPane("computing…", id="leader-rank", classes="leader-pane")
            yield RenderedPane(id="leader-plot", classes="leader-pane")
            yield RenderedPane(id="leader-winners", classes="leader-pane")
            yield RenderedPane(id="leader-h2h", classes="leader-pane")
        yield KeysFooter(compact=self.app.size.width < COMPACT_FOOTER_BELOW)

    def action_back(self) -> None:
        palette = getattr(self, "_jump_palette", None)
        if palette is not None and palette.is_open:  # (a priority binding comes before the palette's own)
            palette.close()
            return
        # Stop the render now, not when the screen unmounts after the matrix's frame:
        # it would hold the GIL from the matrix's redraw until its slice ends.
        self.workers.cancel_node(self)
        self.app.pop_screen()

    def on_mount(self) -> None:
        self.board = None
        self._shown_width = 0
        self.action_reload()

    def pane_width(self) -> int:
        """The panes' width once the body's vertical scrollbar shows (it does as soon as the board is long)."""
        body = self.query_one("#leader-body", VerticalScroll)
        return max(20, (body.size.width or self.size.width) - body.styles.scrollbar_size_vertical)

    def action_reload(self, cached: bool = True) -> None:
        """The board as the store holds it now: the one this app rendered last,
        if nothing was written since at this width (~1 s of CPU at 50 models,
        which a worker thread takes from the UI while it runs), else anew."""
        width, fingerprint = self.pane_width(), store_fingerprint(self.app)
        kept = getattr(self.app, "leaderboard_kept", None)
        if cached and kept is not None and fingerprint is not None and kept[:2] == (fingerprint, width):
            self.on_leaderboard_screen_loaded(self.Loaded(kept[2], panes=kept[3], width=width))
            return
        self.compute(None, width, fingerprint)

    @work(thread=True, exclusive=True, group="leaderboard")
    def compute(self, board, width: int, fingerprint: tuple | None = None) -> None:
        """The leaderboard (unless given) and its panes' lines at ``width``, both off the UI thread."""
        worker = get_current_worker()

        def checkpoint() -> None:  # the screen was left: stop within a few ms, not after ~0.3 s
            if worker.is_cancelled:
                raise _Left

        try:
            if board is None:
                from benchtui.grading.aggregates import leaderboard

                with self.app.open_store() as store:
                    board = leaderboard(store, checkpoint=checkpoint)
            panes = []
            for pane in render_board(board, self.app.console, width, lambda: worker.is_cancelled):
                if worker.is_cancelled:
                    return
                panes.append(pane)
                self.post_message(self.Loaded(board, panes=[pane], width=width))
            if fingerprint is not None:
                self.app.leaderboard_kept = (fingerprint, width, board, panes)
        except _Left:
            return
        except Exception as exc:
            self.post_message(self.Loaded(None, f"{type(exc).__name__}: {exc}"))

    def on_leaderboard_screen_loaded(self, message: Loaded) -> None:
        if message.error:
            self.query_one("#leader-rank", Static).update(f"leaderboard unavailable: {message.error}")
            self.app.report_error("leaderboard", message.error)
            return
        self.board = message.board
        self._shown_width = message.width
        for pane, renderable, lines in message.panes:
            self.query_one(pane, RenderedPane).show(renderable, lines)

    def on_resize(self) -> None:
        if self.board is not None and self.pane_width() != self._shown_width:
            self.compute(self.board, self.pane_width())  # not kept: the board may be older than the store
