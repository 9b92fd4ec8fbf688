"""Issue 19: notes are part of an answer's record: `show`, `show --json`,
`grade history` (text and JSON) and every export carry them."""
import csv
import io
import json
import shutil
from pathlib import Path

from engine.cli import main

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
