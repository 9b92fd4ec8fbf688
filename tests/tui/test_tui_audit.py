"""The suite-strength screen: scores per challenge, survivors, a
survivor opened as a diff against the original, and marking it equivalent."""
from __future__ import annotations

import json

from benchtui.audit.mutate import mutants_of
from benchtui.audit.report import apply_diff, challenge_reports
from benchtui.store.database import Store, now_iso
from benchtui.tui.app import BenchApp
from settling import settle
from textual.widgets import DataTable


def plant_audit(wb) -> dict:
    """An audit of demo-careful/backwards as the store would hold it: two killed, one survivor."""
    path = wb.root / "models" / "demo-careful" / "backwards" / "layernorm.py"
    ms = mutants_of(path.read_text(), "layernorm.py")[:3]
    with Store(wb.store_path) as store, store.conn:
        audit_id = store.db["audits"].insert({"started_at": now_iso(), "status": "done"}).last_pk
        for i, m in enumerate(ms):
            store.db["audit_mutants"].insert({
                "key": f"k{i}", "model": "demo-careful", "challenge": "backwards", "file": m.file, "line": m.line,
                "operator": m.operator, "description": m.description, "diff": m.diff, "mutant_sha256": m.sha,
                "status": "survived" if i == 2 else "killed", "killed_by": None if i == 2 else "matches_reference",
                "checks": json.dumps([{"name": "matches_reference", "verdict": "pass"}])})
        store.db["audit_answers"].insert({"audit_id": audit_id, "model": "demo-careful", "challenge": "backwards",
                                          "status": "audited", "message": "", "mutant_keys": json.dumps(["k0", "k1", "k2"])})
    return {"survivor": ms[2], "source": path.read_text()}


def test_apply_diff_rebuilds_each_mutant_and_refuses_a_changed_original():
    src = "def f(a, b):\n    if a < b:\n        return a + b\n    return a - b\n"
    for m in mutants_of(src, "f.py"):
        assert apply_diff(src, m.diff) == m.source
    m = mutants_of(src, "f.py")[0]
    assert apply_diff(src.replace("a < b", "a > b").replace("a + b", "b + a").replace("a - b", "b"), m.diff) is None


async def test_tui_audit_screen_shows_strength_opens_a_survivor_and_marks_it(demo_wb):
    planted = plant_audit(demo_wb)
    app = BenchApp(demo_wb)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("a")
        await settle(app, pilot)
        assert type(app.screen).__name__ == "AuditScreen"
        challenges = app.screen.query_one("#audit-challenges", DataTable)
        assert challenges.row_count == 1
        assert [str(c) for c in challenges.get_row("backwards")[:4]] == ["backwards", "67%", "2", "1"]
        survivors = app.screen.query_one("#audit-survivors", DataTable)
        assert survivors.row_count == 1
        row = [str(c) for c in survivors.get_row_at(0)]
        assert row[:4] == ["demo-careful", f"layernorm.py:{planted['survivor'].line}", planted["survivor"].description,
                           "survived"]
        survivors.focus()
        await settle(app, pilot)
        diff = app.screen.query_one("#audit-diff")
        assert diff.diff is not None and len(diff.changes) == 1  # the original against the mutant: one change
        changed = diff.diff.rows[diff.changes[0]]
        assert changed.left_no == changed.right_no == planted["survivor"].line
        await pilot.press("e")
        await settle(app, pilot)
        assert [str(c) for c in survivors.get_row_at(0)][3] == "marked equivalent"
        assert str(challenges.get_row("backwards")[1]) == "100%"
    assert app.errors == []
    with Store(demo_wb.store_path) as store:
        [report] = challenge_reports(store)
        assert report["survived"] == 0 and report["equivalent"] == 1
        assert store.query("select grader from audit_marks")[0]["grader"] == "reviewer"
