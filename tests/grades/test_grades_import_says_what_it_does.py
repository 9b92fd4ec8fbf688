"""What an import, a grade and an export say about themselves: a dry run that
counts what is stored and lists each grade, a file that yields nothing saying
why, an import that replaces another source's grade saying so, grades on
answers the workbench lacks refused or marked, and which grader a cell shows
stated and listed wherever the matrix is."""
import csv
import io
import json
from pathlib import Path

import pytest
from benchtui.cli import main
from benchtui.grading.aggregates import leaderboard
from benchtui.grading.exports import csv_text, markdown
from benchtui.grading.grades import CELL_RULE, all_grades, current_grade, list_graders, set_grade
from benchtui.grading.judge_import import import_markdown, import_text
from benchtui.store.database import Store
from grades_fixtures import fill

REPO = Path(__file__).resolve().parents[2]
JUDGES = REPO / "models" / "JUDGES.md"
PUBLISHED = REPO.parent / "shared" / "published-benchmark" / "llm_programming_tests"


@pytest.fixture
def bench(tmp_path):
    (tmp_path / "models" / "demo-careful" / "kv").mkdir(parents=True)
    fill(Store(tmp_path / "store.db")).close()
    return ["--workbench", str(tmp_path), "--store", str(tmp_path / "store.db")]


def run(bench, capsys, *args):
    code = main([*bench, *args])
    out, err = capsys.readouterr()
    return code, out, err


# -- a dry run --------------------------------------------------------------------

def test_a_dry_run_counts_grades_already_stored_and_writes_nothing(store):
    ahead = import_markdown(store, JUDGES, dry_run=True)
    assert (ahead.imported, ahead.skipped_existing) == (30, 0)
    assert all_grades(store) == [] and list_graders(store) == []  # not even the judges
    assert {"model": "demo-careful", "challenge": "beam_search", "dimension": "overall", "grade": "B",
            "grader": "DeepSeek V4 Pro", "line": 24, "supersedes": None} in ahead.grades
    done = import_markdown(store, JUDGES)
    assert (done.imported, done.skipped_existing) == (30, 0)
    again = import_markdown(store, JUDGES, dry_run=True)
    assert (again.imported, again.skipped_existing, again.grades) == (0, 30, [])
    assert import_markdown(store, JUDGES).imported == 0


def test_the_dry_run_command_lists_each_grade(bench, capsys):
    code, out, _ = run(bench, capsys, "grades", "import", str(JUDGES), "--dry-run")
    assert code == 0 and out.startswith("would import 30 grades from JUDGES.md")
    assert "  demo-careful/beam_search: B by DeepSeek V4 Pro (line 24)" in out.splitlines()
    assert "  demo-careful/beam_search: 90 (A-) by Kimi K2.6 (line 44)" in out.splitlines()
    run(bench, capsys, "grades", "import", str(JUDGES))
    code, out, _ = run(bench, capsys, "grades", "import", str(JUDGES), "--dry-run", "--json")
    data = json.loads(out)
    assert (data["imported"], data["skipped_existing"], data["grades"]) == (0, 30, [])


# -- grades on answers the workbench does not hold ----------------------------------

@pytest.mark.parametrize("model,challenge,why", [
    ("demo-quitter", "flash_attention", "has no folder for flash_attention"),
    ("demo-careful", "dflash_verify", "has no folder for dflash_verify"),
])
def test_grade_set_refuses_an_answer_the_workbench_lacks(bench, capsys, model, challenge, why):
    code, out, err = run(bench, capsys, "grade", "set", model, challenge, "A", "--grader", "ana")
    assert code == 2 and why in err and "--allow-missing" in err and len(err.strip().splitlines()) == 1
    code, out, _ = run(bench, capsys, "grades", "list", "--json")
    assert json.loads(out) == []


def test_a_grade_on_a_prompt_only_folder_is_refused(tmp_path, capsys):
    (tmp_path / "models" / "demo-careful" / "kv").mkdir(parents=True)
    with Store(tmp_path / "store.db") as store:
        fill(store)
        with store.db.conn:
            store.execute("update answers set status = 'no_answer', present = 1 "
                          "where model = 'demo-quitter' and challenge = 'flash_attention'")
    bench = ["--workbench", str(tmp_path), "--store", str(tmp_path / "store.db")]
    code, _, err = run(bench, capsys, "grade", "set", "demo-quitter", "flash_attention", "A")
    assert code == 2 and "holds no answer" in err


def test_an_allowed_grade_on_a_missing_answer_is_marked_in_the_exports(bench, capsys):
    code, out, _ = run(bench, capsys, "grade", "set", "demo-quitter", "flash_attention", "A", "--grader", "ana",
                       "--allow-missing")
    assert code == 0 and "has no folder for flash_attention; exports mark it" in out
    code, out, _ = run(bench, capsys, "export", "markdown")
    assert "| Flash Attn Forward | **A (no answer)** | — | — |" in out
    assert "(no answer): graded, but the workbench holds no answer for it" in out
    code, out, _ = run(bench, capsys, "export", "json")
    data = json.loads(out)
    assert data["leaderboard"]["no_answer"] == ["demo-quitter/flash_attention"]
    assert [(g["model"], g["no_answer"]) for g in data["grades"]] == [("demo-quitter", True)]
    code, out, _ = run(bench, capsys, "export", "csv")
    [row] = [r for r in csv.DictReader(io.StringIO(out)) if r["kind"] == "grade"]
    assert (row["model"], row["challenge"], row["no_answer"], row["shown"]) == (
        "demo-quitter", "flash_attention", "True", "True")


# -- files that yield nothing, and the published per-dimension shapes -----------------

KV_SHAPE = """\
# Head-to-Head Analysis: KV-Cache System

| Dimension | Careful-1 Score | Hasty-2 Score |
|-----------|--------------|---------------|
| Correctness | 55 | 92 |
| Tests / Demos | 30 | 95 |
| Optimizations Proposed | 72 | 90 |
| **Overall** | **64** | **91** |
"""

FUSE_SHAPE = """\
# Head-to-Head Analysis: Fused Softmax + Top-K CUDA Kernel

## 6. Scores & Justification

### 6.1 Careful-1 Score: **58/100**

| Category | Weight | Score | Weighted |
|---|---|---|---|
| Correctness | 25% | 35 | 8.75 |
| Code Quality | 15% | 55 | 8.25 |
| CUDA Knowledge Depth | 20% | 60 | 12.00 |
| **Total** | **100%** | | **50.00** |

### 6.2 Hasty-2 Score: **88/100**
"""


def test_scores_by_dimension_with_score_in_the_model_columns(store):
    result = import_text(store, KV_SHAPE, grader="J")
    got = {(g.model, g.dimension): g.display for g in all_grades(store)}
    assert got == {("demo-careful", "correctness"): "55 (F)", ("demo-hasty", "correctness"): "92 (A-)",
                   ("demo-careful", "testing"): "30 (F)", ("demo-hasty", "testing"): "95 (A)",
                   ("demo-careful", "overall"): "64 (D)", ("demo-hasty", "overall"): "91 (A-)"}
    assert {g.challenge for g in all_grades(store)} == {"kv"}
    assert any("Optimizations Proposed" in p for p in result.problems)


def test_a_score_in_a_heading_and_one_model_s_category_table(store):
    import_text(store, FUSE_SHAPE, grader="J")
    got = {(g.model, g.challenge, g.dimension): g.display for g in all_grades(store)}
    assert got == {("demo-careful", "fuse", "overall"): "58 (F)", ("demo-careful", "fuse", "correctness"): "35 (F)",
                   ("demo-careful", "fuse", "code_quality"): "55 (F)", ("demo-hasty", "fuse", "overall"): "88 (B+)"}


@pytest.mark.parametrize("text,why", [
    ("# Notes\n\nNothing graded here.\n", "no grade matrix, scoreboard"),
    (KV_SHAPE.replace("Careful-1", "GPT-9").replace("Hasty-2", "Claude-12"), "nor a heading above name a model"),
    ("### Careful-1 kv\n\nGrade: A++\n", "one of the problems listed"),
    # a README's matrix of this workbench's challenges by models it does not hold: those names, and what to do
    ("| Challenge | Level | GPT-9 | Claude-12 |\n|---|---|---|---|\n| KV-Cache | Medium | B | C |\n",
     "line 1: a grade matrix whose model columns (Claude-12, GPT-9) are not models of this workbench; "
     "import it in the workbench holding their answers (`benchtui --workbench DIR grades import FILE`), "
     "or map each name to one here with `benchtui grades alias NAME MODEL_FOLDER`"),
])
def test_a_file_that_yields_nothing_says_why(store, text, why):
    result = import_text(store, text, grader="J")
    assert result.imported == 0 and why in result.nothing_found


def test_the_command_says_why_and_exits_1_for_a_file_with_no_grade(bench, capsys, tmp_path):
    empty = tmp_path / "prose.md"
    empty.write_text("# Notes\n\nNothing graded here.\n", encoding="utf-8")
    code, out, _ = run(bench, capsys, "grades", "import", str(empty), "--grader", "J")
    assert code == 1 and out.startswith("nothing imported from prose.md: no grade read")
    assert "no graders" not in out
    code, out, _ = run(bench, capsys, "grades", "import", str(empty), "--grader", "J", "--json")
    assert code == 1 and json.loads(out)["nothing_found"].startswith("no grade read")


def test_a_folder_or_several_files_at_once_and_what_is_not_markdown(bench, capsys, tmp_path):
    folder = tmp_path / "analysis"
    folder.mkdir()
    (folder / "kv_comparison.md").write_text(KV_SHAPE, encoding="utf-8")
    (folder / "fuse_comparison.md").write_text(FUSE_SHAPE, encoding="utf-8")
    (folder / "layernorm.py").write_text("x = 1\n", encoding="utf-8")
    code, out, _ = run(bench, capsys, "grades", "import", str(folder), "--grader", "J")
    assert code == 0
    assert [line.split(";")[0] for line in out.splitlines() if not line.startswith(" ")] == [
        f"{folder}: 2 files, read in name order (fuse_comparison.md, kv_comparison.md)",
        "imported 4 grades from fuse_comparison.md (J)", "imported 6 grades from kv_comparison.md (J)"]
    code, out, _ = run(bench, capsys, "grades", "import", str(folder / "kv_comparison.md"),
                       str(folder / "fuse_comparison.md"), "--grader", "J", "--json")
    data = json.loads(out)
    assert code == 0 and (data["imported"], data["skipped_existing"], len(data["files"])) == (0, 10, 2)
    code, _, err = run(bench, capsys, "grades", "import", str(folder / "layernorm.py"), "--grader", "J")
    assert code == 2 and "not a Markdown file" in err
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = run(bench, capsys, "grades", "import", str(empty))
    assert code == 2 and "no Markdown (.md) files in the folder" in err


@pytest.mark.skipif(not PUBLISHED.is_dir(), reason=f"the published benchmark is not at {PUBLISHED}")
@pytest.mark.parametrize("name,expected", [
    ("kv_comparison.md", {("minimax-m2.7", "kv", "overall"): "64 (D)", ("qwen36", "kv", "overall"): "91 (A-)",
                          ("qwen36", "kv", "correctness"): "92 (A-)"}),
    ("fuse_comparison.md", {("minimax-m2.7", "fuse", "overall"): "58 (F)", ("qwen36", "fuse", "overall"): "88 (B+)",
                            ("qwen36", "fuse", "correctness"): "90 (A-)"}),
])
def test_the_published_comparison_files_import(tmp_path, name, expected):
    with Store(tmp_path / "store.db") as store:
        with store.db.conn:
            for model in ("minimax-m2.7", "qwen36"):
                store.db["models"].insert({"name": model, "display_name": model, "present": 1})
        result = import_markdown(store, PUBLISHED / "analysis" / name, grader="deepseek-v4-pro")
        got = {(g.model, g.challenge, g.dimension): g.display for g in all_grades(store)}
    assert result.nothing_found is None and result.unmapped == []
    assert expected.items() <= got.items()


# -- an import that replaces another source's grade ----------------------------------

def test_an_import_that_supersedes_another_source_s_grade_says_so(store, tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("Judge: J\n\n| Challenge | Careful-1 |\n|---|---|\n| KV-Cache | A- |\n", encoding="utf-8")
    analysis = tmp_path / "kv_comparison.md"
    analysis.write_text(KV_SHAPE, encoding="utf-8")
    import_markdown(store, readme)
    ahead = import_markdown(store, analysis, grader="J", dry_run=True)
    assert [g["supersedes"]["grade"] for g in ahead.grades if g["supersedes"]] == ["A-"]
    result = import_markdown(store, analysis, grader="J")
    [line] = result.superseded
    assert line.startswith("demo-careful/kv: 64 (D) (line 8) replaces J's A- from README.md (#1)")
    assert current_grade(store, "demo-careful", "kv", grader="J").display == "64 (D)"
    # imported again, the file replaces nothing of another source's: nothing to say
    assert import_markdown(store, analysis, grader="J").superseded == []


def test_keep_existing_leaves_the_earlier_source_s_grade_standing(store, tmp_path):
    import_text(store, "Judge: J\n\n| Challenge | Careful-1 |\n|---|---|\n| KV-Cache | A- |\n", source="README.md")
    result = import_text(store, KV_SHAPE, grader="J", source="kv_comparison.md", keep_existing=True)
    assert result.kept == 1 and result.superseded == []
    assert current_grade(store, "demo-careful", "kv", grader="J").letter == "A-"
    assert current_grade(store, "demo-careful", "kv", "correctness", grader="J").score == 55


def test_the_import_command_warns_and_history_says_which_grade_stands(bench, capsys, tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("| Challenge | Careful-1 |\n|---|---|\n| KV-Cache | A- |\n", encoding="utf-8")
    analysis = tmp_path / "kv_comparison.md"
    analysis.write_text(KV_SHAPE, encoding="utf-8")
    run(bench, capsys, "grades", "import", str(readme), "--grader", "J")
    code, out, _ = run(bench, capsys, "grades", "import", str(analysis), "--grader", "J")
    assert code == 0 and "  supersedes demo-careful/kv: 64 (D) (line 8) replaces J's A- from README.md (#1)" in out
    code, out, _ = run(bench, capsys, "grade", "history", "demo-careful", "kv")
    lines = out.splitlines()
    assert "README.md" in lines[0] and "superseded by #" in lines[0]
    assert any("kv_comparison.md" in line and "overall" in line and "current, shown" in line for line in lines)
    code, out, _ = run(bench, capsys, "grade", "history", "demo-careful", "kv", "--json")
    first = json.loads(out)["grades"][0]
    assert (first["source"], first["current"], first["superseded_by"] is not None) == ("import:README.md", False, True)


# -- which grader a cell shows ---------------------------------------------------

def test_a_cell_two_judges_graded_shows_the_rule_and_both_grades(store):
    import_markdown(store, JUDGES)
    lb = leaderboard(store)
    shown, other = lb.graded_by[("demo-careful", "beam_search")]
    assert (shown.grader, shown.display, other.grader, other.display) == ("Kimi K2.6", "90 (A-)", "DeepSeek V4 Pro", "B")
    assert lb.matrix[("demo-careful", "beam_search")] == shown  # the rankings use the grade shown
    text = markdown(store)
    assert CELL_RULE in text
    assert "| Beam Search | **90 (A-)**\u2020 |" in text.replace(" 78 (C+)\u2020 | \u2014 |", "")
    assert "- Beam Search, Careful-1: 90 (A-) by Kimi K2.6 (shown); B by DeepSeek V4 Pro" in text
    rows = {(r["grader"], r["model"], r["challenge"]): r["shown"] for r in csv.DictReader(io.StringIO(csv_text(store)))
            if r["kind"] == "grade"}
    assert rows[("Kimi K2.6", "demo-careful", "beam_search")] == "True"
    assert rows[("DeepSeek V4 Pro", "demo-careful", "beam_search")] == "False"
    data = lb.to_dict()
    assert data["cell_rule"] == CELL_RULE
    assert data["graded_by"]["demo-careful/beam_search"] == [
        {"grader": "Kimi K2.6", "grader_kind": "judge", "grade": "90 (A-)", "shown": True},
        {"grader": "DeepSeek V4 Pro", "grader_kind": "judge", "grade": "B", "shown": False}]


def test_a_matrix_cell_two_judges_graded_names_both(store):
    from benchtui.store.queries import load_matrix
    from benchtui.tui.glyphs import SEVERAL_JUDGES_MARK, legend
    from benchtui.tui.screens.matrix import cell_text

    import_markdown(store, JUDGES)
    cell = load_matrix(store).cell("demo-careful", "beam_search")
    assert (cell.judge, cell.judge_grader, cell.other_judges) == ("A-", "Kimi K2.6", (("DeepSeek V4 Pro", "B"),))
    assert f"A-{SEVERAL_JUDGES_MARK}" in cell_text(cell).plain
    set_grade(store, "demo-hasty", "kv", "C", grader="ana")  # a person's grade: no judge's is named after it
    set_grade(store, "demo-hasty", "dflash_verify", "D", grader="lone judge", grader_kind="judge")
    one = load_matrix(store).cell("demo-hasty", "dflash_verify")  # one judge: no mark
    assert (one.judge, one.judge_grader, one.other_judges) == ("D", "lone judge", ())
    assert SEVERAL_JUDGES_MARK not in cell_text(one).plain
    assert load_matrix(store).cell("demo-hasty", "kv").other_judges  # the judges still named beside a person's
    assert f"{SEVERAL_JUDGES_MARK} newest of several judges" in legend(several_judges=True).plain


def test_the_marked_export_imports_back_as_the_grades_it_shows(store):
    import_markdown(store, JUDGES)
    set_grade(store, "demo-hasty", "beam_search", "F", grader="ana")
    result = import_text(store, markdown(store), grader="re-read")
    got = {(g.model, g.challenge): g.display for g in all_grades(store) if g.grader == "re-read"}
    assert result.problems == [] and result.imported == 15
    assert got[("demo-careful", "beam_search")] == "90 (A-)" and got[("demo-hasty", "beam_search")] == "F"


def test_an_import_names_the_graded_cells_that_hold_no_answer(bench, capsys, tmp_path):
    md = tmp_path / "j.md"
    md.write_text("| Challenge | Careful-1 | Quitter-3 |\n|---|---|---|\n| KV-Cache | B | C |\n"
                  "| Beam Search | A | D |\n", encoding="utf-8")
    code, out, _ = run(bench, capsys, "grades", "import", str(md), "--grader", "J", "--json", "--dry-run")
    assert json.loads(out)["no_answer"] == ["demo-quitter/beam_search"]
    code, out, _ = run(bench, capsys, "grades", "import", str(md), "--grader", "J")
    assert code == 0 and "graded, but this workbench holds no answer there (exports mark them): " \
        "demo-quitter/beam_search" in out
    code, out, _ = run(bench, capsys, "grades", "import", str(md), "--grader", "J")
    assert "no answer" not in out  # nothing imported this time: nothing to say


# -- notes ------------------------------------------------------------------------

def test_the_dashboard_leaderboard_marks_grades_on_answers_not_held_as_the_export_does(store):
    from benchtui.tui.screens.leaderboard import h2h_legend, h2h_rows, rankings_table, winners_rows
    from rich.console import Console

    import_text(store, "| Challenge | Careful-1 | Quitter-3 |\n|---|---|---|\n| Beam Search | B | A |\n", grader="J")
    lb = leaderboard(store)
    assert lb.no_answer == {("demo-quitter", "beam_search")}
    console = Console(width=200, record=True)
    console.print(rankings_table(lb, 200))
    shown = console.export_text()
    assert "A (no answer) beam_search" in shown  # quitter's best is a grade on an answer it does not hold
    assert "(no answer): graded, but the workbench holds no answer for it" in shown and "demo-quitter on beam_search" in shown
    assert ("Beam Search", "demo-quitter (no answer)", "A", "A-/B+", "1/2") in winners_rows(lb)
    assert h2h_rows(lb) == [("Quitter-3", "Careful-1", "leads 1-0-0", "1 challenge(s), 1 (no answer)")]
    assert "(no answer)" in h2h_legend(lb)


def test_grade_note_refuses_in_one_line_and_answers_in_json(bench, capsys, tmp_path):
    with Store(tmp_path / "store.db") as store, store.db.conn:
        answer = store.query("select id from answers where model = 'demo-careful' and challenge = 'kv'")[0]["id"]
        store.db["files"].insert({"answer_id": answer, "relpath": "cache.py", "kind": "source", "lines": 12})
    for args, message in [(("--file", "nosuch.py", "--line", "5"), "no file 'nosuch.py'"),
                          (("--file", "cache.py", "--line", "-4"), "line numbers start at 1"),
                          (("--transcript", "nosuch.jsonl", "--entry", "99999"), "no transcript 'nosuch.jsonl'")]:
        code, out, err = run(bench, capsys, "grade", "note", "demo-careful", "kv", "look", *args)
        assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    code, out, _ = run(bench, capsys, "grade", "note", "demo-careful", "kv", "look", "--file", "cache.py",
                       "--line", "12", "--json")
    note = json.loads(out)
    assert code == 0 and (note["relpath"], note["line"], note["text"]) == ("cache.py", 12, "look")


def test_a_dry_run_over_several_files_counts_what_the_earlier_ones_would_store(bench, capsys, tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("| Challenge | Careful-1 |\n|---|---|\n| KV-Cache | A- |\n", encoding="utf-8")
    analysis = tmp_path / "kv_comparison.md"
    analysis.write_text(KV_SHAPE, encoding="utf-8")
    again = tmp_path / "kv_again.md"
    again.write_text(KV_SHAPE, encoding="utf-8")
    code, out, _ = run(bench, capsys, "grades", "import", str(readme), str(analysis), str(again),
                       "--grader", "J", "--dry-run")
    assert code == 0
    assert "  would supersede demo-careful/kv: 64 (D) (line 8) replaces J's A- from README.md (#1); " \
        "it stands: of a judge's grades on a cell the one read last stands (files in the order given, " \
        "a folder's by name)" in out
    assert "would import 0 grades from kv_again.md (J); 6 already present" in out
    with Store(tmp_path / "store.db") as store:
        assert all_grades(store) == [] and list_graders(store) == []  # nothing written, not even the judge


def test_a_summary_table_outranks_a_heading_s_grade_and_points_out_of_a_max_are_not_scores(store):
    text = """\
# Head-to-Head: Fused Softmax + Top-K

```python
# Careful-1 Score: 10/100   (a comment in code, not a heading)
```

### 6.2 Careful-1 Score: 72/100

| Criterion | Score | Max |
|-----------|-------|-----|
| Correctness | 12 | 25 |
| Completeness | 14 | 15 |

### 6.4 Final Scores

| Model | Score | Grade |
|-------|-------|-------|
| **Careful-1** | **80/100** | B+ |
"""
    result = import_text(store, text, grader="J")
    assert {(g.model, g.challenge, g.dimension): g.display for g in all_grades(store)} == {
        ("demo-careful", "fuse", "overall"): "B+"}
    assert "line 9: scores out of the table's Max column, not 0-100: not imported" in result.problems
    assert "line 7: demo-careful/fuse graded 72 (C-) in a heading and B+ at line 18; the line 18 one is used" \
        in result.problems


def test_a_folder_of_reports_says_which_grade_stands_and_why(bench, capsys, tmp_path):
    """Two reports of one judge grading one cell: the later by name stands, whatever order
    the files were written in, and the import says so before and where it happens."""
    folder = tmp_path / "reports"
    folder.mkdir()
    for name, letter in (("b_second.md", "C"), ("a_first.md", "A")):  # b written first: name order decides
        (folder / name).write_text(f"Judge: Kimi\n\n| Challenge | Careful-1 |\n|---|---|\n| KV-Cache | {letter} |\n",
                                   encoding="utf-8")
    code, out, _ = run(bench, capsys, "grades", "import", str(folder))
    assert code == 0
    assert (f"{folder}: 2 files, read in name order (a_first.md, b_second.md); where two grade one cell, "
            "the later file's grade stands") in out.splitlines()[0]
    assert "supersedes demo-careful/kv: C (line 5) replaces Kimi's A from a_first.md" in out
    assert "it stands: of a judge's grades on a cell the one read last stands" in out
    code, out, _ = run(bench, capsys, "grades", "list", "--json")
    [grade] = [g for g in json.loads(out) if g["grader"] == "Kimi"]
    assert grade["letter"] == "C"
