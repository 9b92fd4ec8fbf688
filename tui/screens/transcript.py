"""Transcript viewer: parse in a worker, show rows in a virtual line view."""
from __future__ import annotations

import time
from pathlib import Path

from benchtui.store import answers_sql
from benchtui.tui.screens.base import COMPACT_FOOTER_BELOW
from benchtui.tui.screens.whole_frame import ReadAheadScreen
from benchtui.tui.transcript_rows import FILTERS, branch_entries, build_rows
from benchtui.tui.widgets.footer import KeysFooter
from benchtui.tui.widgets.option_list import SteadyOptionList
from benchtui.tui.widgets.title_bar import TitleBar
from benchtui.tui.widgets.transcript_view import TranscriptView
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option


def totals_text(t) -> Text:
    tot = t.totals
    tok = tot.tokens
    h = t.header
    out = Text()
    out.append(f"{h.harness or h.format} {h.model or ''}  ", style="bold")
    # a format that records no usage (a chat export) shows that, not a row of zeros
    if any((tok.input, tok.output, tok.cache_read, tok.cache_write)):
        out.append(f"  tokens in {tok.input:,} out {tok.output:,} cache r {tok.cache_read:,} w {tok.cache_write:,}")
    else:
        out.append("  no token counts recorded", style="dim")
    if tot.cost:
        out.append(f"  ${tot.cost:.4f}")
    if tot.duration_s:
        out.append(f"  {tot.duration_s:.0f}s")
    out.append(f"  {tot.tool_calls} tool calls")
    if tot.tool_errors:
        out.append(f"  {tot.tool_errors} failed", style="bold red")
    if t.warnings:
        out.append(f"  ⚠ {len(t.warnings)} warning(s): {warning_lines(t.warnings)}", style="yellow")
    if len(t.branches) > 1:
        out.append(f"  {len(t.branches)} branches (b)", style="cyan")
    return out


def warning_lines(warnings, most: int = 6) -> str:
    """'repaired at lines 28, 58, 72': which lines, by kind (the view marks each one)."""
    by_kind: dict[str, list[int]] = {}
    for w in warnings:
        by_kind.setdefault(w.kind, []).append(w.line)
    parts = []
    for kind, lines in by_kind.items():
        shown = ", ".join(str(n) for n in lines[:most]) + (f" +{len(lines) - most} more" if len(lines) > most else "")
        parts.append(f"{kind} at line{'s' if len(lines) > 1 else ''} {shown}")
    return "; ".join(parts) + " (f: errors filter)"


def warnings_by_line(warnings) -> dict[int, str]:
    out: dict[int, list[str]] = {}
    for w in warnings:
        out.setdefault(w.line, []).append(f"{w.kind}: {w.detail}")
    return {line: f"line {line}: " + "; ".join(texts) for line, texts in out.items()}


class TranscriptScreen(ReadAheadScreen):
    # focused as the screen mounts: the first focusable (the branch list) took it, and the
    # view's own focus() after the first frame redrew both, and the footer, a frame later
    AUTO_FOCUS = "#transcript-view"
    BINDINGS = [
        Binding("escape", "back", "Back", id="transcript.back"),
        Binding("enter,space", "toggle_fold", "Fold", id="transcript.fold"),
        Binding("e", "expand_all", "Expand", id="transcript.expand"),
        Binding("slash", "search", "Search", id="transcript.search"),
        Binding("n", "next_hit(1)", "Hit", id="transcript.next_hit"),
        Binding("N", "next_hit(-1)", "Prev hit", id="transcript.prev_hit", show=False),
        Binding("right_square_bracket", "next_turn(1)", "Turn", id="transcript.next_turn"),
        Binding("left_square_bracket", "next_turn(-1)", "Prev turn", id="transcript.prev_turn", show=False),
        Binding("f", "cycle_filter", "Filter", id="transcript.filter"),
        Binding("b", "branches", "Branch", id="transcript.branches"),
    ]

    class Parsed(Message):
        def __init__(self, transcript, error: str | None, seconds: float) -> None:
            super().__init__()
            self.transcript = transcript
            self.error = error
            self.seconds = seconds

    def __init__(self, model: str, challenge: str, relpath: str) -> None:
        super().__init__()
        self.model, self.challenge, self.relpath = model, challenge, relpath
        self.transcript = None
        self.entries: list = []
        self.expanded: set[str] = set()
        self.filter_mode = "all"
        self.hits: list[int] = []
        self.query_text = ""
        self.branch_index: int | None = None
        self.shown_at: float | None = None  # perf_counter when rows were first shown (bench)
        self._width = 0

    def compose(self) -> ComposeResult:
        yield TitleBar()
        yield Static(f"{self.model} / {self.challenge} / {self.relpath}: parsing…", id="transcript-header")
        yield SteadyOptionList(id="transcript-branches")
        yield TranscriptView(id="transcript-view")
        yield Input(placeholder="search (enter: find, esc: close)", id="transcript-search")
        yield KeysFooter(compact=self.app.size.width < COMPACT_FOOTER_BELOW)

    def on_mount(self) -> None:
        self.fill_or_load()

    def read(self, app) -> Parsed:
        """The transcript, parsed; a parse error is a message, not an exception."""
        from benchtui.transcripts import TranscriptError, load_transcript

        started = time.perf_counter()
        try:
            with app.open_store() as store:
                folder = answers_sql.answer_path(store, self.model, self.challenge)
            path = Path(app.workbench.root) / folder / self.relpath
            transcript = load_transcript(path)
        except TranscriptError as exc:
            return self.Parsed(None, str(exc), time.perf_counter() - started)
        except Exception as exc:
            return self.Parsed(None, f"{type(exc).__name__}: {exc}", time.perf_counter() - started)
        return self.Parsed(transcript, None, time.perf_counter() - started)

    def read_ahead(self, app) -> list:
        return [self.read(app)]

    def load_self(self) -> None:
        self.parse()

    @work(thread=True, exclusive=True, group="transcript")
    def parse(self) -> None:
        self.post_message(self.read(self.app))

    def on_transcript_screen_parsed(self, message: Parsed) -> None:
        header = self.query_one("#transcript-header", Static)
        if message.error:
            said = message.error if message.error.startswith(f"{Path(self.relpath).name}:") else f"{self.relpath}: {message.error}"
            header.update(Text(f"{self.model} / {self.challenge} / {said}", style="bold red"))
            self.app.notify(message.error, severity="error")
            return
        self.transcript = message.transcript
        self.entries = list(self.transcript.entries)
        title = Text(f"{self.model} / {self.challenge} / {self.relpath}\n", style="bold")
        title.append_text(totals_text(self.transcript))
        header.update(title)
        self.rebuild()
        self.query_one(TranscriptView).focus()
        # Stamped once the frame holding the rows has been drawn (read by bench/tui.py).
        self.call_after_refresh(self._mark_shown)

    def _mark_shown(self) -> None:
        if self.shown_at is None:
            self.shown_at = time.perf_counter()

    def on_resize(self) -> None:
        # (The screen's first Resize comes after its first frame: rows built then for the
        # width they have are not built again, which was a second frame.)
        if self.transcript is not None and self._row_width(self.query_one(TranscriptView)) != self._width:
            self.rebuild(keep=True)

    def _row_width(self, view) -> int:
        # The width left once the vertical scrollbar is there, whether or not it is yet: the
        # first build comes before it appears, and wrapping to the wider width put one
        # character of every wrapped line under the scrollbar (lost until a rebuild).
        full = view.content_region.width or self.app.size.width
        return max(full - view.styles.scrollbar_size_vertical - 2, 40)

    def rebuild(self, keep: bool = False) -> None:
        """Rebuild the rows; with ``keep`` the row under the cursor stays under it, at the
        same place on the screen, even when folds open or close above it."""
        view = self.query_one(TranscriptView)
        anchor = self._anchor(view) if keep else None
        self._width = width = self._row_width(view)
        warnings = warnings_by_line(self.transcript.warnings)
        view.set_rows(build_rows(self.entries, width, self.expanded, self.filter_mode, warnings), keep_cursor=keep)
        if anchor is not None:
            self._restore(view, anchor)
        self.find_hits()
        self.show_state()

    def show_state(self, hit: int | None = None) -> None:
        """The header's subtitle: the filter in force and the search hits of the rows shown
        (a filter changes the rows, so an old "hit 76/76" would lie)."""
        parts = [f"filter: {self.filter_mode}"]
        if self.query_text:
            found = len(self.hits)
            parts.append(f"/{self.query_text}: " + (f"hit {hit}/{found}" if hit else f"{found} hit(s)"))
        self.sub_title = " · ".join(parts)

    @staticmethod
    def _anchor(view: TranscriptView) -> tuple | None:
        if not view.rows:
            return None
        row = view.rows[view.cursor]
        start = view.cursor
        while start > 0 and view.rows[start - 1].entry == row.entry:
            start -= 1
        same_kind = sum(1 for r in view.rows[start:view.cursor] if r.kind == row.kind)
        return row.entry, row.kind, row.fold, row.text, same_kind, view.cursor - view.scroll_offset.y

    @staticmethod
    def _restore(view: TranscriptView, anchor: tuple) -> None:
        entry, kind, fold, text, same_kind, screen_y = anchor
        rows = view.rows
        if not rows:
            return
        found = None
        first_of_entry = None
        seen = 0
        for i, r in enumerate(rows):
            if r.entry < entry:
                continue
            if r.entry > entry:
                found = found if found is not None else (first_of_entry if first_of_entry is not None else i)
                break
            if first_of_entry is None:
                first_of_entry = i
            if r.kind == kind and ((fold is not None and r.fold == fold) or (fold is None and r.text == text)):
                found = i
                break
            if r.kind == kind:
                if seen == same_kind:
                    found = i  # same place among its entry's rows; a later exact match still wins
                seen += 1
        if found is None:
            found = first_of_entry if first_of_entry is not None else len(rows) - 1
        # Scroll first, then move the cursor: it is then in view and the cursor's own
        # scroll-into-view (deferred) has nothing left to do.
        view.scroll_to(y=max(0, found - max(screen_y, 0)), animate=False, force=True, immediate=True)
        view.cursor = found

    # -- folds and filters -------------------------------------------------------------
    def action_toggle_fold(self) -> None:
        view = self.query_one(TranscriptView)
        if not view.rows:
            return
        row = view.rows[view.cursor]
        if row.fold is None:
            return
        self.expanded.symmetric_difference_update({row.fold})
        self.rebuild(keep=True)

    def action_expand_all(self) -> None:
        view = self.query_one(TranscriptView)
        folds = {r.fold for r in view.rows if r.fold}
        if folds <= self.expanded:
            self.expanded.clear()
        else:
            self.expanded |= folds
        self.rebuild(keep=True)

    def action_cycle_filter(self) -> None:
        self.filter_mode = FILTERS[(FILTERS.index(self.filter_mode) + 1) % len(FILTERS)]
        self.notify(f"filter: {self.filter_mode}", timeout=2)
        if self.transcript is not None:
            self.rebuild(keep=True)  # stay at the entry being read where the filter keeps it

    def action_next_turn(self, step: int) -> None:
        view = self.query_one(TranscriptView)
        rng = range(view.cursor + 1, len(view.rows)) if step > 0 else range(view.cursor - 1, -1, -1)
        for i in rng:
            r = view.rows[i]
            if r.kind == "header" and r.role == "user":
                view.move_to(i, top=True)
                return
        self.notify("no more user turns", timeout=2)

    # -- search ------------------------------------------------------------------------
    def action_search(self) -> None:
        box = self.query_one("#transcript-search", Input)
        box.add_class("visible")
        box.focus()

    @on(Input.Submitted, "#transcript-search")
    def run_search(self, event: Input.Submitted) -> None:
        self.query_text = event.value.strip()
        view = self.query_one(TranscriptView)
        view.highlight = self.query_text
        # Open the folds that hold a hit so every hit is a visible row.
        if self.query_text:
            needle = self.query_text.lower()
            for i, e in enumerate(self.entries):
                if needle in (e.thinking or "").lower():
                    self.expanded.add(f"{i}:thinking")
                for n, c in enumerate(e.tool_calls):
                    if c.result is not None and needle in c.result.text.lower():
                        self.expanded.add(f"{i}:result:{n}")
        self.rebuild(keep=True)
        event.input.remove_class("visible")
        view.focus()
        if self.hits:
            self.action_next_hit(1)
        else:
            self.notify(f"no hits for {self.query_text!r}" if self.query_text else "search cleared", timeout=3)

    def find_hits(self) -> None:
        needle = self.query_text.lower()
        view = self.query_one(TranscriptView)
        self.hits = [i for i, r in enumerate(view.rows) if needle in r.text.lower()] if needle else []

    def action_next_hit(self, step: int) -> None:
        if not self.hits:
            self.notify("no search hits (press / to search)", timeout=2)
            return
        view = self.query_one(TranscriptView)
        if step > 0:
            target = next((h for h in self.hits if h > view.cursor), self.hits[0])
        else:
            target = next((h for h in reversed(self.hits) if h < view.cursor), self.hits[-1])
        view.move_to(target)
        self.show_state(self.hits.index(target) + 1)

    # -- branches ----------------------------------------------------------------------
    def action_branches(self) -> None:
        if self.transcript is None or len(self.transcript.branches) < 2:
            self.notify("this transcript has a single path", timeout=2)
            return
        box = self.query_one("#transcript-branches", OptionList)
        box.clear_options()
        for i, b in enumerate(self.transcript.branches):
            box.add_option(Option(branch_label(i, b), id=str(i)))
        box.add_class("visible")
        box.focus()

    @on(OptionList.OptionSelected, "#transcript-branches")
    def pick_branch(self, event: OptionList.OptionSelected) -> None:
        self.branch_index = int(event.option.id)
        branch = self.transcript.branches[self.branch_index]
        self.entries = branch_entries(self.transcript, branch)
        self.expanded.clear()
        event.option_list.remove_class("visible")
        self.rebuild()
        self.query_one(TranscriptView).focus()
        self.notify(f"showing {'the active branch' if branch.active else f'branch {self.branch_index + 1}'}", timeout=2)

    def action_back(self) -> None:
        for widget_id in ("#transcript-search", "#transcript-branches"):
            w = self.query_one(widget_id)
            if w.has_class("visible"):
                w.remove_class("visible")
                self.query_one(TranscriptView).focus()
                return
        self.app.pop_screen()


def branch_label(i: int, b) -> str:
    """A branch as the picker lists it; an id the format does not give is left out, never "None"."""
    mark = "● active" if b.active else "○"
    parts = [f"{len(b.entries)} entries"] + ([f"forks at {b.fork_id}"] if b.fork_id is not None else [])
    leaf = f": leaf {b.leaf_id}" if b.leaf_id is not None else ""
    return f"{mark} branch {i + 1}{leaf} ({', '.join(parts)})"
