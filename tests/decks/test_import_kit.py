"""``benchtui import`` on decks made by hand in both layouts (tests/decks/deck_kit.py),
so these run where the published decks are not: each oddity a deck holds gets one
clear line in the report; parts of a deck that are missing are named with what is
lost, and the figures that need them say "not reproducible"; the report's counts
are the store's; a re-import changes no row (a failed store write: test_import.py, on both decks)."""
from __future__ import annotations

import json
import sqlite3
import tomllib
from pathlib import Path

import deck_kit as K
import pytest
from benchtui.decks import kernelbench, kernelbench_hard
from benchtui.decks.importer import import_deck
from deck_kit import cli

CELL = "20260101_000000_codex_gpt-9_01_tiny_double"  # the earlier of two runs of one cell
COUNTED = "20260102_000000_codex_gpt-9_01_tiny_double"
BOARD_ONLY = "20260101_000000_claude_opus-9_01_tiny_double"


def rows(root: Path, sql: str, params=()) -> list[tuple]:
    with sqlite3.connect(root / "store.db") as conn:
        return conn.execute(sql, params).fetchall()


def read_hard(path: Path):
    return kernelbench_hard.read_deck(path, "h100", commit=K.HARD_COMMIT)


def about(lines: list[str], needle: str) -> list[str]:
    return [line for line in lines if needle in line]


# -- every oddity, one line each --------------------------------------------------------

def test_hard_deck_each_oddity_is_one_line(tmp_path, capsys):
    deck = K.hard_deck(tmp_path / "deck")
    root = tmp_path / "wb"
    K.conflicting_answer(root, "codex_gpt-9", "kbh_01_tiny_double")
    code, out = cli(capsys, "--workbench", str(root), "import", str(deck))
    assert code == 0, out
    lines = out.splitlines()
    # the commit ABOUT.md names as "owner/repo at <sha>"; the GPU named once
    assert lines[0].startswith(f"imported KernelBench-Hard (H100) from {deck} (commit {K.HARD_COMMIT})")
    # two runs of one cell: the earlier keeps its stamp
    assert about(lines, CELL) == [f"  note: run {CELL}: another run of codex/gpt-9 on 01_tiny_double takes the model "
                                  "codex_gpt-9; this one is the model codex_gpt-9_20260101_000000"]
    # a run with no result file
    assert about(lines, BOARD_ONLY) == [f"  note: run {BOARD_ONLY}: no published result file; only the leaderboard's figures"]
    # a folder holding another answer: the answer is not written, its published result is kept
    assert about(lines, COUNTED) == [
        f"  problem: run {COUNTED}: models/codex_gpt-9/kbh_01_tiny_double/ already holds another solution.py; an answer "
        "is never overwritten, so this run's answer is not imported; its published result is kept, without its answer"]
    # an annotation of a run measured on another GPU model than the deck's peak
    assert about(lines, K.SXM_RUN) == [
        f"  problem: run {K.SXM_RUN}: its annotation ({K.SXM_RUN}.yaml) says it was measured on H100 SXM5 "
        "(NVIDIA H100 80GB HBM3), not the NVIDIA H100 PCIe the deck's peak_fraction is a fraction of; marked, "
        "and left out of rankings"]
    # annotations of runs the deck does not hold: of this GPU, and of another
    assert about(lines, "annotations are of") == [
        "  note: 1 annotations are of runs on other GPUs (B200: 1); left out",
        "  note: 1 annotations are of h100 runs of imported problems whose run files public/runs/h100/ does not hold "
        "(02_tiny_triple: 1); left out"]
    assert (root / "models/codex_gpt-9/kbh_01_tiny_double/solution.py").read_text() == "# my own answer\n"
    assert (root / "models/codex_gpt-9_20260101_000000/kbh_01_tiny_double/solution.py").is_file()


def test_kernelbench_deck_each_oddity_is_one_line(tmp_path, capsys):
    deck = K.kernelbench_deck(tmp_path / "deck")
    root = tmp_path / "wb"
    code, out = cli(capsys, "--workbench", str(root), "import", str(deck))
    assert code == 0, out
    lines = out.splitlines()
    assert lines[0] == f"imported KernelBench from {deck} (commit {K.KB_COMMIT}) into {root}:"
    assert about(lines, "note:") == ["  note: run demo/level_1_problem_2_sample_0: eval_results.json has no result "
                                     "for it; imported without one"]
    # two samples of one problem: two models
    assert sorted(p.name for p in (root / "models").iterdir()) == ["demo", "demo_s1"]
    assert "2 published results" in lines[1]


# -- parts missing ----------------------------------------------------------------------

@pytest.mark.parametrize("without, line, keys", [
    (("src",), "benchmarks/hard/src/ is missing: lost the default tolerance per dtype (DEFAULT_TOLERANCE; 0.0001 is "
               "assumed); the numeric stress cases; the property stress; the GPU peaks peak_fraction is a fraction of; "
               "the deck_rule figure and the deck-peak peak_fraction say \"not reproducible\"",
     {"default_tolerance", "stress", "property_stress", "peak"}),
    # the property stress imports src.eval, whose __init__.py imports numeric_stress.py: lost with it
    (("src/eval/numeric_stress.py",), "benchmarks/hard/src/eval/numeric_stress.py is missing: lost the numeric stress "
                                      "cases; 01_tiny_double's property stress (src/eval/property_stress.py imports "
                                      "it, directly or through a package's __init__.py); the deck_rule figure says "
                                      "\"not reproducible\"", {"stress", "property_stress"}),
    (("src/hardware",), "benchmarks/hard/src/hardware/ is missing: lost the GPU peaks peak_fraction is a fraction of; "
                        "the deck-peak peak_fraction says \"not reproducible\"", {"peak"}),
])
def test_a_missing_part_of_a_hard_deck_is_named_with_what_is_lost(tmp_path, without, line, keys):
    deck = K.hard_deck(tmp_path / "deck", without=without)
    result = import_deck(read_hard(deck), tmp_path / "wb")
    assert result.missing == [line]
    assert not any("hardware peak" in p for p in result.problems)  # said once, as the missing part
    # without the peaks, the leaderboard still says which GPU the figures are of
    assert result.annotations_other_gpu == 1
    toml = tomllib.loads((tmp_path / "wb/challenges/kbh_01_tiny_double/challenge.toml").read_text(encoding="utf-8"))
    assert set(toml["module"]["missing"]) == keys
    # the whole deck keeps none of this
    whole = import_deck(read_hard(K.hard_deck(tmp_path / "whole")), tmp_path / "wb2")
    assert whole.missing == []
    assert "missing" not in tomllib.loads(
        (tmp_path / "wb2/challenges/kbh_01_tiny_double/challenge.toml").read_text(encoding="utf-8"))["module"]


def test_missing_problem_files_and_published_data_are_named(tmp_path, capsys):
    deck = K.hard_deck(tmp_path / "deck", without=("problems-h100/02_tiny_triple/check.py", "results"))
    code, out = cli(capsys, "--workbench", str(tmp_path / "wb"), "import", str(deck), "--strict")
    assert code == 1  # a missing part fails --strict like a problem
    missing = [line for line in out.splitlines() if line.startswith("  missing: ")]
    assert missing == [
        "  missing: benchmarks/hard/problems-h100/02_tiny_triple/check.py is missing: lost the problem's correctness "
        "seeds (42, 123, 456 are assumed); the deck_rule figure says \"not reproducible\"",
        "  missing: benchmarks/hard/results/ is missing: lost the leaderboard (which run of a cell it counts, and its "
        "figures where a run has no result file); the annotations (a person's verdict on a run, with quotes)"]
    toml = tomllib.loads((tmp_path / "wb/challenges/kbh_02_tiny_triple/challenge.toml").read_text(encoding="utf-8"))
    assert toml["module"]["missing"] == {"seeds": "benchmarks/hard/problems-h100/02_tiny_triple/check.py"}
    assert toml["module"]["seeds"] == [42, 123, 456]


def test_a_missing_part_of_a_kernelbench_deck_is_named(tmp_path):
    deck = K.kernelbench_deck(tmp_path / "deck", without=("src/kernelbench/eval.py",))
    result = import_deck(kernelbench.read_deck(deck), tmp_path / "wb")
    assert result.missing == ["src/kernelbench/eval.py is missing: lost the tolerance per precision "
                              "(PRECISION_TOLERANCES; 0.0001 for fp32 is assumed); the deck_rule figure says "
                              "\"not reproducible\""]
    toml = tomllib.loads((tmp_path / "wb/challenges/kb_l1_p1_tiny_double/challenge.toml").read_text(encoding="utf-8"))
    assert toml["module"]["missing"] == {"tolerance": "src/kernelbench/eval.py"}


def test_the_deck_rule_of_a_deck_without_its_stress_cases_is_not_reproducible(tmp_path):
    """The deck's large-input stress case fails an answer that clamps its output; without
    numeric_stress.py the rest of the rule would pass it, so the figure says it cannot
    be reproduced rather than PASS."""
    pytest.importorskip("torch", reason="the module harness runs the answers with torch")
    from benchtui.runner.local import run_local

    def deck_rule(without: tuple[str, ...]) -> dict:
        root = tmp_path / f"wb{len(without)}"
        import_deck(read_hard(K.hard_deck(tmp_path / f"deck{len(without)}", without=without)), root)
        answer = tmp_path / f"answer{len(without)}"
        answer.mkdir()
        (answer / "solution.py").write_text(K.CLAMPED.format(tag="clamped", k=2), encoding="utf-8")
        result = run_local("kbh_01_tiny_double", answer, challenges_dir=root / "challenges", seed=7)
        checks = {c["name"]: c for c in result["checks"]}
        return checks

    whole = deck_rule(())
    assert whole["deck_rule"]["value"] == "fail"  # the stress case (inputs x64) catches the clamp
    lacking = deck_rule(("src/eval/numeric_stress.py",))
    assert lacking["deck_rule"]["value"] == "not reproducible"
    assert lacking["deck_rule"]["message"].startswith(
        "not reproducible: benchmarks/hard/src/eval/numeric_stress.py missing from the imported deck")
    assert "of what was imported it would PASS" in lacking["deck_rule"]["message"]


# -- the report's counts and the store --------------------------------------------------

def test_dry_run_counts_what_the_import_writes(tmp_path, capsys):
    deck = K.hard_deck(tmp_path / "deck")
    root = tmp_path / "wb"
    dry = import_deck(read_hard(deck), root, dry_run=True)
    assert not root.exists()
    real = import_deck(read_hard(deck), root)
    assert dry.notes_added == real.notes_added == 1
    assert dry.results_written == real.results_written == 6
    again = import_deck(read_hard(deck), root, dry_run=True)
    assert (again.notes_added, again.results_written) == (0, 0)
    code, out = cli(capsys, "--workbench", str(tmp_path / "wb-new"), "import", str(deck), "--dry-run")
    assert "1 line notes would be added" in out


def test_published_results_count_result_files_not_rows(tmp_path):
    root = tmp_path / "wb"
    K.conflicting_answer(root, "codex_gpt-9", "kbh_01_tiny_double")
    r = import_deck(read_hard(K.hard_deck(tmp_path / "deck")), root)
    # five runs with a result file: four of them in place and the refused one; the run without a
    # result file and the run without an answer have only the leaderboard's figures
    assert (r.results, r.results_board_only, r.results_without_answer, r.results_refused) == (4, 2, 1, 1)
    assert rows(root, "select count(*), sum(has_result) from deck_results") == [(6, 4)]
    # the refused run's published result is kept, without an answer
    assert rows(root, "select model, has_answer, correct, peak_fraction from deck_results where run_id = ?",
                (COUNTED,)) == [(None, 0, 1, 0.6)]


def test_a_reimport_restamps_no_unchanged_row(tmp_path):
    deck = K.hard_deck(tmp_path / "deck")
    root = tmp_path / "wb"
    import_deck(read_hard(deck), root)
    stamps = rows(root, "select run_id, import_id, imported_at from deck_results order by run_id")
    notes = rows(root, "select run_id, source, import_id, imported_at from deck_annotations order by id")
    again = import_deck(read_hard(deck), root)
    assert rows(root, "select run_id, import_id, imported_at from deck_results order by run_id") == stamps
    assert rows(root, "select run_id, source, import_id, imported_at from deck_annotations order by id") == notes
    assert again.results_written == 0
    # a result that changed is written, and only it
    detail = deck / f"public/data/rundetail/h100/{K.SXM_RUN}.json"
    detail.write_text(detail.read_text().replace('"peak_fraction": 0.3', '"peak_fraction": 0.31'))
    third = import_deck(read_hard(deck), root)
    assert third.results_written == 1
    changed = dict((r[0], r[1]) for r in rows(root, "select run_id, import_id from deck_results"))
    assert changed[K.SXM_RUN] == third.import_id
    assert sum(1 for v in changed.values() if v == third.import_id) == 1


def test_an_import_from_another_folder_replaces_the_published_lines(tmp_path, capsys):
    first = K.hard_deck(tmp_path / "one")
    second = K.hard_deck(tmp_path / "two")
    root = tmp_path / "wb"
    import_deck(read_hard(first), root)
    import_deck(read_hard(second), root)
    code, out = cli(capsys, "--workbench", str(root), "published", "--json")
    imports = json.loads(out)["imports"]
    assert [i["path"] for i in imports] == [str(second)]


def test_another_gpu_models_annotation_is_marked_and_left_out_of_the_ranking(tmp_path):
    from benchtui.decks import compare
    from benchtui.store.database import Store

    root = tmp_path / "wb"
    r = import_deck(read_hard(K.hard_deck(tmp_path / "deck")), root)
    assert r.annotations_other_gpu == 1
    assert rows(root, "select run_id, measured_on from deck_annotations where measured_on is not null") == [
        (K.SXM_RUN, "H100 SXM5 (NVIDIA H100 80GB HBM3)")]
    with Store(root / "store.db") as store:
        data = compare.compare(store)
    row = next(a for a in data["answers"] if a["run_id"] == K.SXM_RUN)
    assert row["measured_on"] == "H100 SXM5 (NVIDIA H100 80GB HBM3)"
    assert "not the GPU of the deck's peak: its figure is left out of the rank correlation" in row["marks"]
    assert data["overall"]["left_out_other_gpu"] == 1
    # the ranking takes the pairs of the others only
    rank = [compare.Row(deck="d", run_id=str(i), model="m", challenge="c", problem="p", deck_verdict="PASS",
                        deck_reason=None, deck_figure=f, verdict="pass", reason=None, figure=g)
            for i, (f, g) in enumerate([(0.1, 0.1), (0.2, 0.2), (0.3, 0.3)])]
    rank.append(compare.Row(deck="d", run_id="sxm", model="m", challenge="c", problem="p", deck_verdict="PASS",
                            deck_reason=None, deck_figure=0.9, verdict="pass", reason=None, figure=0.0,
                            annotations=[{"verdict": "clean", "measured_on": "H100 SXM5"}]))
    assert compare.summary(rank)["rank_correlation"] == 1.0
    assert compare.summary(rank)["passes_with_both_figures"] == 3


@pytest.mark.parametrize("text, commit", [
    ("A slice of Infatoshi/kernelbench.com at c7d9221, MIT.", "c7d9221"),
    ("(ScalingIntelligence/KernelBench at commit 423217d, MIT)", "423217d"),
    ("cloned from owner/repo@0123abcd", "0123abcd"),
    ("at commit `abcdef1`", "abcdef1"),
    ("owner/repo at defaced", ""),  # a word, not a hash
])
def test_the_commit_an_about_file_names(tmp_path, text, commit):
    from benchtui.commands.deck_cmds import deck_commit

    (tmp_path / "ABOUT.md").write_text(f"# deck\n\n{text}\n", encoding="utf-8")
    assert deck_commit(tmp_path, None) == commit


def test_a_dry_run_over_a_store_awaiting_a_migration_leaves_it_as_it_was(tmp_path):
    from benchtui.store.database import Store

    deck = K.hard_deck(tmp_path / "deck")
    root = tmp_path / "wb"
    Store(root / "store.db").close()
    with sqlite3.connect(root / "store.db") as conn:  # as an older benchtui left it
        conn.execute("delete from _migrations where name = 'm012_deck_annotation_gpu'")
        before = list(conn.iterdump())
    dry = import_deck(read_hard(deck), root, dry_run=True)
    assert (dry.notes_added, dry.results_written) == (1, 6)  # counted on a store in memory
    with sqlite3.connect(root / "store.db") as conn:
        assert list(conn.iterdump()) == before
