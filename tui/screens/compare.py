"""Two answers to one challenge side by side, files paired by role."""
from __future__ import annotations

import time
from pathlib import Path

from benchtui.store import answers_sql, queries
from benchtui.tui.diffing import Diff, diff_texts, pair_files
from benchtui.tui.screens.answer import main_file_of, read_text_file
from benchtui.tui.screens.base import COMPACT_FOOTER_BELOW
from benchtui.tui.screens.whole_frame import ReadAheadScreen
from benchtui.tui.widgets.diff_view import DiffView
from benchtui.tui.widgets.footer import KeysFooter
from benchtui.tui.widgets.option_list import SteadyOptionList
from benchtui.tui.widgets.title_bar import TitleBar
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

NO_FILE = "— (no related file)"


class CompareScreen(ReadAheadScreen):
    BINDINGS = [
        Binding("escape", "back", "Back", id="compare.back"),
        Binding("u", "toggle_unified", "Unified", id="compare.unified"),
        Binding("n", "change(1)", "Next change", id="compare.next"),
        Binding("p", "change(-1)", "Prev change", id="compare.prev"),
        Binding("m", "pick_model", "Other model", id="compare.model"),
        Binding("tab", "focus_next", "Files/diff", show=False, id="compare.focus"),
    ]

    class Paired(Message):
        def __init__(self, other: str | None, pairs: list, others: list[str], roots: tuple[str, str],
                     first: CompareScreen.Diffed | None = None) -> None:
            super().__init__()
            self.other, self.pairs, self.others, self.roots = other, pairs, others, roots
            self.first = first  # the first pair's diff (None without pairs), made with the pairing: one frame, not two

    class Diffed(Message):
        def __init__(self, diff: Diff | None, label: str, seconds: float, error: str | None = None,
                     index: int = 0, other: str | None = None) -> None:
            super().__init__()
            self.diff, self.label, self.seconds, self.error = diff, label, seconds, error
            # which pair, against which model: a diff made for a pair no longer shown is dropped
            self.index, self.other = index, other

    def __init__(self, model: str, challenge: str, other: str | None = None) -> None:
        super().__init__()
        self.model, self.challenge, self.other = model, challenge, other
        self.pairs: list = []
        self.others: list[str] = []
        self.roots = ("", "")
        self.diff_seconds: float | None = None
        self.label = ""  # the shown pair's file names, kept in the bar in both views
        self.diff_index: int | None = None  # the pair whose diff is shown or being made

    def compose(self) -> ComposeResult:
        yield TitleBar()
        yield Static(f"{self.model} vs …  ({self.challenge})", id="compare-bar")
        yield SteadyOptionList(id="compare-pick", classes="hidden")
        yield SteadyOptionList(id="compare-files")
        yield DiffView(id="diff-view")
        yield KeysFooter(compact=self.app.size.width < COMPACT_FOOTER_BELOW)

    def on_mount(self) -> None:
        self.query_one("#compare-pick").display = False
        self.fill_or_load()

    def read_ahead(self, app) -> list:
        return [self.pair(app, self.other)]

    def load_self(self) -> None:
        self.load_pairs(self.other)

    def pair(self, app, other: str | None) -> Paired:
        """Pair this answer's files with ``other``'s (by default the first other
        model's) and diff the first pair."""
        with app.open_store() as store:
            rows = answers_sql.answers_to(store, self.challenge)
            by_model = {r["model"]: r for r in rows}
            others = [m for m in by_model if m != self.model]
            if other is None or other not in by_model:
                other = others[0] if others else None
            mine = by_model.get(self.model)
            if mine is None or other is None:
                return self.Paired(None, [], others, ("", ""))
            left = [f for f in queries.answer_files(store, mine["id"]) if f["kind"] not in ("data", "artifact")]
            right = [f for f in queries.answer_files(store, by_model[other]["id"]) if f["kind"] not in ("data", "artifact")]
            challenge = answers_sql.challenge_row(store, self.challenge)
        roots = (mine["path"], by_model[other]["path"])
        about = {"challenge": challenge}
        pairs = pair_files(left, right, (main_file_of({**about, "files": left}, self.challenge),
                                         main_file_of({**about, "files": right}, self.challenge)))
        first = self.diff(app, 0, pairs[0], roots, other) if pairs else None
        return self.Paired(other, pairs, others, roots, first)

    @work(thread=True, exclusive=True, group="compare-pairs")
    def load_pairs(self, other: str | None) -> None:
        try:
            self.post_message(self.pair(self.app, other))
        except Exception as exc:
            self.app.call_from_thread(self.app.report_error, "pairing files", exc)

    def on_compare_screen_paired(self, message: Paired) -> None:
        self.other, self.pairs, self.others, self.roots = message.other, message.pairs, message.others, message.roots
        self.diff_index = None
        files = self.query_one("#compare-files", OptionList)
        files.clear_options()
        if self.other is None:
            self.query_one("#compare-bar", Static).update(f"no other answer to {self.challenge} to compare with")
            return
        files.add_options(Option(f"{a['relpath'] if a else '—'}  ↔  {b['relpath'] if b else '—'}", id=str(i))
                          for i, (a, b) in enumerate(self.pairs))
        if self.pairs:  # pair() diffed the first pair with the pairing
            self.diff_index = 0  # its highlight (posted) finds it shown
            files.highlighted = 0
            self.on_compare_screen_diffed(message.first)

    @on(OptionList.OptionHighlighted, "#compare-files")
    def file_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option.id is not None and self.pairs:
            self.start_diff(int(event.option.id))

    @on(OptionList.OptionSelected, "#compare-files")
    def file_selected(self, event: OptionList.OptionSelected) -> None:
        self.query_one(DiffView).focus()

    def start_diff(self, index: int) -> None:
        if index == self.diff_index:
            return  # shown, or being made
        self.diff_index = index
        self.compute_diff(index, self.pairs[index], self.roots, self.other)

    def diff(self, app, index: int, pair: tuple, roots: tuple[str, str], other: str | None) -> Diffed:
        left, right = (f["relpath"] if f else None for f in pair)
        root = Path(app.workbench.root)
        started = time.perf_counter()
        try:
            ta = read_text_file(root / roots[0] / left) if left else ""
            tb = read_text_file(root / roots[1] / right) if right else ""
            diff = diff_texts(ta, tb, f"{self.model}/{left or NO_FILE}", f"{other}/{right or NO_FILE}")
        except Exception as exc:
            return self.Diffed(None, "", 0.0, str(exc), index, other)
        return self.Diffed(diff, f"{left or '—'} ↔ {right or '—'}", time.perf_counter() - started, None, index, other)

    @work(thread=True, exclusive=True, group="compare-diff")
    def compute_diff(self, index: int, pair: tuple, roots: tuple[str, str], other: str | None) -> None:
        self.post_message(self.diff(self.app, index, pair, roots, other))

    def on_compare_screen_diffed(self, message: Diffed) -> None:
        if (message.index, message.other) != (self.diff_index, self.other):
            return  # made for a pair shown before the one now
        if message.error:
            self.app.report_error("diff", message.error)
            return
        self.diff_seconds = message.seconds
        view = self.query_one(DiffView)
        view.show(message.diff)
        self.update_bar(message.label)

    def update_bar(self, label: str | None = None) -> None:
        if label is not None:
            self.label = label
        view = self.query_one(DiffView)
        d = view.diff
        text = Text.assemble((self.model, "bold red"), " vs ", (self.other or "?", "bold green"), f"  {self.label}  ")
        if d is not None:
            text.append("identical" if d.identical else f"+{d.added} −{d.removed}, {len(d.changes)} change(s)",
                        style="dim")
        text.append(f"  [{'unified' if view.unified else 'side by side'}]", style="cyan")
        self.query_one("#compare-bar", Static).update(text)

    def action_toggle_unified(self) -> None:
        view = self.query_one(DiffView)
        view.show(view.diff, unified=not view.unified)
        self.update_bar()

    def action_change(self, step: int) -> None:
        view = self.query_one(DiffView)
        changes = view.changes
        if not changes:
            self.notify("no changes", timeout=2)
            return
        if step > 0:
            target = next((c for c in changes if c > view.cursor), changes[0])
        else:
            target = next((c for c in reversed(changes) if c < view.cursor), changes[-1])
        view.focus()
        view.move_to(target, top=True)

    def action_pick_model(self) -> None:
        pick = self.query_one("#compare-pick", OptionList)
        pick.clear_options()
        for m in self.others:
            pick.add_option(Option(("● " if m == self.other else "  ") + m, id=m))
        pick.display = True
        # Start on the model shown now: Down then Enter picks the next one.
        pick.highlighted = self.others.index(self.other) if self.other in self.others else 0
        pick.focus()

    @on(OptionList.OptionSelected, "#compare-pick")
    def model_picked(self, event: OptionList.OptionSelected) -> None:
        event.option_list.display = False
        self.load_pairs(event.option.id)

    def action_back(self) -> None:
        pick = self.query_one("#compare-pick", OptionList)
        if pick.display:
            pick.display = False
            return
        self.app.pop_screen()
