"""The first screen: challenges (rows) x models (columns), like a README grade matrix."""
from __future__ import annotations

import itertools
import re
from typing import Any

from benchtui.store import transcripts_sql
from benchtui.tui.glyphs import (
    HACK_MARK,
    IN_FLIGHT_MARK,
    PENDING_MARK,
    SEVERAL_JUDGES_MARK,
    STALE_MARK,
    VERDICTS,
    WARNING_MARK,
    grade_style,
    legend,
    verdict_glyph,
)
from benchtui.tui.screens.base import GuardedScreen
from benchtui.tui.widgets.footer import KeysFooter
from benchtui.tui.widgets.matrix_table import MatrixTable
from benchtui.tui.widgets.title_bar import TitleBar
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable, Static

SORTS = ("order", "passes", "grade", "name")
MODEL_HEADER = 16  # a model column's widest header; the detail line names the model whole
FILTERS = ("all", "not passing", "ungraded")
# what a filter keeps, on the status line while it is on (a notice cost the key ~50 ms at scale)
FILTER_RULES = {"not passing": " (rows with an answer whose latest run did not pass; not run counts)",
                "ungraded": " (rows with an answer no person has graded)"}


def cell_text(cell) -> Text:
    """A cell's text: its verdict glyph, the human's grade, the judge's grade
    and a warning mark. Cells that read the same share one Text (never
    modified): a 200 x 50 matrix has a few hundred distinct texts, so
    building, measuring and rendering them is paid per text, not per cell."""
    flying = bool(getattr(cell, "in_flight", None)) and cell.verdict != "running"
    several = bool(getattr(cell, "other_judges", ()))
    key = (cell.verdict, cell.human, cell.judge, bool(cell.warnings), bool(cell.stale), flying,
           bool(getattr(cell, "flags", "")), several)
    text = _CELL_TEXTS.get(key)
    if text is None:
        text = verdict_glyph(cell.verdict)
        # a run in flight beside the finished verdict, or a verdict on files that have
        # changed since its run: the mark takes the glyph's space
        if flying:
            text.append(IN_FLIGHT_MARK, style="cyan")
        elif cell.stale:
            text.append(STALE_MARK, style="bold yellow")
        else:
            text.append(" ")
        text.append(f"{cell.human or '':<2}", style="bold " + grade_style(cell.human))
        if cell.judge:
            text.append(" ")
            text.append(cell.judge + (SEVERAL_JUDGES_MARK if several else ""), style="italic dim")
        if cell.warnings:
            text.append(WARNING_MARK, style="yellow")
        if getattr(cell, "flags", ""):  # a hack signal, beside the verdict and never in it
            text.append(HACK_MARK, style="bold magenta")
        if len(_CELL_TEXTS) > 4096:  # odd letters from imports: keep the table bounded
            _CELL_TEXTS.clear()
        _CELL_TEXTS[key] = text
    return text


_CELL_TEXTS: dict[tuple, Text] = {}
_PENDING = Text(PENDING_MARK, style="dim")  # a cell not read yet (the first frame reads a screenful)


def not_passing(cell) -> bool:
    """What the "not passing" filter keeps: an answer whose latest run did not pass. An
    answer not run yet is not passing (nothing shows it passes); a model with no folder
    or no answer for the challenge is not an answer, so it keeps no row on its own."""
    return cell.status == "answer" and cell.verdict != "pass"


class MatrixScreen(GuardedScreen):
    BINDINGS = [
        # show=False: the table has the focus and its own (hidden) enter, so the
        # footer never listed this; hidden, the footer's keys are the same before
        # and after the table takes the focus, and compose once (start-up).
        Binding("enter", "open", "Open", id="matrix.open", show=False),
        Binding("s", "cycle_sort", "Sort", id="matrix.sort"),
        Binding("f", "cycle_filter", "Filter", id="matrix.filter"),
        Binding("g", "grade", "Grade", id="matrix.grade"),
        Binding("c", "compare", "Compare", id="matrix.compare"),
        Binding("t", "transcript", "Transcript", id="matrix.transcript"),
        Binding("r", "runs", "Run", id="matrix.runs"),
        Binding("l", "leaderboard", "Leaders", id="matrix.leaderboard"),
        # last: where the footer has no room for every key (80 columns) these go first; ? lists them all
        Binding("a", "audit", "Suites", id="matrix.audit"),
        Binding("ctrl+r,f5", "reload", "Rescan", id="matrix.refresh"),
        Binding("p", "published", "Published", id="matrix.published"),  # an imported deck's; dropped first
        # bundled challenges no model has a folder for: hidden unless asked for (the status line says how many)
        Binding("e", "toggle_empty", "Empty rows", id="matrix.empty", show=False),
        # the configured LLM judge grades the cell, or on the challenge column every answer of the row
        Binding("j", "judge", "Judge", id="matrix.judge", show=False),
    ]

    class Loaded(Message):
        def __init__(self, matrix, note: str = "", seq: int = 0) -> None:
            super().__init__()
            self.matrix = matrix
            self.note = note  # e.g. "indexing the workbench…" while a scan runs
            self.seq = seq  # when its read began (see _read_seq)

    def __init__(self) -> None:
        super().__init__()
        self.matrix = None  # engine.store.queries.Matrix once loaded
        # Reloads run in threads (a plain one can overlap a rescan) and may post out
        # of order; each read is numbered as it starts and an older one is dropped.
        self._read_seq = itertools.count(1)
        self._shown_seq = 0
        self.sort_mode = "order"
        self.filter_mode = "all"
        self.show_empty = False  # bundled challenges without any model's folder (e toggles)
        self._wanted: tuple[str | None, str | None] = (None, None)
        self._note = ""
        self._rescanning = False  # the worker is rescanning the workbench
        self._edited: frozenset[int] = frozenset()  # runs shown stale for files edited since the last scan
        self._looked = (0.0, 0.0)  # when the last look for edits ended (time.monotonic()), and how long it took
        self._facts_for = None  # the matrix _facts_cache was computed from
        self._facts_cache: dict | None = None

    def compose(self) -> ComposeResult:
        yield TitleBar()
        yield Static("loading the store…", id="matrix-status")
        # fixed_columns: the challenge column stays when a narrow terminal scrolls the models
        yield MatrixTable(id="matrix", cursor_type="cell", zebra_stripes=True, fixed_columns=1)
        yield Static(id="matrix-detail")
        yield Static(legend(), id="legend")
        yield KeysFooter()

    def on_mount(self) -> None:
        # The first frame shows the matrix, not a "loading" frame: `benchtui` has
        # read the cells a screen can show before importing Textual
        # (engine.store.queries.MatrixPrefetch, a few ms at 10,000 answers); without
        # it, the whole matrix is read here (~1 ms on the demo, ~0.1 s at 10,000
        # answers). The rest, rescans and later reloads come from the worker.
        try:
            prefetch, self.app.prefetched_matrix = getattr(self.app, "prefetched_matrix", None), None
            matrix = None
            if prefetch is not None:
                try:
                    matrix = prefetch.result()
                except Exception:
                    matrix = None  # read it again below: its error, if any, is reported there
            if matrix is None:
                from benchtui.store.queries import load_matrix

                matrix = load_matrix(self.app.store)
            self.on_matrix_screen_loaded(self.Loaded(matrix))
        except Exception as exc:
            self.load_failed(exc)
            self.reload()
        # runs and grades written by other processes (`benchtui run` elsewhere) show up by themselves
        self.app.after_first_frame(self._start_watching)

    def _start_watching(self) -> None:
        from benchtui.tui import store_watch

        store_watch.watch_store(self, self._store_changed)
        # answer files edited in an editor while the matrix is open: no store write tells of
        # them, so look (stat only) now and then, and reload when what is edited changes
        self.set_interval(store_watch.EDITS_S, self._look_for_edits)

    def _look_for_edits(self) -> None:
        import time

        from benchtui.tui.store_watch import IDLE_S

        now = time.monotonic()
        if (self.app.screen is not self or self._rescanning or self.matrix is None or self.matrix.partial
                or now - getattr(self.app, "_last_input", 0.0) < IDLE_S
                # a big workbench's look (~0.5 s of CPU at 60,000 files) is taken less often: at most 5% of a core
                or now - self._looked[0] < 20 * self._looked[1]):
            return
        self.look_for_edits(self.matrix)

    @work(thread=True, exclusive=True, group="matrix-edits")
    def look_for_edits(self, matrix) -> None:
        import time

        app: Any = self.app  # a BenchApp
        started = time.monotonic()
        try:
            with app.open_store() as store:
                edited = frozenset(self._edits(store, matrix))
        except Exception:
            return  # the reloads report a store's problems
        finally:
            self._looked = (time.monotonic(), time.monotonic() - started)
        if edited != self._edited:
            self.app.call_from_thread(self.reload)

    def _edits(self, store, matrix) -> dict[int, str]:
        """Run id -> what was edited since the last scan, of the runs whose fresh verdict the matrix shows."""
        from benchtui.workbench.edits import edited_since_scan

        app: Any = self.app  # a BenchApp
        return edited_since_scan(store, app.workbench.root,
                                 [c.run_id for c in matrix.cells.values()
                                  if c.run_id and (not c.stale or c.run_id in self._edited)])

    def _with_edits(self, store, matrix):
        """``matrix`` with each verdict on files edited since the last scan marked stale."""
        import dataclasses

        edits = self._edits(store, matrix)
        self._edited = frozenset(edits)
        for key, cell in list(matrix.cells.items()) if edits else []:
            if cell.run_id in edits:
                matrix.cells[key] = dataclasses.replace(cell, stale=edits[cell.run_id])
        return matrix

    def _store_changed(self) -> None:
        """Another connection wrote to the store. During this screen's own rescan
        that is the rescan itself (its worker has its own connection), and a
        reload then would cancel it (one exclusive worker group): the rescan
        shows its result when it ends."""
        if not self._rescanning:
            self.reload()

    def on_screen_suspend(self) -> None:
        self._left = True
        self._left_at = self._store_fingerprint()

    def on_screen_resume(self) -> None:
        # Back from another screen: grades or runs may have changed underneath.
        # (Not on the first resume: on_mount has just loaded the matrix, and a
        # reload then would compete with the first frame.) Nothing written
        # since this screen was left (the palette, help, a look at an answer):
        # no reload, which costs ~0.2 s of CPU at 10,000 answers.
        if self.matrix is not None and getattr(self, "_left", False):
            left_at = getattr(self, "_left_at", None)
            if left_at is None or self._store_fingerprint() != left_at:
                self.reload()

    def _store_fingerprint(self) -> tuple | None:
        from benchtui.tui.store_watch import store_fingerprint

        return store_fingerprint(self.app)

    # -- data ------------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="matrix")
    def reload(self, rescan: bool = False) -> None:
        """Show what the store holds at once; then, on start-up or on request,
        rescan the workbench (incremental) and show the result."""
        try:
            from benchtui.store.queries import load_matrix  # imported here: keeps start-up off the main thread

            with self.app.open_store() as store:
                seq = next(self._read_seq)
                loaded = self._with_edits(store, load_matrix(store))
                self.post_message(self.Loaded(loaded, "indexing the workbench…" if rescan else "", seq))
                if not rescan:
                    return
                from benchtui.runner.orchestrate import scan_and_mark_interrupted
                from benchtui.store.database import damage_message

                self._rescanning = True
                problem = store.check_sound()  # a big store is checked here, not before the first frame
                if problem:
                    self.app.call_from_thread(self.app.mark_store_damaged, damage_message(store.path, problem))
                    self.post_message(self.Loaded(loaded, "the store is damaged: not rescanned, nothing written", seq))
                    return
                result = scan_and_mark_interrupted(self.app.workbench, store)
                note = f"indexed {result.files} files in {result.duration_s:.2f} s, {len(result.warnings)} warning(s)"
                seq = next(self._read_seq)
                self.post_message(self.Loaded(self._with_edits(store, load_matrix(store)), note, seq))
                try:
                    from benchtui.tui.palette_index import palette_index

                    palette_index(self.app, store)  # ctrl+p then opens on a built index
                    # and its palette is mounted (hidden) now, not on the first ctrl+p (~0.2 s)
                    self.app.call_from_thread(self.app.mount_palette, self)
                except Exception:
                    pass  # the palette builds it when it opens, and reports its own errors
                self.app.warm_up()  # the screens one key opens, built before that key
        except Exception as exc:
            self.app.call_from_thread(self.load_failed, exc)
        finally:
            if rescan:
                self._rescanning = False

    def action_reload(self) -> None:
        self.reload(rescan=True)

    def on_matrix_screen_loaded(self, message: Loaded) -> None:
        if message.seq < self._shown_seq:
            return  # its read began before the one on screen: it would show older cells
        self._shown_seq = message.seq
        unchanged = self.matrix is not None and message.matrix == self.matrix
        keep = self.current() if self.matrix else (None, None)
        if message.note:  # a plain reload keeps the last scan's note ("indexed … warning(s)")
            self._note = message.note
        self.matrix = message.matrix
        if self.app.consume_scan_request():
            # Rescan only once the first frame is on the terminal: the scan's
            # imports (sqlite_utils, git, numpy) would otherwise hold the GIL
            # while that frame is rendered. (Its worker reads the whole matrix first.)
            self._note = "indexing the workbench…"
            self.app.after_first_frame(lambda: self.reload(rescan=True))
        elif message.matrix.partial:
            self.app.after_first_frame(self.reload)  # the rest of the cells
        if self._wanted != (None, None):
            keep, self._wanted = self._wanted, (None, None)
        elif unchanged:  # the same cells (a rescan found nothing new): keep the table, update the status line
            self.update_status(*self.ordered())
            return
        self.render_table(keep)

    def ensure_whole(self) -> None:
        """Sorting, filtering and opening need every cell: a first frame's partial
        matrix is read whole here, if its worker has not brought it yet (~0.1 s at
        10,000 answers)."""
        if self.matrix is not None and self.matrix.partial:
            from benchtui.store.queries import load_matrix

            self.matrix = load_matrix(self.app.store)

    def ordered(self) -> tuple[list[str], list]:
        m = self.matrix
        assert m is not None
        facts = self._facts()
        models = list(m.models)
        if self.sort_mode == "passes":
            models.sort(key=lambda x: -facts["passes"][x])
        elif self.sort_mode == "grade":
            models.sort(key=self._grade_keys().__getitem__)
        challenges = list(m.challenges)
        hidden = self.hidden_empty()
        if hidden:
            challenges = [c for c in challenges if c.id not in hidden]
        if self.sort_mode == "name":
            challenges.sort(key=lambda c: c.label.lower())
        if self.filter_mode == "not passing":
            challenges = [c for c in challenges if c.id in facts["not passing"]]
        elif self.filter_mode == "ungraded":
            challenges = [c for c in challenges if c.id in facts["ungraded"]]
        return models, challenges

    def hidden_empty(self) -> set[str]:
        """The rows left out: bundled challenges no model has a folder for, unless asked for
        (or unless they are all there is)."""
        if self.show_empty or self.matrix is None:
            return set()
        facts = self._facts()
        if "empty" not in facts:
            from benchtui.store.queries import empty_bundled

            try:
                facts["empty"] = empty_bundled(self.app.store)
            except Exception:  # a store that cannot say: every row is shown
                facts["empty"] = set()
        empty = facts["empty"]
        return empty if len(empty) < len(self.matrix.challenges) else set()

    def action_toggle_empty(self) -> None:
        self.ensure_whole()
        self.show_empty = not self.show_empty
        if self.matrix:
            self.render_table(self.current())

    def _facts(self) -> dict:
        """What sorting and filtering need, computed once per loaded matrix (one
        pass over its cells) instead of once per key: each model's passes and
        letters, the challenges each filter keeps, each cell's text and row label."""
        m = self.matrix
        if self._facts_for is m and self._facts_cache is not None:
            return self._facts_cache
        models, ids = set(m.models), {c.id for c in m.challenges}
        passes = dict.fromkeys(m.models, 0)
        letters: dict[str, list] = {x: [] for x in m.models}
        failing, ungraded = set(), set()
        texts, verdicts, warned, stale, flagged, several = {}, set(), False, False, 0, False
        for (model, cid), cell in m.cells.items():
            if model not in models or cid not in ids:
                continue
            texts[model, cid] = cell_text(cell)
            verdicts.add(cell.verdict)
            if cell.in_flight:  # its mark is the running glyph: the legend names it
                verdicts.add("running")
            warned = warned or bool(cell.warnings)
            stale = stale or bool(cell.stale)
            flagged += bool(cell.flags)
            several = several or bool(cell.other_judges)
            if cell.verdict == "pass":
                passes[model] += 1
            # the leaderboard's rule: a person's grade, else a judge's
            if g := cell.human or cell.judge:
                letters[model].append(g)
            if not_passing(cell):
                failing.add(cid)
            if cell.status == "answer" and not cell.human:
                ungraded.add(cid)
        from benchtui.workbench.shorten import shorten_all

        short = shorten_all([c.label for c in m.challenges], 22)  # from the middle: "Kern…P10: 3D tensor …"
        self._facts_cache = {"passes": passes, "letters": letters, "not passing": failing, "ungraded": ungraded,
                            "texts": texts, "verdicts": verdicts, "warned": warned, "stale": stale,
                            "flagged": flagged, "several_judges": several,
                            "labels": {c.id: Text(short[c.label]) for c in m.challenges}}
        self._facts_for = m
        return self._facts_cache

    def _grade_keys(self) -> dict[str, float]:
        """Each model's sort key for "grade": minus its mean grade points (best
        first), 1.0 with none; once per loaded matrix."""
        facts = self._facts()
        if "grade" not in facts:
            from benchtui.grading.grades import POINTS  # here: the first frame does without engine.grading.grades

            grade = {}
            for model, letters in facts["letters"].items():
                pts = [POINTS[g] for g in letters if g in POINTS]
                grade[model] = -(sum(pts) / len(pts)) if pts else 1.0
            facts["grade"] = grade
        return facts["grade"]

    def render_table(self, keep: tuple[str | None, str | None]) -> None:
        table = self.query_one(MatrixTable)
        models, challenges = self.ordered()
        facts = self._facts()
        texts, labels = facts["texts"], facts["labels"]
        missing = cell_text(self.matrix.cell("", ""))  # a model with no folder for the challenge
        table.clear(columns=True)
        # Text labels: a str label goes through Rich markup (and loads its emoji
        # table, ~2 ms of start-up); a model name is not markup anyway.
        # Every column gets an explicit width, measured here from its cells.
        # An auto-width column starts as wide as its label and is widened only
        # in the table's idle handler; a frame painted before that handler
        # (often, on a terminal, when the matrix is rebuilt after another
        # screen) caches rows cut to the label's width ("glm5" -> no grade,
        # "A-" -> "A"), and Textual keeps those cached rows after widening.
        # (Cells share their texts, so each distinct text is measured once.)
        rows = self._rows(models, challenges, texts, missing)
        widths = self._widths(models, challenges, rows)
        table.add_column(Text("challenge"), key="__challenge__", width=22)
        headers = self._headers(models, widths)
        for model in models:
            table.add_column(Text(headers[model]), key=model, width=widths[model])
        table.add_rows_at_once([(ch.id, [labels[ch.id], *cells]) for ch, cells in zip(challenges, rows)])
        self.update_legend(facts, models, challenges)
        self.update_status(models, challenges)
        self.focus_cell(*keep)
        table.focus()
        self.update_detail()

    def update_legend(self, facts: dict, models: list[str], challenges: list) -> None:
        """The key to what the matrix draws: its verdicts (the folder-less cell's
        too, when a model lacks a challenge), the warning mark, the not-read cell."""
        verdicts = set(facts["verdicts"])
        if len(facts["texts"]) < len(models) * len(challenges):
            verdicts.add(self.matrix.cell("", "").verdict)
        text = legend(verdicts, warnings=facts["warned"], pending=self.matrix.read is not None,
                      stale=facts.get("stale", False), flagged=bool(facts.get("flagged")),
                      several_judges=facts.get("several_judges", False))
        widget = self.query_one("#legend", Static)
        if text.plain != getattr(widget, "_legend_plain", None):
            widget._legend_plain = text.plain
            widget.update(text)

    def _rows(self, models: list[str], challenges: list, texts: dict, missing: Text) -> list[list[Text]]:
        """Each challenge's cells, in ``models`` order. Cells not read yet (a first
        frame's partial matrix) show "…", not "no folder"; rows with none read
        share one list (a first frame at 200 x 50 reads a screenful)."""
        if self.matrix.read is None:
            return [[texts.get((model, ch.id), missing) for model in models] for ch in challenges]
        read_models, read_challenges = self.matrix.read
        pending = [_PENDING] * len(models)
        return [[texts.get((model, ch.id), missing) if model in read_models else _PENDING for model in models]
                if ch.id in read_challenges else pending for ch in challenges]

    def _widths(self, models: list[str], challenges: list, rows: list[list[Text]]) -> dict[str, int]:
        """Each model's column width: its name or its widest shown cell. Kept per
        filter for the loaded matrix (a sort shows the same cells)."""
        cache = self._facts().setdefault("widths", {})
        key = (self.filter_mode, self.show_empty)
        if key in cache:
            return cache[key]
        lengths: dict[int, int] = {}

        def cell_len(text: Text) -> int:
            n = lengths.get(id(text))
            if n is None:
                n = lengths[id(text)] = text.cell_len
            return n

        rows = list({id(cells): cells for cells in rows}.values())  # rows shared by a partial matrix, once
        # a long model name ("claude_claude-opus-4-8_max") is cut to MODEL_HEADER, not the
        # column widened to it: at 80 columns that left room for two models
        widths = {model: max([min(Text(model).cell_len, MODEL_HEADER), *(cell_len(cells[i]) for cells in rows)])
                  for i, model in enumerate(models)}
        cache[key] = widths
        return widths

    def _headers(self, models: list[str], widths: dict[str, int]) -> dict[str, str]:
        """Each model's column header: its name, shortened from the middle where its
        column is narrower, keeping what tells it from its neighbours."""
        from benchtui.workbench.shorten import shorten_all

        cut = [m for m in models if len(m) > widths[m]]
        short = {w: shorten_all(models, w) for w in {widths[m] for m in cut}}
        return {m: short[widths[m]][m] if m in cut else m for m in models}

    def load_failed(self, exc: BaseException) -> None:
        """Said in a notice, and in the status line, which would otherwise go on
        saying "loading the store…" (or an old count) once the notice is gone."""
        self.app.report_error("loading the matrix", exc)
        status = f"could not read the store: {exc}"
        if self.app.store_damaged:  # two lines at 80 columns; the notice and the shell say the rest
            how = re.search(r"is damaged( \([^)]*\))", self.app.store_damaged)
            status = (f"the store is damaged{how.group(1) if how else ''}: nothing more is written to it; "
                      "q quits, and any benchtui command then says what to do")
        self.query_one("#matrix-status", Static).update(status)

    def update_status(self, models: list[str], challenges: list) -> None:
        sort = "grade (human, else judge)" if self.sort_mode == "grade" else self.sort_mode
        status = (f"{len(models)} models × {len(challenges)} challenges · sort: {sort} · "
                  f"filter: {self.filter_mode}{FILTER_RULES.get(self.filter_mode, '')}")
        hidden = self.hidden_empty()
        if hidden:
            status += f" · {len(hidden)} bundled without answers hidden (e shows {'them' if len(hidden) != 1 else 'it'})"
        elif self.show_empty and self.matrix is not None and self._facts().get("empty"):
            status += " · e hides the bundled without answers"
        flagged = self._facts().get("flagged") if self.matrix is not None else 0
        if flagged:  # counted apart from the verdicts
            status += f" · {HACK_MARK} {flagged} suspected hack{'s' if flagged != 1 else ''}"
        if not models:
            status = "no models in the store yet: add models/<model>/<challenge>/ folders and rescan (ctrl+r)"
        if self._note:
            status += f" · {self._note}"
        self.query_one("#matrix-status", Static).update(status)

    def current(self) -> tuple[str | None, str | None]:
        """(model, challenge) under the cursor, or Nones."""
        table = self.query_one(DataTable)
        if not table.row_count or self.matrix is None:
            return None, None
        try:
            row_key, col_key = table.coordinate_to_cell_key(table.cursor_coordinate)
        except Exception:
            return None, None
        model = col_key.value if col_key.value != "__challenge__" else None
        return model, row_key.value

    def focus_cell(self, model: str | None = None, challenge: str | None = None) -> None:
        if self.matrix is None:
            self._wanted = (model, challenge)
            return
        table = self.query_one(DataTable)
        row = col = None
        try:
            if challenge is not None:
                row = table.get_row_index(challenge)
            if model is not None:
                col = table.get_column_index(model)
        except Exception:
            pass  # filtered away: keep the cursor where it is
        current = table.cursor_coordinate
        table.move_cursor(row=current.row if row is None else row,
                          column=max(current.column, 1) if col is None else col)

    def on_data_table_cell_highlighted(self, event: DataTable.CellHighlighted) -> None:
        self.update_detail()

    def on_data_table_cell_selected(self, event: DataTable.CellSelected) -> None:
        self.action_open()

    def _covers(self, run_id: int | None) -> str:
        from benchtui.store.queries import run_covers

        try:
            return run_covers(self.app.store, run_id)
        except Exception:  # a store being written or damaged: the detail line goes without it
            return ""

    def update_detail(self) -> None:
        model, challenge = self.current()
        detail = self.query_one("#matrix-detail", Static)
        if not model or not challenge or self.matrix is None:
            detail.update("")
            return
        cell = self.matrix.cell(model, challenge)
        if not self.matrix.is_read(model, challenge):
            detail.update(Text.assemble((f"{model} / {challenge}  ", "bold"), ("reading…", "dim")))
            return
        _, style, label = VERDICTS.get(cell.verdict, ("?", "", cell.verdict))
        text = Text.assemble((f"{model} / {challenge}  ", "bold"), (label, style))
        covers = self._covers(cell.run_id)
        if covers:
            text.append(f": {covers}", style=style)
        text.append(f"   human {cell.human or '—'}   judge {cell.judge or '—'}")
        if cell.judge and cell.other_judges:  # the cell shows one judge's grade: every other judge named
            others = ", ".join(f"{name} {letter}" for name, letter in cell.other_judges)
            text.append(f" by {cell.judge_grader} (newest); also {others}")
        if cell.warnings:
            text.append(f"   ⚠ {cell.warnings} warning(s)", style="yellow")
        if cell.stale:
            text.append(f"   {STALE_MARK} stale: {cell.stale} since this run", style="bold yellow")
        if cell.flags:
            from benchtui.records.flags import KINDS

            said = ", ".join(kind for kind, (mark, _) in KINDS.items() if mark in cell.flags)
            text.append(f"   {HACK_MARK} suspected hack: {said}", style="bold magenta")
        if cell.in_flight and cell.verdict != "running":
            text.append(f"   {IN_FLIGHT_MARK} run #{cell.in_flight} in flight", style="cyan")
        detail.update(text)

    # -- actions ---------------------------------------------------------------------
    def _selected(self) -> tuple[str, str] | None:
        self.ensure_whole()
        model, challenge = self.current()
        if not model or not challenge:
            self.notify("move the cursor onto a model's cell first", severity="warning")
            return None
        if self.matrix and self.matrix.cell(model, challenge).status == "missing":
            self.notify(f"{model} has no folder for {challenge}", severity="warning")
            return None
        return model, challenge

    def action_open(self) -> None:
        if sel := self._selected():
            self.app.open_answer(*sel)

    def action_grade(self) -> None:
        if sel := self._selected():
            self.app.open_grades(*sel)

    def action_compare(self) -> None:
        if sel := self._selected():
            self.app.open_compare(*sel)

    def action_transcript(self) -> None:
        if sel := self._selected():
            with self.app.open_store() as store:
                relpaths = transcripts_sql.transcript_relpaths(store, *sel)
            if relpaths:
                self.app.open_transcript(*sel, relpaths[0])
            else:
                self.notify("this answer has no transcript", severity="warning")

    def action_runs(self) -> None:
        model, challenge = self.current()
        pairs = [(model, challenge)] if model and challenge else []
        self.app.open_runs(pairs, "answer")

    def action_judge(self) -> None:
        self.ensure_whole()
        model, challenge = self.current()
        matrix: Any = self.matrix  # engine.store.queries.Matrix once loaded
        if challenge and not model and matrix:  # the challenge column: the whole row
            cells = [(m, challenge) for m in matrix.models if matrix.cell(m, challenge).status == "answer"]
            if not cells:
                self.notify(f"no answer to {challenge} to judge", severity="warning")
                return
        elif sel := self._selected():
            cells = [sel]
        else:
            return
        what = f"{cells[0][0]}/{cells[0][1]}" if len(cells) == 1 else f"{len(cells)} answers to {challenge}"
        self.notify(f"asking the judge to grade {what}…")
        self.judge_cells(cells)

    @work(thread=True, group="judge")
    def judge_cells(self, cells: list[tuple[str, str]]) -> None:
        """The configured judge grades ``cells`` (engine/judge/judging.py); the grades
        show as any judge's when the matrix reloads."""
        app: Any = self.app  # BenchApp
        try:
            from benchtui.judge.calls import JudgeError
            from benchtui.judge.judging import judge_configured, summary

            try:
                with app.open_store() as store:
                    the_plan, result = judge_configured(store, app.workbench, cells)
            except JudgeError as exc:
                app.call_from_thread(self.notify, f"judge: {exc}", severity="error", timeout=10)
                return
            bad = result.failed or result.unparseable or the_plan.skipped
            app.call_from_thread(self.notify, summary(the_plan, result),
                                 severity="warning" if bad else "information", timeout=10)
            app.call_from_thread(self.reload)
        except Exception as exc:
            app.call_from_thread(app.report_error, "judge", exc)

    def action_leaderboard(self) -> None:
        self.app.open_leaderboard()

    def action_audit(self) -> None:
        self.app.open_audit()

    def action_published(self) -> None:
        self.app.open_published()

    def action_cycle_sort(self) -> None:
        self.ensure_whole()
        self.sort_mode = SORTS[(SORTS.index(self.sort_mode) + 1) % len(SORTS)]
        if self.matrix:
            self.render_table(self.current())

    def action_cycle_filter(self) -> None:
        self.ensure_whole()
        self.filter_mode = FILTERS[(FILTERS.index(self.filter_mode) + 1) % len(FILTERS)]
        if self.matrix:
            self.render_table(self.current())
