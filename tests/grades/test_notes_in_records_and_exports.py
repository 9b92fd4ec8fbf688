"""Notes are part of an answer's record: `show`, `show --json`,
`grade history` (text and JSON) and every export carry them."""
import csv
import io
import json
import shutil
from pathlib import Path

from benchtui.cli import main

REPO = Path(__file__).resolve().parents[2]


def test_notes_in_show_history_and_exports(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("BENCHTUI_GRADER", "ana")
    root = tmp_path / "wb"
    shutil.copytree(REPO / "models" / "demo-careful" / "kv", root / "models" / "demo-careful" / "kv")
    wb = ["--workbench", str(root)]
    assert main([*wb, "scan"]) == 0
    assert main([*wb, "grade", "set", "demo-careful", "kv", "B"]) == 0
    assert main([*wb, "grade", "note", "demo-careful", "kv", "reads the cache twice"]) == 0
    capsys.readouterr()

    assert main([*wb, "show", "demo-careful", "kv"]) == 0
    assert "note by ana" in (out := capsys.readouterr().out) and ": reads the cache twice" in out
    assert main([*wb, "show", "demo-careful", "kv", "--json"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert [(n["author"], n["text"]) for n in notes] == [("ana", "reads the cache twice")]

    assert main([*wb, "grade", "history", "demo-careful", "kv"]) == 0
    out = capsys.readouterr().out
    assert "B" in out and "ana: reads the cache twice" in out
    assert main([*wb, "grade", "history", "demo-careful", "kv", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [g["letter"] for g in data["grades"]] == ["B"] and data["notes"][0]["text"] == "reads the cache twice"

    assert main([*wb, "export", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["notes"][0]["text"] == "reads the cache twice"
    assert main([*wb, "export", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(r["model"], r["grader"], r["note"]) for r in rows if r["kind"] == "note"] == \
        [("demo-careful", "ana", "reads the cache twice")]


def test_agreement_counts_add_up(tmp_path, capsys):
    """The "2 shared items" line above 4 rows: items one grader alone graded
    (listed for contradicting the suite) now sit under their own heading."""
    from benchtui.store.database import Store, now_iso

    root = tmp_path / "wb"
    for m in ("m1", "m2", "m3"):
        shutil.copytree(REPO / "models" / "demo-careful" / "kv", root / "models" / m / "kv")
    wb = ["--workbench", str(root)]
    assert main([*wb, "scan"]) == 0
    for m, a, b in (("m1", "A", "B"), ("m2", "C", "C"), ("m3", "A", None)):
        assert main([*wb, "grade", "set", m, "kv", a, "--grader", "ana"]) == 0
        if b:
            assert main([*wb, "grade", "set", m, "kv", b, "--grader", "bo"]) == 0
    with Store(root / "store.db") as store:
        store.db["runs"].insert({"model": "m3", "challenge": "kv", "status": "done", "verdict": "fail",
                                 "started_at": now_iso()})
    capsys.readouterr()
    assert main([*wb, "agreement", "ana", "bo"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("ana vs bo: 2 item(s) graded by both, exact 50%")
    assert out[1] == "  differ (1 of the 2):" and out[2].startswith("    m1/kv overall: A vs B")
    assert out[3] == "  graded by one of them only, an A-range grade the suite's verdict contradicts:"
    assert out[4] == "    m3/kv overall: A vs -  (A-range, but the suite says fail)"
    assert len(out) == 5
