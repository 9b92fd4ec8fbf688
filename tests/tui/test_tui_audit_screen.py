"""The suite-strength screen: a changed part past the visible width is brought
into view; `A` asks first, with the count and a cap; a cancelled audit's rows
say they are partial; results fill in while the audit runs."""
from __future__ import annotations

import json

from benchtui.store.database import Store, now_iso
from benchtui.tui.app import BenchApp
from benchtui.tui.diffing import diff_texts
from benchtui.tui.widgets.diff_view import DiffView
from settling import settle
from textual.app import App
from textual.widgets import DataTable, Static

LEFT = "    out = np.asarray(compute_the_layer_norm_backward_pass(dy, x, weight, eps), dtype=np.float64, copy=False)"
RIGHT = LEFT.replace("copy=False", "copy=True")


class OneDiff(App):
    def compose(self):
        yield DiffView(id="d")


async def test_a_change_past_the_visible_width_is_shown():
    app = OneDiff()
    async with app.run_test(size=(80, 10)) as pilot:
        view = app.query_one(DiffView)
        view.show(diff_texts("a = 1\n" + LEFT + "\n", "a = 1\n" + RIGHT + "\n", "orig", "mutant"))
        await pilot.pause()
        row = next(i for i, r in enumerate(view.rows) if r.tag == "replace")
        line = view.render_row(row, view.rows[row]).plain
        left, right = line.split("│", 1)
        assert "copy=False" in left and "copy=True" in right, line
        assert "…" in left and "…" in right  # the cut start is marked
        # a row whose change is in view is not shifted
        short = diff_texts("x = a < b\n", "x = a <= b\n")
        view.show(short)
        await pilot.pause()
        plain = view.render_row(0, view.rows[0]).plain
        assert "x = a < b" in plain and "…" not in plain


def plant_cancelled_audit(wb) -> None:
    """A cancelled audit as the store keeps it: five mutants planned, two run."""
    with Store(wb.store_path) as store, store.conn:
        audit_id = store.db["audits"].insert({"started_at": now_iso(), "status": "cancelled"}).last_pk
        for i, status in enumerate(("killed", "survived")):
            store.db["audit_mutants"].insert({
                "key": f"c{i}", "model": "demo-careful", "challenge": "backwards", "file": "layernorm.py", "line": 3 + i,
                "operator": "compare", "description": "< to <=", "diff": "", "mutant_sha256": f"{i}" * 64,
                "status": status, "checks": json.dumps([])})
        store.db["audit_answers"].insert({"audit_id": audit_id, "model": "demo-careful", "challenge": "backwards",
                                          "status": "audited", "message": "",
                                          "mutant_keys": json.dumps([f"c{i}" for i in range(5)])})


async def test_a_cancelled_audit_reads_as_partial(demo_wb):
    plant_cancelled_audit(demo_wb)
    app = BenchApp(demo_wb)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("a")
        await settle(app, pilot)
        table = app.screen.query_one("#audit-challenges", DataTable)
        row = [str(c) for c in table.get_row_at(0)]
        assert row[0] == "backwards" and row[5] == "2 of 5", row
        assert "partial" in row[6], row
        assert "partial" in str(app.screen.query_one("#audit-status", Static).render())
    assert app.errors == []


async def test_A_asks_with_the_count_and_a_cap_then_fills_results_in(demo_wb, monkeypatch):
    import threading

    from benchtui.audit import core

    calls, release, emitted = [], threading.Event(), threading.Event()

    def fake_run_audit(workbench, options, on_event=None, cancel=None, cluster=None):
        calls.append(options)
        on_event(core.AuditEvent("planned", total=4, message="1 answers, 4 mutants"))
        for i, status in enumerate(("killed", "killed", "survived")):
            on_event(core.AuditEvent("mutant", "demo-careful", "backwards", status, f"layernorm.py:{i} x", done=i + 1,
                                     total=4))
        emitted.set()
        release.wait(10)
        return 1

    monkeypatch.setattr(core, "run_audit", fake_run_audit)
    app = BenchApp(demo_wb)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("a")
        await settle(app, pilot)
        await pilot.press("A")
        await settle(app, pilot)
        question = " ".join(str(w.render()) for w in app.screen.query("#confirm-box Static"))
        assert type(app.screen).__name__ == "ConfirmScreen", type(app.screen).__name__
        assert "40 mutants" in question and "at most" in question and "answers" in question, question
        await pilot.press("n")
        await settle(app, pilot)
        assert calls == []  # no: nothing started
        await pilot.press("A")
        await settle(app, pilot)
        await pilot.press("y")
        for _ in range(50):
            await pilot.pause(0.05)
            if emitted.is_set():
                break
        await pilot.pause(0.2)
        assert calls and calls[0].mutants == 40
        table = app.screen.query_one("#audit-challenges", DataTable)
        row = [str(c) for c in table.get_row_at(table.get_row_index("backwards"))]
        assert row[2:5] == ["2", "1", "0"] and row[1] == "67%", row  # filled in while it runs
        release.set()
        await settle(app, pilot)
    assert app.errors == []
