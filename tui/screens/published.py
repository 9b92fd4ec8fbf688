"""A deck's published results beside benchtui's verdicts (`benchtui import`):
the agreement per problem, then one row per published run (the deck's verdict
and peak_fraction, benchtui's, whether they agree, the annotations' verdicts)
and, below, the highlighted run in full: both reasons, the published figures
per shape and each annotation with its quotes. Opened from the matrix (every
answer) or from an answer (that answer alone)."""
from __future__ import annotations

from benchtui.tui.glyphs import verdict_text
from benchtui.tui.screens.base import COMPACT_FOOTER_BELOW, GuardedScreen
from benchtui.tui.widgets.footer import KeysFooter
from benchtui.tui.widgets.title_bar import TitleBar
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Static

AGREEMENT_STYLE = {"agree": "green", "disagree": "bold red"}


def _pf(value) -> str:
    return "—" if value is None else f"{value:.4f}"


def summary_text(data: dict) -> Text:
    o = data["overall"]
    rho = "—" if o["rank_correlation"] is None else f"{o['rank_correlation']:.2f}"
    agree = "—" if o["agreement"] is None else f"{o['agreement']:.0%}"
    text = Text.assemble(
        ("published results ", "bold"),
        f"{o['answers']} answers, {o['published']} published ({o['deck_pass']} PASS), {o['run_here']} run here; "
        f"judged by both {o['judged_both']}: agreement {agree}, rank correlation of the passes {rho}\n")
    if o.get("not_judged_why"):
        text.append("  not judged here: " + ", ".join(
            f"{n} {why}" for why, n in sorted(o["not_judged_why"].items(), key=lambda kv: -kv[1])) + "\n", style="dim")
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
    if row.get("marks"):
        text.append(f"≠ {row['marks']}\n", style="bold yellow")
    for p in published:
        if p["run_id"] != row["run_id"]:
            continue
        if p["board_label"]:
            text.append(f"leaderboard: {p['board_label']}, peak_fraction {_pf(p['board_peak_fraction'])}\n", style="dim")
        for s in p["shapes"]:
            text.append(f"  shape {s.get('idx', '?')} {s.get('label', '')}: {s.get('ms', '—')} ms, "
                        f"{s.get('tflops', '—')} TFLOPS, {s.get('gbps', '—')} GB/s, fraction {s.get('frac', '—')} "
                        f"({s.get('bound', '')})\n", style="dim")
        for a in p["annotations"]:
            text.append(f"annotation ({a['source']}): ", style="bold")
            text.append(a["verdict"], style="green" if a["verdict"] == "clean" else "bold red")
            text.append(f", peak_fraction {_pf(a['peak_fraction'])}\n  {a['summary']}\n")
            for q in a["quotes"]:
                text.append(f"  {q['file']}:{'-'.join(map(str, q['lines'] or []))}  {q['label']}\n", style="cyan")
                text.append("".join(f"    {line}\n" for line in q["text"].rstrip().splitlines()[:12]), style="dim")
    return text


class PublishedScreen(GuardedScreen):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="published.back"),
        Binding("ctrl+r", "reload", "Refresh", id="published.refresh", show=False),
    ]

    class Loaded(Message):
        def __init__(self, data: dict | None, error: str = "") -> None:
            super().__init__()
            self.data, self.error = data, error

    class DetailLoaded(Message):
        def __init__(self, row: dict, published: list[dict]) -> None:
            super().__init__()
            self.row, self.published = row, published

    def __init__(self, model: str | None = None, challenge: str | None = None) -> None:
        super().__init__()
        self.model, self.challenge = model, challenge
        self.rows: list[dict] = []

    def compose(self) -> ComposeResult:
        yield TitleBar()
        yield VerticalScroll(Static("loading the published results…", id="published-summary", classes="panel-text"),
                             id="published-summary-pane")
        yield DataTable(id="published-table", cursor_type="row")
        yield VerticalScroll(Static(id="published-detail", classes="panel-text"), id="published-detail-pane")
        yield KeysFooter(compact=self.app.size.width < COMPACT_FOOTER_BELOW)

    def on_mount(self) -> None:
        table = self.query_one("#published-table", DataTable)
        table.add_columns("model", "challenge", "deck", "deck pf", "benchtui", "pf", "agreement", "annotation")
        table.focus()
        self.load()

    def action_reload(self) -> None:
        self.load()

    @work(thread=True, exclusive=True, group="published-load")
    def load(self) -> None:
        try:
            from benchtui.decks.compare import compare

            with self.app.open_store() as store:
                data = None if "deck_results" not in store.table_names() else compare(store, challenge=self.challenge)
        except Exception as exc:
            self.post_message(self.Loaded(None, f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(self.Loaded(data))

    def on_published_screen_loaded(self, message: Loaded) -> None:
        summary = self.query_one("#published-summary", Static)
        if message.error:
            summary.update(f"published results unavailable: {message.error}")
            self.app.report_error("published", message.error)
            return
        data = message.data
        if not data or not data["answers"]:
            summary.update("no deck imported here: `benchtui import DECK` opens a KernelBench or KernelBench-Hard deck")
            return
        summary.update(summary_text(data))
        self.rows = [r for r in data["answers"] if self.model is None or r["model"] == self.model]
        table = self.query_one("#published-table", DataTable)
        table.clear()
        for i, r in enumerate(self.rows):
            notes = ", ".join(a["verdict"] for a in r["annotations"]) or "—"
            table.add_row(r["model"] or "(no answer)", r["challenge"], r["deck_verdict"] or "—", _pf(r["deck_figure"]),
                          verdict_text(r["verdict"]) if r["verdict"] else Text("not run", style="dim"), _pf(r["figure"]),
                          Text(r["agreement"], style=AGREEMENT_STYLE.get(r["agreement"], "dim")),
                          Text(notes, style="bold red" if any(a["verdict"] != "clean" for a in r["annotations"]) else ""),
                          key=str(i))
        if self.model is not None and not self.rows:
            self.query_one("#published-detail", Static).update(
                f"{self.model} / {self.challenge}: no published result of the imported decks")
        elif self.rows:
            self.show_detail(self.rows[0])

    @on(DataTable.RowHighlighted, "#published-table")
    def row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key is not None and event.row_key.value is not None and int(event.row_key.value) < len(self.rows):
            self.show_detail(self.rows[int(event.row_key.value)])

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
