"""One answer: file tree, file view, checks, self-check, run history, grade panel."""
from __future__ import annotations

import contextlib
from functools import partial
from pathlib import Path

from benchtui.challenges.prompts import prompt_source, run_prompt_line
from benchtui.grading.grades import current_grades
from benchtui.records.scan_kinds import INFO_KINDS
from benchtui.records.verdicts import figure_within
from benchtui.store import answers_sql, queries
from benchtui.tui.glyphs import check_cell, check_value, verdict_text
from benchtui.tui.screens.base import COMPACT_FOOTER_BELOW
from benchtui.tui.screens.whole_frame import WholeFrameScreen, measure_tables_now
from benchtui.tui.widgets.code_view import CodeView, PreparedCode, complete_highlights, prepare_code
from benchtui.tui.widgets.fitted_table import Column, FittedTable
from benchtui.tui.widgets.footer import KeysFooter
from benchtui.tui.widgets.steady_tree import SteadyTree
from benchtui.tui.widgets.title_bar import TitleBar
from benchtui.workbench.answer_files import main_source
from rich.syntax import Syntax
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.events import ScreenResume
from textual.message import Message
from textual.widget import Widget
from textual.widgets import DataTable, Static, TabbedContent, TabPane, Tree

MAX_VIEW_BYTES = 2 * 1024 * 1024  # bigger files are summarised, not rendered
# Above this a file is shown as plain text first and highlighted after (in the
# worker): tree-sitter takes ~2 s over 1 MB of Python. Below it the worker
# highlights before anything is shown (~15 ms for a 10 KB file), so the screen
# draws its file once, highlighted.
HIGHLIGHT_FIRST_BYTES = 128 * 1024
# Files rich's Syntax highlights (everything but Python) are lexed whole each
# time they are drawn, on the UI thread: above this, they are shown in the code
# view instead, highlighted by tree-sitter where Textual has the language.
SYNTAX_MAX_BYTES = 256 * 1024
TREE_SITTER_LANGUAGES = {"markdown": "markdown", "toml": "toml", "json": "json", "yaml": "yaml", "bash": "bash"}
# Values and thresholds are never cut: the name is cut between words, and the message
# (shown whole below the table) goes first.
CHECK_COLUMNS = (Column("check", shrink=True, floor=8), Column("verdict"), Column("value"), Column("threshold"),
                 Column("message", shrink=True, fill=True, floor=12, optional=True))
HISTORY_COLUMNS = (Column("run"), Column("verdict"), Column("backend"), Column("started", shrink=True, floor=10),
                   Column("seconds"),
                   Column("message", shrink=True, fill=True, floor=12, optional=True))
GROUPS = (("source", "Sources"), ("cuda", "Sources"), ("doc", "Docs"), ("prompt", "Docs"),
          ("transcript", "Transcripts"), ("data", "Artifacts"), ("artifact", "Artifacts"))
LEXERS = {".cu": "cuda", ".cuh": "cuda", ".c": "c", ".cc": "cpp", ".cpp": "cpp", ".h": "cpp", ".hpp": "cpp",
          ".md": "markdown", ".toml": "toml", ".json": "json", ".jsonl": "json", ".sh": "bash",
          ".yaml": "yaml", ".yml": "yaml", ".metal": "cpp", ".txt": "text", ".rst": "rst"}


def middle_ellipsis(name: str, width: int) -> str:
    """``name`` in ``width`` cells, cut in the middle so the end (the extension) stays:
    'fused_softmax_topk.cuh' -> 'fused_so…topk.cuh'."""
    if len(name) <= width:
        return name
    if width <= 1:
        return "…"[:width]
    suffix = Path(name).suffix
    tail = min(len(name) - 1, max(len(suffix) + 4, (width - 1) // 2), width - 2)
    head = max(width - 1 - tail, 1 if width >= 3 else 0)
    tail = width - 1 - head
    return name[:head] + "…" + (name[-tail:] if tail > 0 else "")


def size_text(n: int | None) -> str:
    n = n or 0
    if n < 1024:
        return f"{n}B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f}K" if n < 10 * 1024 else f"{n // 1024}K"
    return f"{n / 1024 / 1024:.1f}M"


def file_label(relpath: str, size: int | None, warned: bool, width: int) -> Text:
    """A tree label that fits ``width`` cells: never cuts the extension or the warning
    mark; the size goes first when room is short."""
    mark = " ⚠" if warned else ""
    size_part = f"  {size_text(size)}"
    room = width - len(mark)
    if len(relpath) + len(size_part) <= room:
        name, shown_size = relpath, size_part
    else:
        name, shown_size = middle_ellipsis(relpath, max(room, 4)), ""
    label = Text(name)
    if mark:
        label.append(mark, style="yellow")
    if shown_size:
        label.append(shown_size, style="dim")
    return label


def read_text_file(path: Path) -> str:
    """The head of a file as text; ValueError for binary content (raw bytes would break the layout)."""
    return read_answer_file(path)[0]


def read_answer_file(path: Path) -> tuple[str, str]:
    """The head of a file as text, and a note for the reader ("" when none): the file
    is cut, or is not UTF-8 (its undecodable bytes are shown as �). ValueError for
    binary content (raw bytes would break the layout)."""
    from benchtui.text.caps import BINARY_TEXT

    with open(path, "rb") as fh:
        data = fh.read(MAX_VIEW_BYTES + 1)
    if b"\x00" in data[:65536]:
        raise ValueError(BINARY_TEXT)
    notes = []
    cut = len(data) > MAX_VIEW_BYTES
    if cut:
        data = data[:MAX_VIEW_BYTES]
        notes.append(f"shown: the first {size_text(MAX_VIEW_BYTES)} only")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if cut and exc.start >= len(data) - 3:  # only a character cut in two at the end of the head
            data = data[:exc.start]
        text = data.decode("utf-8", errors="replace")
        if "\ufffd" in text:
            notes.append("not UTF-8: the bytes that are not are shown as �")
    return text, "; ".join(notes)


def file_error_text(relpath: str, error: BaseException) -> str:
    """Why a file of an answer cannot be shown, in a reader's words (never a traceback)."""
    if isinstance(error, FileNotFoundError):
        return f"{relpath} is no longer on disk (the index is older than the folder: ctrl+r on the matrix rescans)"
    if isinstance(error, IsADirectoryError):
        return f"{relpath} is a folder now, not a file (ctrl+r on the matrix rescans)"
    if isinstance(error, PermissionError):
        return f"{relpath} cannot be read: permission denied"
    if isinstance(error, OSError):
        return f"{relpath} cannot be read: {error.strerror or error}"
    return str(error)


def prepare_view(relpath: str, text: str, highlight: bool = True, first_rows: int | None = None) -> PreparedCode | str:
    """What the file pane shows for ``text`` (in a worker): Python, and big files of other
    kinds, as a prepared code view (highlighted unless ``highlight`` is False; with
    ``first_rows``, only those rows yet); other files as their text, which rich's Syntax
    highlights when drawn (as before)."""
    suffix = Path(relpath).suffix.lower()
    if suffix == ".py":
        return prepare_code(text, "python" if highlight else None, first_rows)
    if len(text) > SYNTAX_MAX_BYTES:
        return prepare_code(text, TREE_SITTER_LANGUAGES.get(LEXERS.get(suffix, "")) if highlight else None)
    return text


def main_file_of(data: dict, challenge: str) -> str | None:
    """The answer's main source (not the alphabetically first file: see engine.workbench.answer_files)."""
    import json

    ch = data.get("challenge") or {}
    names = [challenge, ch.get("title") or ""]
    with contextlib.suppress(ValueError):
        names += list(json.loads(ch.get("display_names") or "[]"))
    return main_source(data.get("files") or [], names, ch.get("language"))


ANSWER_TABS = ("tab-file", "tab-checks", "tab-self", "tab-runs", "tab-grade")


class AnswerScreen(WholeFrameScreen):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="answer.back"),
        Binding("t", "transcript", "Transcript", id="answer.transcript"),
        Binding("c", "compare", "Compare", id="answer.compare"),
        Binding("g", "grade", "Grade", id="answer.grade"),
        Binding("r", "run", "Run", id="answer.run"),
        # One binding per tab (ids answer.tab1..5; "answer.tab" in keys.toml sets all five in
        # order): bindings, not a key handler, so they work whichever widget has the focus.
        *(Binding(str(i + 1), f"tab({i})", f"Tab {name}", show=False, id=f"answer.tab{i + 1}")
          for i, name in enumerate(("File", "Checks", "Self-check", "Runs", "Grade"))),
        Binding("a", "adapter", "Adapter", show=False, id="answer.adapter"),  # scaffold an adapter
        # an imported deck's published result and annotations for this answer (benchtui import)
        Binding("p", "published", "Published", show=False, id="answer.published"),
    ]

    class FileLoaded(Message):
        """A file read (and prepared) by a worker: ``view`` is a PreparedCode or the text
        for rich's Syntax; ``error`` says why there is none; ``final`` is False while a big
        file's plain text comes first and its highlighting follows."""

        def __init__(self, relpath: str, view: PreparedCode | str | None, error: str | None = None,
                     note: str = "", final: bool = True, opening: int = 0) -> None:
            super().__init__()
            self.opening = opening
            self.relpath = relpath
            self.view = view
            self.error = error
            self.note = note
            self.final = final

        @property
        def text(self) -> str | None:
            return self.view.text if isinstance(self.view, PreparedCode) else self.view

    class Highlighted(Message):
        """The whole highlight map of a file shown with its first rows highlighted."""

        def __init__(self, view: PreparedCode, highlights: dict, opening: int) -> None:
            super().__init__()
            self.view = view
            self.highlights = highlights
            self.opening = opening

    class Loaded(Message):
        """The answer's data, with its first file when that was quick to prepare;
        ``opening``: which opening of this screen it is for (a reused screen ignores
        what an earlier answer's worker sends late)."""

        def __init__(self, data: dict, file: AnswerScreen.FileLoaded | None = None, opening: int = 0,
                     first: bool = False) -> None:
            super().__init__()
            self.data = data
            self.file = file
            self.opening = opening
            self.first = first  # the screen's first load for this answer (not a reload on resume)

    PUSH_ANYWAY_S = 0.3  # a reused screen waits this long for its data before it shows anyway

    def __init__(self, model: str = "", challenge: str = "", relpath: str | None = None) -> None:
        super().__init__()
        self.model = model
        self.challenge = challenge
        self.want_file = relpath
        self.data: dict = {}
        self.current_file: str | None = None
        self.opening = 0  # counts open() calls: a reused screen's later answers
        self._push_when_loaded = False  # open(): the app shows this screen once its data is in
        self._loaded_before_shown = False  # on the next resume, the data is fresh: no reload
        self._check_shown: tuple | None = None  # (row, checks) the check detail shows
        self._styled_for: tuple | None = None  # (CSS generation, theme) of the last full restyle

    def open(self, model: str, challenge: str, relpath: str | None = None) -> None:
        """Show another answer in this (composed, not shown) screen. Building
        the screen is most of what opening an answer costs (its widgets, their styles,
        two layouts: ~0.25 s at 140x45 on a slow core), so the app keeps one and fills it
        before it shows it: the answer's first frame is drawn once, complete."""
        self.model, self.challenge, self.want_file = model, challenge, relpath
        self.data, self.current_file = {}, None
        self.opening += 1
        self.query_one("#answer-title", Static).update(f"{model} / {challenge}")
        tree = self.query_one("#file-tree", Tree)
        tree.clear()
        tree.scroll_home(animate=False, immediate=True)
        self.query_one(TabbedContent).active = "tab-file"
        self.set_focus(tree)
        for scroller in self.query("#answer-tabs VerticalScroll"):
            scroller.scroll_home(animate=False, immediate=True)
        self._push_when_loaded = True
        self.load(first=True, opening=self.opening)
        self.set_timer(self.PUSH_ANYWAY_S, partial(self._show, self.opening))

    def _show(self, opening: int) -> None:
        """Put this screen on top, once, for ``opening`` (from open())."""
        if not self._push_when_loaded or opening != self.opening:
            return
        self._push_when_loaded = False
        if self not in self.app.screen_stack:
            # The widgets filled while hidden ask for their layout on their next idle,
            # which comes after the layout showing the screen does: a second layout
            # (~15 ms) for nothing. Asked now, both are one.
            self.query_one("#file-tree", Tree)._tree_lines  # noqa: B018  (the tree builds its lines on idle, too)
            measure_tables_now(self)
            for widget in self.walk_children(Widget):
                widget._check_refresh()
            self.app.push_screen(self)

    def compose(self) -> ComposeResult:
        yield TitleBar()
        yield Static(f"{self.model} / {self.challenge}", id="answer-title", classes="title-bar")
        with Horizontal(id="answer-body"):
            yield SteadyTree("files", id="file-tree")
            with TabbedContent(id="answer-tabs"):
                with TabPane("File", id="tab-file"):
                    # the file's title and code view are here, hidden, from the start: the first
                    # file shown fills them (reset_file_pane) instead of mounting new ones after
                    # the screen is up, which cost a kept screen's first answer two more frames
                    title, view = Static(classes="panel-text", id="file-title"), CodeView(classes="code", id="file-view")
                    title.display = view.display = False
                    yield Vertical(Static("select a file on the left", classes="panel-text", id="file-placeholder"),
                                   title, view, id="file-view-pane")
                with TabPane("Checks", id="tab-checks"):
                    # the summary scrolls in its own pane: a long requirement list must not
                    # push the check rows below the fold at 80x24
                    yield VerticalScroll(Static(id="run-summary", classes="panel-text"), id="run-summary-pane")
                    yield FittedTable(id="checks-table", cursor_type="row")
                    yield VerticalScroll(Static(id="check-detail", classes="panel-text"), id="check-detail-pane")
                with TabPane("Self-check", id="tab-self"):
                    yield VerticalScroll(Static(id="self-check", classes="panel-text"))
                with TabPane("Runs", id="tab-runs"):
                    yield FittedTable(id="history-table", cursor_type="row")
                with TabPane("Grade", id="tab-grade"):
                    yield VerticalScroll(Static(id="grade-panel", classes="panel-text"))
        # its keys in the screen's first frame, compact from the start where fit_footer would make it so
        yield KeysFooter(compact=self.app.size.width < COMPACT_FOOTER_BELOW)

    def on_mount(self) -> None:  # (GuardedScreen's on_mount runs too: Textual calls each class's)
        if self.model:
            self.load(first=True)

    def _on_screen_resume(self, event: ScreenResume) -> None:
        # (Textual's Screen._on_screen_resume runs after this one: it draws the screen.)
        # A kept screen shown again with the CSS and theme it was styled with keeps its
        # styles: Textual would restyle every widget of it (~20 ms on a slow core).
        styled_for = (self.app._css_update_count, self.app.theme)
        if self._loaded_before_shown and self._styled_for == styled_for:
            event.refresh_styles = False
        elif event.refresh_styles:
            self._styled_for = styled_for
        if self._loaded_before_shown:
            self._loaded_before_shown = False  # open() has just read it
        elif self.data:
            self.load(opening=self.opening)

    @work(thread=True, exclusive=True, group="answer")
    def load(self, first: bool = False, opening: int = 0) -> None:
        """The answer's data from the store; on opening, its first file too (the one
        asked for, or the main source), read and highlighted here, so the screen draws
        it once, highlighted. A big file follows in its own messages: plain, then
        highlighted."""
        try:
            with self.app.open_store() as store:
                answer = queries.answer_row(store, self.model, self.challenge)
                data: dict = {"answer": answer, "files": [], "transcripts": [], "warnings": [],
                              "run": None, "checks": [], "history": [], "grades": []}
                data["challenge"] = answers_sql.challenge_row(store, self.challenge)
                if answer:
                    data["files"] = queries.answer_files(store, answer["id"])
                    data["transcripts"] = queries.answer_transcripts(store, answer["id"])
                data["warnings"] = queries.answer_warnings(store, self.model, self.challenge)
                data["run"] = queries.latest_run(store, self.model, self.challenge)
                from benchtui.store.runs_sql import in_flight, in_flight_text

                data["in_flight"] = in_flight_text(in_flight(store).get((self.model, self.challenge)))
                if data["run"]:
                    data["checks"] = queries.run_checks(store, data["run"]["id"])
                data["history"] = queries.run_history(store, self.model, self.challenge)
                data["grades"] = current_grades(store, dimension=None, model=self.model, challenge=self.challenge)
        except Exception as exc:
            self.app.call_from_thread(self.app.report_error, "loading the answer", exc)
            return
        relpath = (self.want_file or main_file_of(data, self.challenge)) if first and data["answer"] else None
        file = self.read_file(data["answer"], relpath, opening, quick_only=True) if relpath else None
        self.post_message(self.Loaded(data, file, opening, first))
        self.complete(file)

    def complete(self, file: AnswerScreen.FileLoaded | None) -> None:
        """(In the worker that read ``file``) the rest of its highlighting, if it was
        read with its first rows highlighted only."""
        view = file.view if file is not None else None
        if isinstance(view, PreparedCode) and view.highlighted_rows is not None:
            self.post_message(self.Highlighted(view, complete_highlights(view), file.opening))

    def read_file(self, answer: dict, relpath: str, opening: int,
                  quick_only: bool = False) -> AnswerScreen.FileLoaded | None:
        """Read and prepare one file of the answer (in a worker). A big file: its plain
        text is posted at once and its highlighting follows, here, unless ``quick_only``,
        where None is returned and the rest is left to ``load_file``."""
        try:
            path = Path(self.app.workbench.root) / answer["path"] / relpath
            if quick_only and path.stat().st_size > HIGHLIGHT_FIRST_BYTES:
                return None
            text, note = read_answer_file(path)
        except Exception as exc:
            return self.FileLoaded(relpath, None, file_error_text(relpath, exc), opening=opening)
        if len(text) <= HIGHLIGHT_FIRST_BYTES:
            # the rows a first frame can show (the view starts at the top): the rest after
            rows = self.app.size.height + 10
            return self.FileLoaded(relpath, prepare_view(relpath, text, first_rows=rows), note=note, opening=opening)
        plain = prepare_view(relpath, text, highlight=False)
        if not isinstance(plain, PreparedCode):
            return self.FileLoaded(relpath, plain, note=note, opening=opening)
        self.post_message(self.FileLoaded(relpath, plain, note=note, final=False, opening=opening))
        return self.FileLoaded(relpath, prepare_view(relpath, text), note=note, opening=opening)

    async def on_answer_screen_loaded(self, message: Loaded) -> None:
        if message.opening != self.opening:
            return  # an earlier answer's data, late
        try:
            await self.fill(message)
        finally:
            if self._push_when_loaded:
                self._loaded_before_shown = True
                self._show(self.opening)

    async def fill(self, message: Loaded) -> None:
        self.data = data = message.data
        answer = data["answer"]
        if answer is None:
            self.query_one("#answer-title", Static).update(f"{self.model} / {self.challenge}: not in the store")
            if message.first:
                await self.reset_file_pane(None)
            return
        run = data["run"]
        title = Text.assemble((f"{self.model} / {self.challenge}  ", "bold"))
        title.append_text(verdict_text(run["verdict"] if run and run["status"] == "done" else
                                       ("no_answer" if answer["status"] == "no_answer" else
                                        (run["status"] if run else "not_run"))))
        if data.get("in_flight"):  # beside the last finished verdict, never in its place
            title.append(f"  ◌ {data['in_flight']}", style="cyan")
        self.query_one("#answer-title", Static).update(title)
        self.fill_tree()
        self.fill_checks()
        self.fill_history()
        self.fill_grades()
        file = message.file
        if message.first:
            await self.reset_file_pane(file)
        if file is not None:
            self.want_file = None
            self.current_file = file.relpath
        elif self.want_file:  # a big one: load() left it to load_file (its plain text first)
            self.show_file(self.want_file)
            self.want_file = None
        elif self.current_file is None:
            main = self.main_file()
            if main:
                self.show_file(main)

    async def reset_file_pane(self, file: FileLoaded | None) -> None:
        """The file pane of a first load: the file (or the placeholder), in place of
        whatever a reused screen showed last."""
        pane = self.query_one("#file-view-pane", Vertical)
        shown = pane.query(CodeView)
        if file is not None and isinstance(file.view, PreparedCode) and shown:
            # a reused screen showing code: the same widgets show this file (no mount,
            # no new widget's first resize and layout)
            title, view = pane.query_one("#file-title", Static), shown.first()
            title.update(self.file_title(file))
            view.show(file.view)
            view.relpath = file.relpath
            title.display = view.display = True
            for placeholder in pane.query("#file-placeholder"):
                placeholder.display = False
            return
        if any(child.id for child in pane.children):  # a reused screen's last file: its ids would clash
            await pane.remove_children()
        else:  # removed and mounted in this same refresh (the placeholder has no id)
            pane.remove_children()
        if file is None:
            pane.mount(Static("select a file on the left", classes="panel-text"))
        else:
            pane.mount(*self.file_widgets(file))

    def main_file(self) -> str | None:
        """The answer's main source (not the alphabetically first file: see engine.workbench.answer_files)."""
        return main_file_of(self.data, self.challenge)

    def file_warnings(self, relpath: str) -> list[dict]:
        """The scan warnings about one file of this answer (warning paths are workbench-relative)."""
        answer = self.data.get("answer") or {}
        full = f"{answer.get('path', '')}/{relpath}"
        return [w for w in self.data.get("warnings", []) if w["kind"] not in INFO_KINDS and w["path"]
                and (w["path"] == full or w["path"].endswith("/" + relpath))]

    def fill_tree(self) -> None:
        tree = self.query_one("#file-tree", Tree)
        tree.show_root = False
        tree.clear()
        tree.root.expand()
        groups: dict[str, object] = {}
        label_of = dict(GROUPS)
        for f in self.data["files"]:
            group = label_of.get(f["kind"], "Other")
            if group not in groups:
                groups[group] = tree.root.add(group, expand=True)
            groups[group].add_leaf(f["relpath"], data=f["relpath"])
        # what the scan did (a chat export indexed, a folder waiting for an answer) is not a warning
        warnings = [w for w in self.data["warnings"] if w["kind"] not in INFO_KINDS]
        notes = [w for w in self.data["warnings"] if w["kind"] in INFO_KINDS]
        for label, style, items in (("Warnings", "yellow", warnings), ("Scan notes", "dim", notes)):
            if items:
                node = tree.root.add(Text(label, style=style), expand=True)
                for w in items:
                    node.add_leaf(f"{w['kind']}", data={"warning": w})
        self.fit_tree_labels()

    def fit_tree_labels(self) -> None:
        """Labels sized to the tree's width: a name is cut in its middle (the extension and
        the ⚠ stay), a warning shows its kind and file; its full text opens on enter."""
        tree = self.query_one("#file-tree", SteadyTree)
        width = max((tree.scrollable_content_region.width or 28) - 1, 12)
        files = {f["relpath"]: f for f in self.data.get("files", [])}
        labels: list = []
        for group in tree.root.children:
            room = width - tree.guide_depth  # leaves sit one guide in (the root is hidden)
            for node in group.children:
                data = node.data
                if isinstance(data, str) and data in files:
                    f = files[data]
                    warned = bool(f["problem"] or not f["readable"] or self.file_warnings(data))
                    labels.append((node, file_label(data, f["size"], warned, room)))
                elif isinstance(data, dict) and "warning" in data:
                    w = data["warning"]
                    where = Path(w["path"]).name if w["path"] else ""
                    text = f"⚠ {w['kind']}"  # the file's name where it fits; enter shows it all
                    if where and len(text) + 1 + len(where) <= room:
                        text += f" {where}"
                    labels.append((node, Text(middle_ellipsis(text, room), style="yellow")))
        tree.relabel(labels)

    def on_resize(self) -> None:
        if self.data:
            self.fit_tree_labels()

    def laid_out_once(self) -> None:
        if self.data:  # the tree's width is known now: its labels fit it in the first frame
            self.fit_tree_labels()

    def fill_checks(self) -> None:
        run = self.data["run"]
        summary = self.query_one("#run-summary", Static)
        table = self.query_one("#checks-table", FittedTable)
        checks = self.data["checks"] if run else []
        table.fill(CHECK_COLUMNS, [(str(i), (c["name"], verdict_text(c["verdict"]), *figure_cells(c), c["message"] or ""))
                                   for i, c in enumerate(checks)])
        if not run:
            # r opens the Runs screen on this answer; s there starts it (with the backend shown there)
            summary.update("not run yet: press r, then s, to run the hidden suite")
            self.query_one("#self-check", Static).update("no self-check yet")
            return
        head = Text.assemble(f"run #{run['id']} on {run['backend'] or '?'} ({run['device'] or '?'}): ",
                             verdict_text(run["verdict"] or run["status"]), f"  {run['message'] or ''}",
                             (prompt_version_note(run, self.data["checks"]), "dim"))
        head.append(coverage_note(run))
        if run["verdict"] == "unbound" or any(c["verdict"] == "unbound" for c in self.data["checks"]):
            head.append("\n" + adapter_hint(self.model, self.challenge), style="yellow")
        summary.update(head)
        first = first_failing(checks)
        if first:
            table.move_cursor(row=first, scroll=True)
        self.show_check(first)
        out = Text()
        out.append(f"self-check: {run['self_status'] or 'not run'}", style="bold")
        if run["self_exit_code"] is not None:
            out.append(f"   exit {run['self_exit_code']}")
        out.append("\n(the answer's own tests and demos: its claims, not evidence)\n\n", style="dim")
        out.append(run["self_output"] or "")
        self.query_one("#self-check", Static).update(out)

    def show_check(self, index: int) -> None:
        """The highlighted check in full: the table cuts long messages."""
        checks = self.data.get("checks") or []
        if (index, checks) == self._check_shown:
            return  # the table's own highlight of the row fill_checks showed: no second layout
        self._check_shown = (index, checks)
        detail = self.query_one("#check-detail", Static)
        if not 0 <= index < len(checks):
            detail.update("")
            return
        c = checks[index]
        text = Text.assemble((c["name"], "bold"), "  ", verdict_text(c["verdict"]))
        if figure_within(c["verdict"], c["value"], c["threshold"]):  # stored before such rows kept no figure
            text.append(f"   value {check_value(c['value'])} is within its threshold {check_value(c['threshold'])}: "
                        "not what failed\n")
        else:
            text.append(f"   value {check_value(c['value']) or '—'}   threshold {check_value(c['threshold']) or '—'}\n")
        text.append(c["message"] or "")
        detail.update(text)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id == "checks-table" and event.row_key is not None and event.row_key.value is not None:
            self.show_check(int(event.row_key.value))

    def fill_history(self) -> None:
        self.query_one("#history-table", FittedTable).fill(HISTORY_COLUMNS, [
            (None, (str(r["id"]), verdict_text(r["verdict"] or r["status"]), r["backend"] or "",
                    (r["started_at"] or "")[:16].replace("T", " "), f"{r['duration_s']:.1f}" if r["duration_s"] else "",
                    r["message"] or "")) for r in self.data["history"]])

    def fill_grades(self) -> None:
        out = Text()
        if not self.data["grades"]:
            out.append("no grades yet: press g to grade this answer", style="dim")
        shown = max((len(g.display) for g in self.data["grades"]), default=0) + 2  # "86 (B)" and a gap
        for g in self.data["grades"]:
            style = "italic dim" if g.grader_kind == "judge" else "bold"
            out.append(f"{g.dimension:<28}", style="")
            out.append(f"{g.display:<{shown}}", style=style)
            out.append(f"{g.grader} ({g.grader_kind})\n", style="dim")
        self.query_one("#grade-panel", Static).update(out)

    # -- files -----------------------------------------------------------------------
    def on_tree_node_selected(self, event: Tree.NodeSelected) -> None:
        relpath = event.node.data
        if isinstance(relpath, dict) and "warning" in relpath:
            self.call_later(self.show_warning, relpath["warning"])
            return
        if not relpath:
            return
        if any(t["relpath"] == relpath for t in self.data.get("transcripts", [])):
            self.app.open_transcript(self.model, self.challenge, relpath)
            return
        self.show_file(relpath)

    def show_file(self, relpath: str) -> None:
        self.current_file = relpath
        self.query_one(TabbedContent).active = "tab-file"
        self.load_file(relpath, self.opening)

    @work(thread=True, exclusive=True, group="answer-file")
    def load_file(self, relpath: str, opening: int) -> None:
        answer = self.data.get("answer")
        if not answer:
            return
        file = self.read_file(answer, relpath, opening)
        self.post_message(file)
        self.complete(file)

    async def show_warning(self, w: dict) -> None:
        """A scan warning in full, wrapped (the tree has room for its kind only)."""
        self.query_one(TabbedContent).active = "tab-file"
        pane = self.query_one("#file-view-pane", Vertical)
        await pane.remove_children()
        text = Text.assemble((f"⚠ {w['kind']}", "bold yellow"), "\n", (w["path"] or "", "bold"), "\n\n", w["detail"] or "")
        await pane.mount(Static(text, classes="panel-text", id="warning-view"))

    def file_title(self, message: FileLoaded) -> Text:
        """A file's name, the reader's note (cut, not UTF-8) and its scan warnings."""
        title = Text(message.relpath, style="bold")
        if message.note:
            title.append(f"  ({message.note})", style="yellow")
        for w in self.file_warnings(message.relpath):
            title.append(f"\n⚠ {w['kind']}: {w['detail'] or ''}", style="yellow")
        return title

    def file_widgets(self, message: FileLoaded) -> list:
        """The file pane's widgets for a file read by a worker: its name (with its scan
        warnings and the reader's note) and its view, or why it cannot be shown."""
        header = Static(self.file_title(message), classes="panel-text", id="file-title")
        if message.error or message.view is None:
            return [header, Static(f"cannot show this file: {message.error}", classes="panel-text")]
        if isinstance(message.view, PreparedCode):
            view = CodeView(message.view, classes="code", id="file-view")
            view.relpath = message.relpath
            return [header, view]
        lexer = LEXERS.get(Path(message.relpath).suffix.lower(), "text")
        syntax = Syntax(message.view, lexer, line_numbers=True, word_wrap=False, theme="monokai")
        return [header, VerticalScroll(Static(syntax, expand=True), classes="code", id="file-view")]

    def on_answer_screen_highlighted(self, message: Highlighted) -> None:
        for view in self.query(CodeView):
            view.complete(message.view, message.highlights)  # (it checks that it shows that file)

    async def on_answer_screen_file_loaded(self, message: FileLoaded) -> None:
        if message.relpath != self.current_file or message.opening != self.opening:
            return  # another file (or answer) was chosen since
        pane = self.query_one("#file-view-pane", Vertical)
        shown = pane.query("#file-view")
        if (shown and isinstance(shown.first(), CodeView) and isinstance(message.view, PreparedCode)
                and getattr(shown.first(), "relpath", None) == message.relpath):
            shown.first().show(message.view, keep_place=True)  # a big file's highlighting, after its plain text
            return
        await pane.remove_children()
        await pane.mount(*self.file_widgets(message))

    # -- actions ---------------------------------------------------------------------
    def action_transcript(self) -> None:
        transcripts = self.data.get("transcripts") or []
        if not transcripts:
            self.notify("this answer has no transcript", severity="warning")
            return
        self.app.open_transcript(self.model, self.challenge, transcripts[0]["relpath"])

    def action_compare(self) -> None:
        self.app.open_compare(self.model, self.challenge)

    def action_grade(self) -> None:
        self.app.open_grades(self.model, self.challenge)

    def action_run(self) -> None:
        self.app.open_runs([(self.model, self.challenge)], "answer")

    def action_published(self) -> None:
        self.app.open_published(self.model, self.challenge)

    def action_adapter(self) -> None:
        """Scaffold this answer's workbench adapter (what `benchtui adapter new` writes),
        after a confirmation that says what it replaces."""
        self.ask_adapter()

    @work(thread=True, exclusive=True, group="answer-adapter")
    def ask_adapter(self) -> None:
        from benchtui.challenges import adapters
        from benchtui.workbench.adapter_scaffold import locate

        try:
            workbench = self.app.workbench
            challenge, folder = locate(workbench, self.model, self.challenge)
            if refusal := adapters.nothing_to_adapt(self.model, challenge.id, folder):  # said before asking
                raise adapters.AdapterError(refusal)
            target = adapters.workbench_adapter_dir(workbench.root, challenge.id) / f"{self.model}.py"
            if target.exists():
                raise FileExistsError(f"{adapters.display_path(target, workbench.root)} exists")
            run, checks = self.data.get("run"), self.data.get("checks")
            reason = adapters.already_binds(workbench.root, challenge, self.model, folder, run, checks)
        except FileExistsError as exc:
            self.app.call_from_thread(self.notify, f"{exc}; edit it, then: benchtui adapter check {self.model} {self.challenge}",
                                      severity="warning", timeout=10)
            return
        except Exception as exc:
            self.app.call_from_thread(self.notify, f"cannot write the adapter: {exc}", severity="error", timeout=10)
            return
        where = adapters.display_path(target, workbench.root)
        detail = (f"{reason}. Written, the scaffold takes over at once, and this answer stays unbound until you "
                  "fill it in." if reason else "Every later run of this answer uses it.")
        self.app.call_from_thread(self._confirm_adapter, where, detail)

    def _confirm_adapter(self, where: str, detail: str) -> None:
        from benchtui.tui.screens.confirm import ConfirmScreen

        def answered(yes: bool | None) -> None:
            if yes:
                self.scaffold_adapter()

        self.app.push_screen(ConfirmScreen(f"Write a scaffold adapter at {where}?", detail), answered)

    @work(thread=True, exclusive=True, group="answer-adapter")
    def scaffold_adapter(self) -> None:
        from benchtui.workbench.adapter_scaffold import scaffold_for

        try:
            # confirmed: the question named what it replaces
            path = scaffold_for(self.app.workbench, self.model, self.challenge, force=True)
        except FileExistsError as exc:
            self.app.call_from_thread(self.notify, f"{exc}; edit it, then: benchtui adapter check {self.model} {self.challenge}",
                                      severity="warning", timeout=10)
            return
        except Exception as exc:
            self.app.call_from_thread(self.notify, f"cannot write the adapter: {exc}", severity="error", timeout=10)
            return
        self.app.call_from_thread(self.notify, f"wrote {path}: fill it in, then press r, then s (or: benchtui adapter check "
                                  f"{self.model} {self.challenge})", timeout=10)

    def action_tab(self, index: int) -> None:
        target = ANSWER_TABS[index]
        focused = self.focused
        if focused is not None and any(isinstance(a, TabPane) and a.id != target for a in focused.ancestors):
            # Focus left inside the pane being hidden would pull its tab back to the front.
            self.set_focus(self.query_one("#file-tree", Tree))
        self.query_one(TabbedContent).active = target


NOT_FAILING = ("pass", "info", "skipped", "not_run")


def figure_cells(check: dict) -> tuple[str, str]:
    """A check's value and threshold cells: none where the check failed for something
    other than its figure (engine/verify/verdicts.figure_within), which would read as a pass."""
    if figure_within(check["verdict"], check["value"], check["threshold"]):
        return "—", "—"
    return check_cell(check["value"]), check_cell(check["threshold"])


def first_failing(checks: list[dict]) -> int:
    """The row the Checks tab highlights first: the first check that did not pass
    (what a reader opens the tab for), else the first row."""
    return next((i for i, c in enumerate(checks) if (c["verdict"] or "not_run") not in NOT_FAILING), 0)


def prompt_version_note(run: dict, checks: list[dict]) -> str:
    """Which prompt the run judged the answer against (engine/challenges/prompts.py)."""
    if not run.get("prompt_version"):
        return "  prompt: unknown or missing (universal checks only)"
    return f"  prompt: {run_prompt_line(run['prompt_version'], prompt_source(checks))}"


def coverage_note(run: dict) -> Text:
    """What the verdict covers (engine/challenges/coverage.py): "requirements: 4 of 5", then
    each one not passed with its reason."""
    import json

    from benchtui.records.coverage import summary

    try:
        cov = json.loads(run.get("coverage") or "null") or []
    except ValueError:
        return Text()
    if not cov:
        return Text()
    out = Text(f"\n  covers {summary(cov)}", style="bold")
    for c in cov:
        if c["status"] != "pass":
            style = "red" if c["status"] == "fail" else "yellow"
            out.append(f"\n    {c['status'].replace('_', ' ')}: {c['words']}", style=style)
            if c.get("reason"):
                out.append(f" ({c['reason'][:160]})", style="dim")
    return out


def adapter_hint(model: str, challenge: str) -> str:
    """The offer for an unbound answer: its API is its own, an adapter binds it."""
    return (f"unbound: press a to scaffold an adapter (benchtui adapter new {model} {challenge}), "
            f"fill it in, then run again or: benchtui adapter check {model} {challenge}")
