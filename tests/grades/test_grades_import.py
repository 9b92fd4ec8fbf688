"""Importing judge grades from hand-written Markdown in every published form."""
import pytest
from benchtui.grading.grades import LETTERS, GradeError, all_grades, current_grade, current_grades
from benchtui.grading.judge_import import (
    ImportError_,
    add_alias,
    import_markdown,
    import_text,
    list_aliases,
    parse_cell,
    read_models_table,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


def grades_of(store, grader):
    return {(g.model, g.challenge): g.display for g in current_grades(store, grader=grader)}


MATRIX = """\
# Results

## Models tested

| Folder | Model | Lab |
|--------|-------|-----|
| `demo-careful/` | Careful One | Demo Lab |
| demo-hasty/ | Hasty-2 | Demo Lab |

## Per-challenge grade matrix

Judge: **DeepSeek V4 Pro**

| Challenge | Careful One | Hasty-2 | Quitter-3 | GPT-9 |
|:----------|:-----------:|:-------:|:---------:|:-----:|
| Layer Norm Backward | **A (1st)** | B- (4th=) | — | B |
| Fused Softmax+TopK | **A-** | B+ (2nd) | D+ | C |
| KV-Cache | B | *B* | – | - |
| Quantum Sort | A | B | C | D |
| Beam Search | A+ | `C+` |  | F |
"""


def test_grade_matrix_with_bold_ranks_dashes_and_unmapped_names(store):
    result = import_text(store, MATRIX)
    assert grades_of(store, "DeepSeek V4 Pro") == {
        ("demo-careful", "backwards"): "A", ("demo-careful", "fuse"): "A-", ("demo-careful", "kv"): "B",
        ("demo-hasty", "backwards"): "B-", ("demo-hasty", "fuse"): "B+", ("demo-hasty", "kv"): "B",
        ("demo-hasty", "beam_search"): "C+", ("demo-quitter", "fuse"): "D+",
    }
    assert result.imported == 8 and result.skipped_existing == 0
    assert set(result.unmapped) == {"model GPT-9", "challenge Quantum Sort"}
    assert any("'A+'" in p for p in result.problems)  # never silently dropped
    assert {g.grader_kind for g in current_grades(store)} == {"judge"}


def test_reimporting_the_same_file_adds_nothing(store):
    first = import_text(store, MATRIX)
    again = import_text(store, MATRIX)
    assert (again.imported, again.skipped_existing) == (0, first.imported)
    assert len(all_grades(store)) == first.imported


def test_a_changed_file_supersedes_only_the_changed_cells(store):
    import_text(store, MATRIX)
    changed = import_text(store, MATRIX.replace("| KV-Cache | B |", "| KV-Cache | C |"))
    assert (changed.imported, changed.skipped_existing) == (1, 7)
    g = current_grade(store, "demo-careful", "kv", grader="DeepSeek V4 Pro")
    assert g.letter == "C" and g.supersedes is not None


SCOREBOARD = """\
### Scoreboard (0-100, judged by Kimi K2.6)

Grader: Kimi K2.6

| Task | Careful-1 | Hasty-2 | Winner | Margin |
|------|-----------|---------|--------|--------|
| KV Cache | **64** | **91** | hasty | +27 |
| Flash Attn Forward | 93 | 89.5 | careful | +3.5 |
| DFlash | — | 12 | hasty | n/a |

## Timings (ms)

| Task | Careful-1 | Hasty-2 |
|------|-----------|---------|
| KV Cache | 12 | 80 |
"""


def test_scoreboard_keeps_scores_and_maps_them_to_letters(store):
    result = import_text(store, SCOREBOARD)
    got = {(g.model, g.challenge): (g.score, g.letter) for g in current_grades(store, grader="Kimi K2.6")}
    assert got == {
        ("demo-careful", "kv"): (64.0, "D"), ("demo-hasty", "kv"): (91.0, "A-"),
        ("demo-careful", "flash_attention"): (93.0, "A"), ("demo-hasty", "flash_attention"): (89.5, "B+"),
        ("demo-hasty", "dflash_verify"): (12.0, "F"),
    }
    assert result.imported == 5 and result.unmapped == []  # the timings table is not grades


def test_transposed_matrix_models_as_rows(store):
    text = "Judge: J\n\n| Model | Layer Norm Backward | KV-Cache |\n|---|---|---|\n" \
           "| demo-careful | A | B+ |\n| Quitter-3 | — | D |\n"
    import_text(store, text)
    assert grades_of(store, "J") == {("demo-careful", "backwards"): "A", ("demo-careful", "kv"): "B+",
                                     ("demo-quitter", "kv"): "D"}


SECTIONS = """\
Judge: Kimi K2.6

## Beam Search

### Hasty-2 — `beam.py`

Confident, but finished beams are dropped.

**Grade:** A-
Correctness: C
Note: this line is not a grade

### demo-careful/beam_search/beam.py

- Grade: B+ (solid)

## Reviews

### Unknown Model X — kv/cache.py

Grade: B

### Careful-1 — fuse/kernel.cu

Grade: A++
"""


def test_per_answer_sections(store):
    result = import_text(store, SECTIONS)
    got = {(g.model, g.challenge, g.dimension): g.letter for g in current_grades(store, dimension=None)}
    assert got == {("demo-hasty", "beam_search", "overall"): "A-",
                   ("demo-hasty", "beam_search", "correctness"): "C",
                   ("demo-careful", "beam_search", "overall"): "B+"}
    assert len(result.unmapped) == 1 and "Unknown Model X" in result.unmapped[0]
    assert any("A++" in p for p in result.problems)


def test_a_file_that_names_no_judge_needs_one(store, tmp_path):
    path = tmp_path / "grades.md"
    path.write_text("| Challenge | Careful-1 |\n|---|---|\n| KV-Cache | B |\n", encoding="utf-8")
    with pytest.raises(ImportError_, match="--grader"):
        import_markdown(store, path)
    assert all_grades(store) == []
    assert import_markdown(store, path, grader="Kimi K2.6").imported == 1


def test_alias_table_and_fuzzy_matches_are_reported(store):
    text = "Judge: J\n\n| Challenge | CarefulOne v1 | Hastyy-2 |\n|---|---|---|\n| KV-Cache | A | B |\n"
    first = import_text(store, text)
    assert first.unmapped == ["model CarefulOne v1"]
    assert first.mapped == [{"kind": "model", "name": "Hastyy-2", "to": "demo-hasty", "how": "fuzzy"}]
    add_alias(store, "model", "CarefulOne v1", "demo-careful")
    assert list_aliases(store)[0]["target"] == "demo-careful"
    second = import_text(store, text)
    assert second.unmapped == [] and second.imported == 1 and second.skipped_existing == 1
    assert {"kind": "model", "name": "CarefulOne v1", "to": "demo-careful", "how": "alias"} in second.mapped
    with pytest.raises(GradeError):
        add_alias(store, "model", "x", "no-such-folder")


def test_the_same_cell_twice_in_a_file_keeps_the_later_and_says_so(store):
    text = "Judge: J\n\n| Challenge | Careful-1 |\n|---|---|\n| KV-Cache | B |\n\n### Careful-1 kv\n\nGrade: A\n"
    result = import_text(store, text)
    assert current_grade(store, "demo-careful", "kv", grader="J").letter == "A"
    assert result.imported == 1 and "later one" in result.problems[0]
    assert import_text(store, text).imported == 0


def test_models_table_can_be_read_for_display_names():
    assert read_models_table(MATRIX) == {"demo-careful": "Careful One", "demo-hasty": "Hasty-2"}


@pytest.mark.parametrize("cell,shown", [
    ("**A-**", "A-"), ("A (1st)", "A"), ("B- (4th=)", "B-"), ("__B+__", "B+"), ("`C`", "C"),
    ("**91**", "91 (A-)"), ("87 (2nd)", "87 (B+)"),
])
def test_cells(cell, shown):
    assert parse_cell(cell).display == shown


@pytest.mark.parametrize("cell", ["—", "–", "-", "", "n/a"])
def test_no_entry_cells(cell):
    assert parse_cell(cell) is None


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from([*LETTERS, None]), min_size=3, max_size=3),
       st.lists(st.booleans(), min_size=3, max_size=3))
def test_any_written_matrix_reads_back(store, cells, bold):
    names = ["Careful-1", "Hasty-2", "Quitter-3"]
    row = " | ".join("\u2014" if c is None else (f"**{c}**" if b else c) for c, b in zip(cells, bold))
    text = f"Judge: H\n\n| Challenge | {' | '.join(names)} |\n|---|---|---|---|\n| DFlash | {row} |\n"
    import_text(store, text)
    got = {m: g.letter for (m, _), g in
           {(g.model, g.challenge): g for g in current_grades(store, grader="H", challenge="dflash_verify")}.items()}
    want = {m: c for m, c in zip(["demo-careful", "demo-hasty", "demo-quitter"], cells) if c is not None}
    # Cells left blank this time keep the grade from an earlier example.
    assert {m: got[m] for m in want} == want


def dims_of(store, grader, model, challenge):
    return {g.dimension: g.display for g in all_grades(store, include_invalid=False)
            if (g.grader, g.model, g.challenge) == (grader, model, challenge)}


HEAD_TO_HEAD = """\
# Head-to-Head: Layer Norm Backward Pass

Judge: analyst

## Executive Summary

| Dimension | Careful-1 | Hasty-2 (demo-hasty) |
|-----------|-----------|----------------------|
| **Correctness** | 85 | 95/100 |
| **Code Quality** | 70 | 90 |
| **Depth of Analysis** | 80 | 88 |
| **Numerical Stability** | 75 | 95 |
| **Overall** | **76** | **92** |

## 9. Final Scores

### Careful-1 (demo-careful/kv/): 82/100

**Breakdown:**
- Correctness: 95/100
- Tests/Demos: 82/100
- Analysis: the cache is copied on every step.
- **Overall: 82/100**
"""


def test_dimension_scores_by_model_for_the_challenge_the_headings_name(store):
    result = import_text(store, HEAD_TO_HEAD)
    assert result.unmapped == []
    assert result.problems == ["line 7: not benchtui dimensions, not imported: Numerical Stability"]
    assert dims_of(store, "analyst", "demo-careful", "backwards") == {
        "correctness": "85 (B)", "code_quality": "70 (C-)", "analysis_depth": "80 (B-)", "overall": "76 (C)"}
    assert dims_of(store, "analyst", "demo-hasty", "backwards")["correctness"] == "95 (A)"
    # a per-answer breakdown: the answer's path names model and challenge; a remark is not a grade
    assert dims_of(store, "analyst", "demo-careful", "kv") == {"correctness": "95 (A)", "testing": "82 (B-)",
                                                                "overall": "82 (B-)"}
    assert import_text(store, HEAD_TO_HEAD).imported == 0


RUN_TABLE = """\
# Ternary Training: head-to-head

Judge: analyst

| Model | Steps | Val PPL | Score | Grade |
|-------|-------|---------|-------|-------|
| **Careful-1** | 250 | 594 | 80/100 | **A-** |
| Hasty-2 | 300 | 319 | 78/100 | B+ |
| Quitter-3 | — | — | — | No submission |
"""


def test_one_row_per_model_with_a_grade_column(store):
    result = import_text(store, RUN_TABLE)
    assert result.unmapped == [] and result.problems == []
    # the judge's letter column is the grade; the score beside it is not a second, conflicting one
    assert {k: v for k, v in grades_of(store, "analyst").items()} == {
        ("demo-careful", "ternary_training"): "A-", ("demo-hasty", "ternary_training"): "B+"}


def test_a_table_under_a_heading_naming_several_challenges_is_not_guessed(store):
    text = RUN_TABLE.replace("# Ternary Training: head-to-head", "# Ternary Training and KV-Cache")
    result = import_text(store, text)
    assert result.imported == 0
    assert result.unmapped == ["challenge in the headings above the table at line 5"]


SCOREBOARD_UNDER_PARENT = """\
# Summary

Judge: analyst

## Complete Scoreboard

### Round 1: Careful-1 vs Hasty-2

| Task | Careful-1 | Hasty-2 | Winner | Margin |
|------|-----------|---------|--------|--------|
| KV Cache | **64** | **91** | Hasty-2 | +27 |
| Backwards Pass | **76** | **92** | Hasty-2 | +16 |
| **Average** | **70** | **91** | **Hasty-2** | **+21** |

### Timings

| Task | Careful-1 | Hasty-2 |
|------|-----------|---------|
| KV Cache | 12 | 15 |
"""


def test_a_scoreboard_is_known_by_an_enclosing_heading_and_its_average_row_skipped(store):
    result = import_text(store, SCOREBOARD_UNDER_PARENT)
    assert result.unmapped == [] and result.problems == []
    assert grades_of(store, "analyst") == {("demo-careful", "kv"): "64 (D)", ("demo-hasty", "kv"): "91 (A-)",
                                           ("demo-careful", "backwards"): "76 (C)",
                                           ("demo-hasty", "backwards"): "92 (A-)"}


def test_a_parameter_count_after_a_known_name_maps_and_is_reported(store):
    text = "Judge: J\n\n| Challenge | Careful-1-27B | Hasty-2 70b | GPT-9-8B |\n|---|---|---|---|\n| KV-Cache | A | B | C |\n"
    result = import_text(store, text)
    assert grades_of(store, "J") == {("demo-careful", "kv"): "A", ("demo-hasty", "kv"): "B"}
    assert result.unmapped == ["model GPT-9-8B"]
    assert {"kind": "model", "name": "Careful-1-27B", "to": "demo-careful", "how": "size suffix"} in result.mapped
