"""A deck's published results beside benchtui's verdicts (`benchtui import`):
the agreement per problem, then one row per published run (the deck's verdict,
benchtui's, whether they agree, the annotations' verdicts, both peak_fractions)
and, below, the highlighted run in full: both reasons, the published figures
per shape and each annotation with its quotes. Opened from the matrix (every
answer) or from an answer (that answer alone).

Three panes share the height (app.tcss): the summary (a quarter at most), the
table (the rest) and the detail (a fixed share the user moves with + and -),
each scrolling on its own and reached with tab, so all of it is in reach at
80x24. Model and challenge names are cut in the middle to the width left
beside the verdict columns, so those stay in view at 80 columns.

The table draws only the rows in view (widgets/virtual_table.py): a deck with
10,000 runs opens as fast as one with 40, and a key costs the same. The rows
stay here as the comparison's dicts; the columns' widths are worked out from
them in the loading worker, and a row becomes cells when it scrolls into view."""
from __future__ import annotations

from benchtui.decks.compare import shape_figures
from benchtui.tui.glyphs import HACK_MARK, verdict_text
from benchtui.tui.screens.base import COMPACT_FOOTER_BELOW, GuardedScreen
from benchtui.tui.store_watch import store_fingerprint
from benchtui.tui.widgets.footer import KeysFooter
from benchtui.tui.widgets.title_bar import TitleBar
from benchtui.tui.widgets.virtual_table import VirtualTable
from benchtui.tui.widgets.wrapped_text import WrappedText
from rich.cells import cell_len
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.cache import LRUCache
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Static

AGREEMENT_STYLE = {"agree": "green", "disagree": "bold red"}
COLUMNS = ("model", "challenge", "deck", "benchtui", "agreement", "annotation", "deck pf", "pf")
ANNOTATION_CELLS = 20  # the annotations' verdicts, cut past this (the detail lists each in full)
NAME_CELLS = (14, 40)  # the fewest and most cells a model or challenge name is given
# the detail pane's share of the screen's height (percent): its default, and how far + and - move it
DETAIL_SHARE, DETAIL_STEP, DETAIL_RANGE = 40, 10, (20, 70)


def fit(name: str, width: int) -> str:
    """``name`` in at most ``width`` cells, cut in the middle: both ends tell names apart."""
    if len(name) <= width:
        return name
    head = width // 2
    return name[:head] + "…" + name[len(name) - (width - 1 - head):]


def _pf(value) -> str:
    return "—" if value is None else f"{value:.4f}"


def summary_text(data: dict) -> Text:
    o = data["overall"]
    rho = "—" if o["rank_correlation"] is None else f"{o['rank_correlation']:.2f}"
    agree = "—" if o["agreement"] is None else f"{o['agreement']:.0%}"
    text = Text.assemble(
        ("published results ", "bold"),
        f"{o['answers']} answers, {o['published']} published ({o['deck_pass']} PASS), {o['run_here']} run here"
        + (f", {o['in_flight']} in flight" if o.get("in_flight") else "") + "; "
        f"judged by both {o['judged_both']}: agreement {agree}, rank correlation of the passes {rho}\n")
    if o.get("not_judged_why"):
        text.append("  not judged here: " + ", ".join(
            f"{n} {why}" for why, n in sorted(o["not_judged_why"].items(), key=lambda kv: -kv[1])) + "\n", style="dim")
    from benchtui.decks.compare import hacks_line

    text.append(f"  {HACK_MARK} {hacks_line(o)}\n", style="bold magenta" if o.get("suspected_hacks") else "dim")
    for cid, s in data["challenges"].items():
        differ = s["deck_pass_here_fail"] + s["deck_fail_here_pass"]
        text.append(f"  {cid}: ", style="bold")
        text.append(f"{s['both_pass'] + s['both_fail']} agree, ")
        text.append(f"{differ} differ", style="red" if differ else "")
        text.append(f", {s['not_judged_here']} not judged here\n")
    for imp in data["imports"]:
        for line in imp["problems"]:
            text.append(f"  the deck itself: {line}\n", style="yellow")
    return text


def detail_text(row: dict, published: list[dict]) -> Text:
    text = Text.assemble((f"{row['model'] or '(no answer)'} / {row['challenge']}", "bold"), f"   run {row['run_id']}\n")
    text.append(f"deck: {row['deck_verdict'] or '—'} ({row['deck_reason'] or '—'}), peak_fraction {_pf(row['deck_figure'])}\n")
    text.append("benchtui: ")
    text.append_text(verdict_text(row["verdict"]) if row["verdict"] else Text("not run", style="dim"))
    if row.get("not_judged"):
        text.append(f", not judged here: {row['not_judged']}", style="yellow")
    text.append(f" ({row['reason'] or '—'}), peak_fraction {_pf(row['figure'])}\n")
    if row.get("in_flight"):
        text.append(f"◌ {row['in_flight']}\n", style="cyan")
    if row.get("marks"):
        text.append(f"≠ {row['marks']}\n", style="bold yellow")
    if row.get("flags"):
        from benchtui.records.flags import describe

        text.append(f"{HACK_MARK} {describe(row['flags'])} (a flag, not the verdict)\n", style="bold magenta")
    for p in published:
        if p["run_id"] != row["run_id"]:
            continue
        if p["board_label"]:
            text.append(f"leaderboard: {p['board_label']}, peak_fraction {_pf(p['board_peak_fraction'])}\n", style="dim")
        for s in p["shapes"]:
            text.append(f"  shape {s.get('idx', '?')} {s.get('label', '')}: {shape_figures(s)}\n", style="dim")
        for a in p["annotations"]:
            text.append(f"annotation ({a['source']}): ", style="bold")
            text.append(a["verdict"], style="green" if a["verdict"] == "clean" else "bold red")
            text.append(f", peak_fraction {_pf(a['peak_fraction'])}\n  {a['summary']}\n")
            for q in a["quotes"]:
                text.append(f"  {q['file']}:{'-'.join(map(str, q['lines'] or []))}  {q['label']}\n", style="cyan")
                text.append("".join(f"    {line}\n" for line in q["text"].rstrip().splitlines()[:12]), style="dim")
    return text


def row_cells(r: dict) -> list:
    """One row's cells in COLUMNS order, model and challenge as plain text (cut to fit later)."""
    return [r["model"] or "(no answer)", r["challenge"], r["deck_verdict"] or "—",
            benchtui_cell(r),
            Text(r["agreement"], style=AGREEMENT_STYLE.get(r["agreement"], "dim")),
            Text(notes_text(r), style="bold red" if any(a["verdict"] != "clean" for a in r["annotations"]) else ""),
            _pf(r["deck_figure"]), _pf(r["figure"])]


def notes_text(r: dict) -> str:
    notes = ", ".join(a["verdict"] for a in r["annotations"]) or "—"
    return notes if len(notes) <= ANNOTATION_CELLS else notes[:ANNOTATION_CELLS - 1] + "…"


def benchtui_cell(r: dict) -> Text:
    """benchtui's verdict, and the hack mark beside it where the run is flagged."""
    if not r["verdict"]:
        return Text("not run", style="dim")
    text = verdict_text(r["verdict"])
    if r.get("flags"):
        from benchtui.records.flags import marks

        text.append(f" {HACK_MARK}{marks(r['flags'])}", style="bold magenta")
    return text


def column_widths(rows: list[dict]) -> list[int]:
    """The widest text of each column over ``rows`` (names whole), as row_cells writes
    it: from the distinct texts of each column, so 10,000 rows cost a pass over dicts,
    no Text built per row."""
    flagged = {(r["verdict"], tuple(r.get("flags") or ())) for r in rows}
    seen: list[set] = [
        {r["model"] or "(no answer)" for r in rows}, {r["challenge"] for r in rows},
        {r["deck_verdict"] or "—" for r in rows},
        {benchtui_cell({"verdict": v, "flags": list(f)}).plain for v, f in flagged},
        {r["agreement"] for r in rows},
        {notes_text(r) for r in rows if r["annotations"]} | ({"—"} if any(not r["annotations"] for r in rows) else set()),
        # each distinct figure formatted once
        {_pf(v) for v in {r["deck_figure"] for r in rows}}, {_pf(v) for v in {r["figure"] for r in rows}}]
    return [max(map(cell_len, texts), default=0) for texts in seen]


def name_cells(widths: list[int], width: int) -> int:
    """The cells a model or challenge name gets in a table ``width`` wide, ``widths``
    each column's widest text (column_widths; each column padded by 2, the scrollbar
    2): what every other column leaves, where that is at least the fewest a name gets;
    else what the columns up to the annotation leave (the peak_fractions are then
    scrolled to, and shown in the detail)."""
    def cells(i: int) -> int:
        return max(len(COLUMNS[i]), widths[i]) + 2

    def left(last: int) -> int:
        return (width - 2 - sum(cells(i) for i in range(2, last)) - 4) // 2

    every = left(len(COLUMNS))
    names = every if every >= NAME_CELLS[0] else left(COLUMNS.index("annotation") + 1)
    return max(NAME_CELLS[0], min(NAME_CELLS[1], names))


KEPT_VIEWS = 2  # the comparisons kept on the app: the whole deck's, and the answer last looked at


def kept_comparison(app, view: tuple, fingerprint) -> tuple | None:
    """The comparison (data, rows, widths) of ``view`` (challenge, model) kept on the app
    for the store as it is now (``fingerprint``: store_watch.store_fingerprint), or None."""
    kept = getattr(app, "published_kept", {}).get(view)
    return kept[1] if kept is not None and fingerprint is not None and kept[0] == fingerprint else None


def keep_comparison(app, view: tuple, fingerprint, comparison: tuple) -> None:
    """Keep ``view``'s comparison for the store at ``fingerprint``; any write since makes it
    stale (the fingerprint moves). Not kept: one listing a run in flight (whether its process
    is alive is not in the store), or a store that cannot say its fingerprint."""
    data = comparison[0]
    if fingerprint is None or (data and data["overall"].get("in_flight")):
        return
    kept = dict(getattr(app, "published_kept", {}))
    kept.pop(view, None)
    kept[view] = (fingerprint, comparison)
    while len(kept) > KEPT_VIEWS:
        kept.pop(next(iter(kept)))
    app.published_kept = kept  # replaced whole: the main thread reads it (kept_comparison) from a worker too


class PublishedScreen(GuardedScreen):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="published.back"),
        Binding("plus,equals_sign", "detail(1)", "Grow detail", id="published.detail_more"),
        Binding("minus", "detail(-1)", "Shrink detail", id="published.detail_less"),
        Binding("ctrl+r", "reload", "Refresh", id="published.refresh", show=False),
    ]

    class Loaded(Message):
        def __init__(self, data: dict | None, error: str = "", rows: list[dict] | None = None,
                     widths: list[int] | None = None) -> None:
            super().__init__()
            self.data, self.error = data, error
            self.rows, self.widths = rows or [], widths or [0] * len(COLUMNS)

    class DetailLoaded(Message):
        def __init__(self, row: dict, published: list[dict]) -> None:
            super().__init__()
            self.row, self.published = row, published

    def __init__(self, model: str | None = None, challenge: str | None = None) -> None:
        super().__init__()
        self.model, self.challenge = model, challenge
        self.rows: list[dict] = []
        self.widths = [0] * len(COLUMNS)  # each column's widest text over the rows (names whole)
        self.detail_share = DETAIL_SHARE
        self._table_width = 0  # the width the table's names were last cut for
        self._name_cells = NAME_CELLS[1]
        self._cells: LRUCache[int, list[Text]] = LRUCache(1024)  # the rows in view (and near), as cells

    def compose(self) -> ComposeResult:
        yield TitleBar()
        # the summary's lines (one per problem) are wrapped only as they are drawn: 250 problems open at once
        yield VerticalScroll(WrappedText("loading the published results…", id="published-summary", classes="panel-text"),
                             id="published-summary-pane")
        yield VirtualTable(COLUMNS, id="published-table")
        yield VerticalScroll(Static(id="published-detail", classes="panel-text"), id="published-detail-pane")
        yield KeysFooter(compact=self.app.size.width < COMPACT_FOOTER_BELOW)

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#published-detail-pane").styles.height = f"{self.detail_share}%"
        self.query_one("#published-table", VirtualTable).focus()
        self.load()

    def on_resize(self) -> None:
        super().on_resize()
        if self.rows and self.app.size.width != self._table_width:
            self.fill_table()

    def action_detail(self, step: int) -> None:
        """Move the split between the table and the detail pane."""
        low, high = DETAIL_RANGE
        self.detail_share = max(low, min(high, self.detail_share + step * DETAIL_STEP))
        self.query_one("#published-detail-pane").styles.height = f"{self.detail_share}%"
        # the table's height changed: once laid out again, its highlighted row is scrolled back into view
        self.call_after_refresh(self.query_one("#published-table", VirtualTable).scroll_cursor_into_view)

    def action_reload(self) -> None:
        self.load(cached=False)

    @work(thread=True, exclusive=True, group="published-load")
    def load(self, cached: bool = True) -> None:
        """The comparison, the rows this screen lists and their columns' widths, off the UI
        thread: worked out once per store change (kept on the app, keep_comparison), so
        opening the screen again, or going back to it, costs no comparison; ctrl+r works
        it out anew."""
        try:
            view = (self.challenge, self.model)
            fingerprint = self.app.call_from_thread(store_fingerprint, self.app)  # the app's connection, on its thread
            kept = kept_comparison(self.app, view, fingerprint) if cached else None
            if kept is None:
                kept = self.compare()
                keep_comparison(self.app, view, fingerprint, kept)
            data, rows, widths = kept
        except Exception as exc:
            self.post_message(self.Loaded(None, f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(self.Loaded(data, rows=rows, widths=widths))

    def compare(self) -> tuple[dict | None, list[dict], list[int]]:
        from benchtui.decks.compare import compare, narrowed

        with self.app.open_store() as store:
            data = None if "deck_results" not in store.table_names() else compare(store, challenge=self.challenge)
            if data is not None and self.model is not None:  # one answer's: the deck's lines about its runs
                data["imports"] = narrowed(store, data["imports"], [r for r in data["answers"] if r["model"] == self.model])
        rows = [r for r in data["answers"] if self.model is None or r["model"] == self.model] if data else []
        return data, rows, column_widths(rows)

    def on_published_screen_loaded(self, message: Loaded) -> None:
        summary = self.query_one("#published-summary", WrappedText)
        if message.error:
            summary.update(f"published results unavailable: {message.error}")
            self.app.report_error("published", message.error)
            return
        data = message.data
        if not data or not data["answers"]:
            summary.update("no deck imported here: `benchtui import DECK` opens a KernelBench or KernelBench-Hard deck")
            return
        summary.update(summary_text(data))
        self.rows, self.widths = message.rows, message.widths
        self.fill_table()
        if self.model is not None and not self.rows:
            self.query_one("#published-detail", Static).update(
                f"{self.model} / {self.challenge}: no published result of the imported decks")
        elif self.rows:
            self.show_detail(self.rows[self.query_one("#published-table", VirtualTable).cursor_row])

    def fill_table(self) -> None:
        """The rows, their names cut to the screen's width; the cursor stays on its row.
        Only the rows in view are made into cells (row_at), as the table draws them."""
        table = self.query_one("#published-table", VirtualTable)
        self._table_width = self.app.size.width
        self._name_cells = name = name_cells(self.widths, self._table_width)
        self._cells.clear()
        table.set_rows(len(self.rows), self.row_at, [min(self.widths[0], name), min(self.widths[1], name), *self.widths[2:]])
        self.call_after_refresh(table.scroll_cursor_into_view)

    def row_at(self, i: int) -> list[Text]:
        """Row ``i``'s cells as the table shows them: Text each (a name is never read as markup)."""
        cells = self._cells.get(i)
        if cells is None:
            row, width = row_cells(self.rows[i]), self._name_cells
            cells = [c if isinstance(c, Text) else Text(c) for c in (fit(row[0], width), fit(row[1], width), *row[2:])]
            self._cells[i] = cells
        return cells

    @on(VirtualTable.RowHighlighted, "#published-table")
    def row_highlighted(self, event: VirtualTable.RowHighlighted) -> None:
        if event.cursor_row < len(self.rows):
            self.show_detail(self.rows[event.cursor_row])

    @work(thread=True, exclusive=True, group="published-detail")
    def show_detail(self, row: dict) -> None:
        from benchtui.decks.compare import published_detail

        published = []
        if row["model"]:
            with self.app.open_store() as store:
                published = published_detail(store, row["model"], row["challenge"])
        self.post_message(self.DetailLoaded(row, published))

    def on_published_screen_detail_loaded(self, message: DetailLoaded) -> None:
        self.query_one("#published-detail", Static).update(detail_text(message.row, message.published))
        self.query_one("#published-detail-pane").scroll_home(animate=False)  # a new row's detail from its top
