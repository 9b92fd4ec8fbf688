"""The grade, grades, agreement, export and backup commands."""
import json
from pathlib import Path

import pytest
from benchtui.cli import main
from benchtui.store.database import Store
from grades_fixtures import fill

JUDGES = Path(__file__).resolve().parents[2] / "models" / "JUDGES.md"


@pytest.fixture
def bench(tmp_path):
    (tmp_path / "models" / "demo-careful" / "kv").mkdir(parents=True)
    fill(Store(tmp_path / "store.db")).close()
    return ["--workbench", str(tmp_path), "--store", str(tmp_path / "store.db")]


def run(bench, capsys, *args):
    code = main([*bench, *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_grade_set_and_refusals(bench, capsys, monkeypatch):
    monkeypatch.setenv("BENCHTUI_GRADER", "ana")
    code, out, _ = run(bench, capsys, "grade", "set", "demo-hasty", "Beam Search", "C", "--note", "drops beams")
    assert code == 0 and "demo-hasty/beam_search overall: C by ana" in out
    for args, message in [(("demo-hasty", "kv", "A++"), "not a grade"),
                          (("gpt-9", "kv", "A"), "unknown model"),
                          (("demo-hasty", "kv", "A", "--dimension", "speed"), "unknown dimension")]:
        code, out, err = run(bench, capsys, "grade", "set", *args)
        assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    code, out, _ = run(bench, capsys, "grades", "list", "--json")
    assert [(g["model"], g["letter"], g["grader"]) for g in json.loads(out)] == [("demo-hasty", "C", "ana")]


def test_import_twice_then_agreement(bench, capsys):
    code, out, _ = run(bench, capsys, "grades", "import", str(JUDGES), "--json")
    first = json.loads(out)
    assert code == 0 and (first["imported"], first["skipped_existing"], first["unmapped"]) == (30, 0, [])
    code, out, _ = run(bench, capsys, "grades", "import", str(JUDGES), "--json")
    assert (json.loads(out)["imported"], json.loads(out)["skipped_existing"]) == (0, 30)
    code, out, _ = run(bench, capsys, "agreement", "DeepSeek V4 Pro", "Kimi K2.6", "--json")
    data = json.loads(out)
    assert code == 0 and data["n"] == 15 and set(data) >= {"n", "exact", "kappa_quadratic", "disagreements"}
    lead = data["disagreements"][0]
    assert (lead["model"], lead["challenge"], lead["grade_a"], lead["suite_conflict"]) == (
        "demo-hasty", "beam_search", "A-", True)
    code, _, err = run(bench, capsys, "agreement", "DeepSeek V4 Pro", "nobody")
    assert code == 2 and "unknown grader" in err


def test_import_reports_unmapped_and_missing_file(bench, capsys, tmp_path):
    md = tmp_path / "j.md"
    md.write_text("| Challenge | GPT-9 | Careful-1 |\n|---|---|---|\n| KV-Cache | A | B |\n", encoding="utf-8")
    code, _, err = run(bench, capsys, "grades", "import", str(md))
    assert code == 1 and "--grader" in err
    code, out, _ = run(bench, capsys, "grades", "import", str(md), "--grader", "Kimi K2.6")
    assert code == 0 and "unmapped: model GPT-9" in out
    code, out, _ = run(bench, capsys, "grades", "alias", "GPT-9", "demo-hasty")
    code, out, _ = run(bench, capsys, "grades", "import", str(md), "--grader", "Kimi K2.6", "--json")
    assert json.loads(out)["imported"] == 1 and json.loads(out)["unmapped"] == []
    code, _, err = run(bench, capsys, "grades", "import", str(tmp_path / "missing.md"))
    assert code == 2 and "no such file" in err


def test_export_and_backup(bench, capsys, tmp_path):
    run(bench, capsys, "grades", "import", str(JUDGES))
    out_file = tmp_path / "GRADES.md"
    code, _, _ = run(bench, capsys, "export", "markdown", "--grader", "Kimi K2.6", "-o", str(out_file))
    assert code == 0 and "| Layer Norm Backward | **95 (A)** |" in out_file.read_text()
    code, out, _ = run(bench, capsys, "export", "csv")
    assert code == 0 and out.startswith("kind,id,model")
    code, out, _ = run(bench, capsys, "export", "json")
    assert len(json.loads(out)["grades"]) == 30
    code, out, _ = run(bench, capsys, "backup", str(tmp_path / "b.db"))
    assert code == 0 and "integrity ok" in out
    code, _, err = run(bench, capsys, "backup", str(tmp_path / "b.db"))
    assert code == 2 and "already exists" in err  # a bad argument: usage


def test_show_prints_a_score_with_its_letter(bench, capsys, monkeypatch):
    monkeypatch.setenv("BENCHTUI_GRADER", "ana")
    assert run(bench, capsys, "grade", "set", "demo-careful", "kv", "82", "--dimension", "correctness")[0] == 0
    assert run(bench, capsys, "grade", "set", "demo-careful", "kv", "A-")[0] == 0
    code, out, err = run(bench, capsys, "show", "demo-careful", "kv")
    assert code == 0, err
    assert "grade correctness: 82 (B-) by ana" in out and "grade overall: A- by ana" in out


def test_grades_list_refuses_a_grader_it_does_not_know(bench, capsys, monkeypatch):
    """A mistyped --grader is not a grader without grades: "no grades yet" would
    say the store holds none."""
    monkeypatch.setenv("BENCHTUI_GRADER", "ana")
    assert run(bench, capsys, "grade", "set", "demo-hasty", "kv", "B")[0] == 0
    code, out, err = run(bench, capsys, "grades", "list", "--grader", "anna")
    assert code == 2 and out == "" and err.strip() == (
        "benchtui: error: unknown grader 'anna'; see `benchtui grades list`")
    code, out, _ = run(bench, capsys, "grades", "list", "--grader", "ana")
    assert code == 0 and "demo-hasty" in out
