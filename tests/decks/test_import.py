"""``benchtui import`` on the two published decks: what lands in the workbench
and the store, names and duplicates, every kind of bad input (one line each,
nothing half-written), re-importing, and the challenges it generates. Tests
that need no published data take ``any_kbh_deck``/``any_kb_deck`` and run on a
deck made by hand too (tests/decks/deck_kit.py), so they run without the
published decks; test_import_kit.py holds the tests of the decks made by hand."""
from __future__ import annotations

import ast
import json
import shutil
import sqlite3
import tomllib
from pathlib import Path

import pytest
from benchtui.decks import kernelbench, kernelbench_hard
from benchtui.decks.challenge import CONFORMANCE
from benchtui.decks.importer import import_deck

KBH_IDS = ["kbh_01_fp8_gemm", "kbh_02_kda_cutlass", "kbh_06_sonic_moe_swiglu", "kbh_07_w4a16_gemm"]
ANNOTATION_DISAGREEMENTS = {
    "20260721_142442_codex_gpt-5.6-sol_02_kda_cutlass": ("0.0154", "0.0132"),
    "20260721_145355_codex_gpt-5.6-sol_06_sonic_moe_swiglu": ("0.0332", "0.0758"),
    "20260721_150450_codex_gpt-5.6-sol_07_w4a16_gemm": ("0.217", "0.1888"),
}


def rows(root: Path, sql: str, params=()) -> list[tuple]:
    with sqlite3.connect(root / "store.db") as conn:
        return conn.execute(sql, params).fetchall()


# -- KernelBench-Hard, the shared deck ------------------------------------------------

def test_kbh_deck_counts_names_and_store(kbh_imported, decks):
    root, r, _ = kbh_imported
    assert (r.challenges, r.answers, r.models, r.results, r.results_without_answer, r.annotations) == (4, 79, 22, 80, 1, 30)
    assert sorted(p.name for p in (root / "challenges").iterdir()) == KBH_IDS
    assert len(list((root / "models").glob("*/*/solution.py"))) == 79
    # the problems of the published slice: three annotations whose peak_fraction is not the leaderboard's,
    # and four runs their annotations say were measured on an H100 SXM, against the deck's H100 PCIe peaks
    assert len(r.problems) == 3 + 4 and r.missing == []
    for run_id, (annotation, board) in ANNOTATION_DISAGREEMENTS.items():
        line = next(p for p in r.problems if run_id in p)
        assert f"peak_fraction {annotation}, the leaderboard {board}" in line
    sxm = [p for p in r.problems if "measured on H100 SXM5 (NVIDIA H100 80GB HBM3), not the NVIDIA H100 PCIe" in p]
    assert len(sxm) == r.annotations_other_gpu == 4
    assert rows(root, "select count(*) from deck_annotations where measured_on is not null") == [(4,)]
    # the annotations left out, each kind said as what it is
    assert "29 annotations are of runs on other GPUs (B200: 2, rtxpro6000: 27); left out" in r.notes
    assert "140 annotations are of h100 runs of imported problems whose run files public/runs/h100/ does not hold " \
           "(01_fp8_gemm: 51, 02_kda_cutlass: 28, 06_sonic_moe_swiglu: 30, 07_w4a16_gemm: 31); left out" in r.notes
    assert rows(root, "select count(*), sum(has_answer), sum(correct) from deck_results") == [(80, 79, 66)]
    assert rows(root, "select count(*) from deck_annotations") == [(30,)]
    # the run with no answer file: its published result is kept, flagged
    assert rows(root, "select run_id, correct, failure_reason, model from deck_results where has_answer = 0") == [
        ("20260618_170834_zai-claude_glm-5.2_02_kda_cutlass", 0, "timeout", None)]
    # one published result in full: figures per shape, session statistics, provenance
    (row,) = rows(root, "select model, challenge, correct, failure_reason, peak_fraction, shapes, stats, sha256, "
                        "source_path, deck_commit, peak_tflops, peak_bw_gbps from deck_results where run_id = ?",
                  ("20260618_041754_codex_gpt-5.5_01_fp8_gemm",))
    model, challenge, correct, reason, pf, shapes, stats, sha, source, commit, tflops, bw = row
    assert (model, challenge, correct, reason, pf, commit, tflops, bw) == (
        "codex_gpt-5.5", "kbh_01_fp8_gemm", 1, "pass", 0.2445, "c7d9221", 1513.0, 2039.0)
    assert [s["ms"] for s in json.loads(shapes)] == [0.194, 0.198, 0.105, 0.634]
    assert json.loads(stats)["output_tokens"] == 79908
    run_file = decks / "kernelbench-hard/public/runs/h100/20260618_041754_codex_gpt-5.5_01_fp8_gemm_solution.py.txt"
    answer = root / "models/codex_gpt-5.5/kbh_01_fp8_gemm/solution.py"
    assert answer.read_bytes() == run_file.read_bytes()
    assert source.endswith(run_file.name)
    import hashlib
    assert sha == hashlib.sha256(run_file.read_bytes()).hexdigest()
    # the answer folder holds the answer and nothing else
    assert [p.name for p in answer.parent.iterdir()] == ["solution.py"]


def test_kbh_runs_of_one_cell_are_kept_apart(kbh_imported):
    root, _, _ = kbh_imported
    got = dict(rows(root, "select run_id, model from deck_results where has_answer = 1"))
    # one harness and model at two efforts on the leaderboard: a model per effort
    assert got["20260621_000344_claude_claude-opus-4-8_01_fp8_gemm"] == "claude_claude-opus-4-8"
    assert got["20260719_034935_claude_claude-opus-4-8_01_fp8_gemm"] == "claude_claude-opus-4-8_max"
    assert got["20260709_040836_grok_grok-4.5_07_w4a16_gemm"] == "grok_grok-4.5_max"
    assert got["20260719_034935_grok_grok-4.5_07_w4a16_gemm"] == "grok_grok-4.5_high"
    # two runs of one cell at one effort: the one the leaderboard counts (the later) takes the name,
    # the other keeps its stamp
    assert got["20260721_223835_or-fable_anthropic_claude-fable-5_02_kda_cutlass"] == "or-fable_anthropic_claude-fable-5"
    assert got["20260720_210639_or-fable_anthropic_claude-fable-5_02_kda_cutlass"] == \
        "or-fable_anthropic_claude-fable-5_20260720_210639"
    assert len(set(zip(*rows(root, "select model, challenge from deck_results where has_answer = 1")))) == 2
    cells = rows(root, "select model, challenge, count(*) from deck_results where has_answer = 1 group by 1, 2 having count(*) > 1")
    assert cells == []
    # the deck's own model name, slashes and all, is kept beside benchtui's folder name
    assert rows(root, "select deck_model, harness from deck_results where run_id = ?",
                ("20260725_063736_or-opus_anthropic_claude-opus-5_01_fp8_gemm",)) == [("anthropic/claude-opus-5", "or-opus")]


def test_kbh_annotations_and_their_quotes_as_line_notes(kbh_imported):
    root, r, _ = kbh_imported
    assert r.notes_added == 7
    notes = rows(root, "select model, challenge, relpath, line, author, text from notes order by id")
    assert len(notes) == 7
    first = [n for n in notes if n[0] == "claude_claude-fable-5" and n[1] == "kbh_01_fp8_gemm"]
    assert [(n[2], n[3]) for n in first] == [("solution.py", 684), ("solution.py", 748), ("solution.py", 122)]
    assert first[0][4] == "kernelbench-hard annotation"
    assert first[0][5].startswith("[clean] CUDA-graph cache is a launch cache, not an output cache (lines 684-689;")
    (summary,) = rows(root, "select summary from deck_annotations where run_id = ?",
                      ("20260702_055037_claude_claude-fable-5_01_fp8_gemm",))[0]
    assert summary.startswith("A genuine CUTLASS 3.x SM90 FP8 GEMM")


def test_kbh_reimport_changes_nothing(kbh_imported):
    root, first, second = kbh_imported
    assert (second.files_written, second.challenges_written, second.answers_written, second.notes_added) == (0, 0, 0, 0)
    assert (second.answers, second.results, second.annotations) == (first.answers, first.results, first.annotations)
    assert rows(root, "select count(*) from deck_results") == [(80,)]
    assert rows(root, "select count(*) from deck_annotations") == [(30,)]
    assert rows(root, "select count(*) from notes") == [(7,)]
    assert rows(root, "select count(*) from deck_imports") == [(2,)]  # each import is logged


def test_kbh_challenge_folder(kbh_imported, decks):
    from benchtui.authoring.soundness import check_files, check_prompt_version, check_requirements
    from benchtui.challenges.definition import load_challenge

    root, _, _ = kbh_imported
    folder = root / "challenges" / "kbh_06_sonic_moe_swiglu"
    source = decks / "kernelbench-hard/benchmarks/hard/problems-h100/06_sonic_moe_swiglu"
    for name in ("reference.py", "shapes.py", "problem.yaml", "sota.py"):
        assert (folder / name).read_bytes() == (source / name).read_bytes()
    assert not (folder / "check.py").exists() and not (folder / "benchmark.py").exists()
    assert (folder / "PROMPT.md").read_text(encoding="utf-8") == (source / "PROMPT.txt").read_text(encoding="utf-8")
    assert (folder / "conformance.py").read_text(encoding="utf-8") == CONFORMANCE
    challenge = load_challenge(folder)
    assert (challenge.id, challenge.title, challenge.language, challenge.backends) == (
        "kbh_06_sonic_moe_swiglu", "Sonic-MoE up-projection (Grouped GEMM + SwiGLU)", "python", ("cuda", "cpu"))
    m = challenge.raw["module"]
    assert (m["deck"], m["problem"], m["answer_class"], m["weights"], m["seeds"], m["reference"], m["shapes"]) == (
        "kernelbench-hard", "06_sonic_moe_swiglu", "Model", "load_state_dict", [42, 123, 456], "reference.py", "shapes.py")
    assert (m["atol"], m["rtol"], m["tolerance"], m["num_correct_trials"], m["num_perf_trials"]) == (
        1e-4, 1e-4, {"bfloat16": 0.02}, 3, 20)
    assert m["forbidden"] == ["torch.matmul", "torch.bmm", "torch.nn.functional.linear", "F.linear",
                              "from sonic_moe", "import sonic_moe"]
    assert m["flops_formula"] == "2 * T_total * H * (2 * I)"
    assert m["bytes_formula"] == "T_total*K*H*2 + E*H*(2*I)*2 + T_total*K*I*2"
    assert m["peak"] == {"hardware": "NVIDIA H100 PCIe", "bandwidth_gbps": 2039.0, "tflops": 756.0, "tflops_key": "bf16"}
    assert [c["name"] for c in m["stress"]] == ["small_hidden", "large_hidden"]
    assert m["stress"][1] == {"name": "large_hidden", "input_scales": {"0": 8.0},
                              "tolerance": {"bfloat16": {"atol": 0.1, "rtol": 0.05}}}
    assert m["default_tolerance"]["bfloat16"] == {"atol": 0.01, "rtol": 0.01}
    # the "torch.bfloat16" spelling of 02's problem.yaml is the dtype's name here
    kda = tomllib.loads((root / "challenges/kbh_02_kda_cutlass/challenge.toml").read_text(encoding="utf-8"))
    assert kda["module"]["tolerance"] == {"bfloat16": 0.05}
    assert kda["module"]["peak"]["tflops"] == 756.0
    # the deck's property stress covers 02 and 06: its src/ package is copied, untouched, and named
    assert m["property_stress"] == {"path": "deck_eval", "module": "src.eval.property_stress",
                                    "problem": "06_sonic_moe_swiglu"}
    deck_src = decks / "kernelbench-hard/benchmarks/hard/src"
    for rel in ("eval/property_stress.py", "eval/correctness.py", "eval/__init__.py", "__init__.py"):
        assert (folder / "deck_eval/src" / rel).read_bytes() == (deck_src / rel).read_bytes()
    assert "property_stress" in kda["module"]
    assert "property_stress" not in tomllib.loads(
        (root / "challenges/kbh_01_fp8_gemm/challenge.toml").read_text(encoding="utf-8"))["module"]
    assert not (root / "challenges/kbh_01_fp8_gemm/deck_eval").exists()
    # what `challenge check` judges without running the harness
    assert check_files(challenge).ok
    assert check_prompt_version(challenge).ok
    quote = next(i for i in check_requirements(challenge, []) if i.name == "requirements_quote_prompt")
    assert quote.ok, quote.message


# -- bad input ------------------------------------------------------------------------

def _runs(deck: Path) -> Path:
    return deck / "public/runs/h100"


def test_kbh_bad_inputs_each_one_line(kbh_deck, tmp_path):
    runs = _runs(kbh_deck)
    # a mangled run file
    (runs / "20260618_041754_codex_gpt-5.5_01_fp8_gemm_solution.py.txt").write_bytes(b"\x00\x01\x02garbage")
    # a run of no known problem
    (runs / "20260801_000000_someharness_somemodel_99_mystery_solution.py.txt").write_text("class Model: pass\n")
    # a leaderboard entry whose run file is gone
    (runs / "20260618_044030_codex_gpt-5.5_07_w4a16_gemm_solution.py.txt").unlink()
    # runs whose problem folder is missing
    shutil.rmtree(kbh_deck / "benchmarks/hard/problems-h100/02_kda_cutlass")
    deck = kernelbench_hard.read_deck(kbh_deck, "h100")
    result = import_deck(deck, tmp_path / "wb")
    lines = result.problems
    assert "run 20260618_041754_codex_gpt-5.5_01_fp8_gemm: the run file is mangled (it holds NUL bytes (binary, not " \
           "source)); not imported" in lines
    assert any(line.startswith("run 20260801_000000_someharness_somemodel_99_mystery: unknown problem") for line in lines)
    assert "leaderboard names run 20260618_044030_codex_gpt-5.5_07_w4a16_gemm (codex/gpt-5.5 [xhigh], 07_w4a16_gemm), " \
           "which public/runs/h100/ does not hold" in lines
    missing = [line for line in lines if "its problem 02_kda_cutlass has no folder in problems-h100/" in line]
    assert len(missing) == 19  # every run of that problem, one line each
    assert sum(1 for line in lines if "says peak_fraction" in line) == 2  # the 02 one went with its problem
    assert sum(1 for line in lines if "measured on H100 SXM5" in line) == 3  # so did the 02 one
    assert len(lines) == 1 + 1 + 1 + 19 + 2 + 3
    # the sound rest is imported; nothing of the bad runs is
    assert (result.challenges, result.answers) == (3, 79 - 1 - 1 - 19)
    root = tmp_path / "wb"
    assert not (root / "challenges/kbh_02_kda_cutlass").exists()
    assert not (root / "models/codex_gpt-5.5/kbh_01_fp8_gemm").exists()
    assert rows(root, "select count(*) from deck_results where run_id like '%02_kda_cutlass'") == [(0,)]


def test_kbh_broken_result_files_and_annotations(kbh_deck, tmp_path):
    detail = kbh_deck / "public/data/rundetail/h100/20260618_041754_codex_gpt-5.5_01_fp8_gemm.json"
    detail.write_text("{not json", encoding="utf-8")
    ann = kbh_deck / "benchmarks/hard/results/annotations/20260702_055037_claude_claude-fable-5_01_fp8_gemm.yaml"
    ann.write_text("run_id: [unclosed\n", encoding="utf-8")
    board = kbh_deck / "benchmarks/hard/results/leaderboard.h100.json"
    data = json.loads(board.read_text(encoding="utf-8"))
    data["models"][1]["results"]["02_kda_cutlass"]["peak_fraction"] = 0.5  # the run's file says otherwise
    board.write_text(json.dumps(data), encoding="utf-8")
    result = import_deck(kernelbench_hard.read_deck(kbh_deck, "h100"), tmp_path / "wb")
    lines = result.problems
    assert any(line.startswith("result of run 20260618_041754_codex_gpt-5.5_01_fp8_gemm: "
                               "20260618_041754_codex_gpt-5.5_01_fp8_gemm.json is not readable JSON") for line in lines)
    assert any(line.startswith("annotation 20260702_055037_claude_claude-fable-5_01_fp8_gemm.yaml: not readable YAML")
               for line in lines)
    run_id = data["models"][1]["results"]["02_kda_cutlass"]["run_id"]
    assert any(line.startswith(f"run {run_id}: its result file says peak_fraction") and line.endswith("the leaderboard 0.5")
               for line in lines)
    # the answer whose result file broke is still imported, with the leaderboard's figures
    assert result.answers == 79
    root = tmp_path / "wb"
    assert rows(root, "select has_result, correct, peak_fraction from deck_results where run_id = ?",
                ("20260618_041754_codex_gpt-5.5_01_fp8_gemm",)) == [(0, 1, 0.2445)]


def test_kbh_nothing_half_written_when_the_store_fails(any_kbh_deck, tmp_path):
    """A row failing inside the store's real write (its deck_imports and deck_results rows
    already in): the store's transaction rolls them back, and the files go too."""
    from benchtui.store.database import Store

    root = tmp_path / "wb"
    with Store(root / "store.db") as store:  # a workbench with a store of its own
        store.conn.execute("insert into notes (model, challenge, relpath, line, author, text, created_at) "
                           "values ('mine', 'kv', 'kv.py', 1, 'me', 'keep me', '2026-01-01T00:00:00Z')")
        # the row that fails: written after the import's deck_imports and deck_results rows
        store.conn.execute("create trigger fail_annotation before insert on deck_annotations "
                           "begin select raise(abort, 'disk full'); end")
        store.conn.commit()
    with sqlite3.connect(root / "store.db") as conn:
        before = list(conn.iterdump())
    with pytest.raises(sqlite3.IntegrityError, match="disk full"):
        import_deck(kernelbench_hard.read_deck(any_kbh_deck, "h100"), root)
    with sqlite3.connect(root / "store.db") as conn:
        assert conn.execute("select count(*) from deck_imports").fetchone() == (0,)
        assert conn.execute("select count(*) from deck_results").fetchone() == (0,)
        assert list(conn.iterdump()) == before
    assert [p.name for p in root.iterdir() if not p.name.startswith("store.db")] == []  # the files went too


def test_kbh_an_answer_is_never_overwritten(any_kbh_deck, tmp_path):
    root = tmp_path / "wb"
    deck = kernelbench_hard.read_deck(any_kbh_deck, "h100")
    run = next(r for r in deck.runs if r.result and r.result["has_result"])  # a run with a result file
    challenge = deck.problems[run.problem].challenge
    mine = root / "models" / run.model / challenge
    mine.mkdir(parents=True)
    (mine / "solution.py").write_text("# my own answer\n", encoding="utf-8")
    result = import_deck(deck, root)
    assert (mine / "solution.py").read_text(encoding="utf-8") == "# my own answer\n"
    assert f"run {run.run_id}: models/{run.model}/{challenge}/ already holds another " \
           "solution.py; an answer is never overwritten, so this run's answer is not imported; its published result " \
           "is kept, without its answer" in result.problems
    assert result.answers == len(deck.runs) - 1


def test_kbh_a_challenge_of_ones_own_is_not_replaced(any_kbh_deck, tmp_path):
    root = tmp_path / "wb"
    deck = kernelbench_hard.read_deck(any_kbh_deck, "h100")
    first = next(iter(deck.problems.values()))
    own = root / "challenges" / first.challenge
    own.mkdir(parents=True)
    (own / "challenge.toml").write_text(f'id = "{first.challenge}"\ntitle = "mine"\n', encoding="utf-8")
    result = import_deck(deck, root)
    assert (own / "challenge.toml").read_text(encoding="utf-8").endswith('title = "mine"\n')
    assert any(line.startswith(f"problem {first.key}: challenges/{first.challenge}/ exists and is not this deck's import")
               for line in result.problems)
    assert result.challenges == len(deck.problems) - 1
    assert not list((root / "models").glob(f"*/{first.challenge}"))


def test_the_generated_conformance_reaches_the_module_harness_through_the_public_api(tmp_path):
    from benchtui.api import run_module_suite
    from benchtui.verify.binding import load_module
    from benchtui.verify.module.suite import run

    imported = [n.module if isinstance(n, ast.ImportFrom) else n.names[0].name
                for n in ast.walk(ast.parse(CONFORMANCE)) if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert imported == ["benchtui.api"]
    (tmp_path / "conformance.py").write_text(CONFORMANCE, encoding="utf-8")
    assert load_module(tmp_path / "conformance.py", "benchtui_conformance_generated").run is run_module_suite is run


def test_kbh_import_again_rewrites_a_conformance_on_the_old_name(any_kbh_deck, tmp_path):
    # what an older benchtui wrote, which no longer loads: the run's message says to import the deck again
    root = tmp_path / "wb"
    deck = kernelbench_hard.read_deck(any_kbh_deck, "h100")
    import_deck(deck, root)
    old = root / "challenges" / next(iter(deck.problems.values())).challenge / "conformance.py"
    old.write_text('"""Hidden checks for an imported deck problem (engine/verify/module/suite.py)."""\n'
                   "from engine.verify.module_suite import run  # noqa: F401\n", encoding="utf-8")
    result = import_deck(kernelbench_hard.read_deck(any_kbh_deck, "h100"), root)
    assert old.read_text(encoding="utf-8") == CONFORMANCE and result.files_written == 1


# -- KernelBench ----------------------------------------------------------------------

def test_kb_problems_become_challenges(kb_imported, decks):
    root, r = kb_imported
    levels = decks / "kernelbench/KernelBench"
    n = len(list(levels.glob("level1/*.py"))) + len(list(levels.glob("level2/*.py")))
    assert r.challenges == n == 200
    folder = root / "challenges/kb_l1_p1_square_matrix_multiplication"
    assert (folder / "reference.py").read_bytes() == (levels / "level1/1_Square_matrix_multiplication_.py").read_bytes()
    data = tomllib.loads((folder / "challenge.toml").read_text(encoding="utf-8"))
    m = data["module"]
    assert (m["deck"], m["problem"], m["answer_class"], m["weights"], m["level"]) == (
        "kernelbench", "level_1_problem_1", "ModelNew", "seeded", 1)
    assert "shapes" not in m and "flops_formula" not in m and "peak" not in m
    assert (m["atol"], m["rtol"], m["num_correct_trials"], m["num_perf_trials"]) == (1e-4, 1e-4, 5, 100)
    assert m["seeds"] == kernelbench.TRIAL_SEEDS_FROM_42 and m["init_seed"] == 42
    assert m["static_checks"] == ["code_bypass", "timing_event_patch", "thread_injection", "lazy_eval"]
    prompt = (folder / "PROMPT.md").read_text(encoding="utf-8")
    assert "Name your optimized output architecture ModelNew" in prompt
    assert (levels / "level1/1_Square_matrix_multiplication_.py").read_text(encoding="utf-8").strip() in prompt
    ids = [p.name for p in (root / "challenges").iterdir()]
    assert all(len(i) <= 48 and i.startswith("kb_l") for i in ids) and len(set(ids)) == 200


def test_kb_runs_samples_and_eval_results(kb_imported, decks):
    root, r = kb_imported
    assert (r.answers, r.models, r.results) == (3, 2, 3)
    examples = decks / "kernelbench/src/kernelbench/prompts"
    assert (root / "models/demo/kb_l1_p1_square_matrix_multiplication/solution.py").read_bytes() == \
        (examples / "model_new_ex_add.py").read_bytes()
    # sample 1 of the same problem: a model of its own, not an overwrite
    assert (root / "models/demo_s1/kb_l1_p1_square_matrix_multiplication/solution.py").read_bytes() == \
        (examples / "model_new_ex_add_cute.py").read_bytes()
    got = {row[0]: row[1:] for row in rows(root, "select run_id, correct, failure_reason, speedup, stats from deck_results")}
    assert got["demo/level_1_problem_1_sample_0"][:3] == (1, "pass", 2.0)
    assert json.loads(got["demo/level_1_problem_1_sample_0"][3])["runtime_us"] == 12.5
    assert got["demo/level_1_problem_1_sample_1"][:2] == (0, "compile_error: RuntimeError")
    assert got["demo/level_1_problem_19_sample_0"][:2] == (0, "Output mismatch (0 / 5)")
    assert r.problems == [
        "run demo/level_1_problem_999_sample_0: unknown problem (KernelBench/level1/ has no problem 999); not imported",
        "run demo/level_3_problem_1_sample_0: level 3 has no folder KernelBench/level3/; not imported",
        "run demo: eval_results.json names problem 42 sample 0, which has no kernel file",
    ]


def test_kb_mangled_eval_results(any_kb_deck):
    (any_kb_deck / "runs/demo/eval_results.json").write_text("{ not json", encoding="utf-8")
    deck = kernelbench.read_deck(any_kb_deck)
    assert any(line.startswith("run demo: eval_results.json is not readable JSON") for line in deck.problems_found)
    assert all(run.result is None for run in deck.runs)


def test_kb_trial_seeds_are_kernelbenchs():
    torch = pytest.importorskip("torch", reason="the seeds are checked against torch's generator where torch is installed")
    torch.manual_seed(kernelbench.BASE_SEED)
    assert [torch.randint(0, 2**32 - 1, (1,)).item() for _ in range(5)] == kernelbench.TRIAL_SEEDS_FROM_42


# -- the command ----------------------------------------------------------------------

def test_cli_import_and_published(decks, tmp_path, capsys):
    from benchtui.cli import main

    root = tmp_path / "new-wb"
    assert main(["--workbench", str(root), "import", str(decks / "kernelbench-hard"), "--gpu", "h100", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["answers"], out["challenges"], out["commit"], out["scan"]["answers"]) == (79, 4, "c7d9221", 79)
    assert (root / "store.db").is_file()
    assert main(["--workbench", str(root), "import", str(decks / "kernelbench-hard"), "--gpu", "h100", "--strict"]) == 1
    assert "problem: run 20260721_145355_codex_gpt-5.6-sol_06_sonic_moe_swiglu" in capsys.readouterr().out
    assert main(["--workbench", str(root), "published", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["overall"]["answers"] == 79 and data["overall"]["deck_pass"] == 66
    assert data["overall"]["not_judged_here"] == 79 and data["disagreements"] == []
    assert len(data["imports"][0]["problems"]) == 3 + 4


def test_cli_refuses_what_is_not_a_deck(tmp_path, capsys, any_kbh_deck):
    from benchtui.cli import main

    assert main(["--workbench", str(tmp_path / "wb"), "import", str(tmp_path / "wb0")]) == 2
    (tmp_path / "empty").mkdir()
    assert main(["--workbench", str(tmp_path / "wb"), "import", str(tmp_path / "empty")]) == 2
    assert "is neither a KernelBench-Hard deck" in capsys.readouterr().err
    assert main(["--workbench", str(tmp_path / "wb"), "import", str(any_kbh_deck), "--gpu", "b200"]) == 2
    assert "has no problems-b200/ folder (GPUs here: h100)" in capsys.readouterr().err
    # the reader says the same where it is called directly
    with pytest.raises(kernelbench_hard.DeckError, match="no problems-b200/ folder"):
        kernelbench_hard.read_deck(any_kbh_deck, "b200")
    assert not (tmp_path / "wb").exists()
    # the current folder is the default workbench: never the deck itself
    assert main(["--workbench", str(any_kbh_deck), "import", str(any_kbh_deck)]) == 2
    assert "is inside the deck" in capsys.readouterr().err
    assert not (any_kbh_deck / "models").exists() and not (any_kbh_deck / "challenges").exists()


def test_kb_a_mangled_kernel_is_one_line_even_with_a_result(any_kb_deck):
    runs = any_kb_deck / "runs"
    (runs / "demo/eval_results.json").write_text(json.dumps(
        {"1": [{"sample_id": 2, "compiled": True, "correctness": True, "metadata": {}, "runtime": 1.0}]}))
    (runs / "demo/level_1_problem_1_sample_2_kernel.py").write_bytes(b"")
    deck = kernelbench.read_deck(any_kb_deck)
    about = [line for line in deck.problems_found if "problem_1_sample_2" in line or "problem 1 sample 2" in line]
    assert about == ["run demo/level_1_problem_1_sample_2: the kernel file is mangled (it is empty); not imported"]


def test_dry_run_writes_nothing(any_kbh_deck, tmp_path, capsys):
    from benchtui.cli import main

    root = tmp_path / "wb"
    deck = kernelbench_hard.read_deck(any_kbh_deck, "h100")
    models = len({r.model for r in deck.runs})
    assert main(["--workbench", str(root), "import", str(any_kbh_deck), "--gpu", "h100", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("would import KernelBench-Hard (H100) from")  # the GPU named once
    assert f"{len(deck.problems)} challenges ({len(deck.problems)} new or changed), {len(deck.runs)} answers of " \
           f"{models} models ({len(deck.runs)} new)" in out
    assert not root.exists()
    # over an imported workbench: nothing new, and still nothing written
    import_deck(kernelbench_hard.read_deck(any_kbh_deck, "h100"), root)
    before = sorted(str(p) for p in root.rglob("*"))
    result = import_deck(kernelbench_hard.read_deck(any_kbh_deck, "h100"), root, dry_run=True)
    assert (result.files_written, result.answers, result.notes_added, result.results_written) == (0, len(deck.runs), 0, 0)
    assert sorted(str(p) for p in root.rglob("*")) == before


def test_kbh_a_quote_of_other_lines_is_reported(kbh_deck, tmp_path):
    ann = kbh_deck / "benchmarks/hard/results/annotations/20260702_055037_claude_claude-fable-5_01_fp8_gemm.yaml"
    ann.write_text(ann.read_text(encoding="utf-8").replace("lines: [684, 689]", "lines: [10, 15]"), encoding="utf-8")
    deck = kernelbench_hard.read_deck(kbh_deck, "h100")
    assert "run 20260702_055037_claude_claude-fable-5_01_fp8_gemm: its annotation " \
           "(20260702_055037_claude_claude-fable-5_01_fp8_gemm.yaml) quotes solution.py:10-15, which hold other text" \
           in deck.problems_found
    run = next(r for r in deck.runs if r.run_id == "20260702_055037_claude_claude-fable-5_01_fp8_gemm")
    assert [q["start"] for q in run.annotations[0]["quotes"]] == [10, 748, 122]  # kept, where the annotation puts it


# -- run files that carry the files their solution.py loads ---------------------------

SIDECAR_RUNS = {"grok_grok-4.5_max/kbh_07_w4a16_gemm": "w4a16_kernels.cu",
                "kinetic-claude_kinetic-0715_1m/kbh_01_fp8_gemm": "fp8_gemm_cutlass.cu",
                "or-fable_anthropic_claude-fable-5/kbh_01_fp8_gemm": "_fp8_cutlass_gen.cu",
                "codex_gpt-5.6-sol/kbh_07_w4a16_gemm": "cutlass_kernel.cu"}


def test_kbh_sidecars_are_split_back_into_their_files(kbh_imported):
    """The deck appends each .cu file a solution.py loads to its run file;
    the import writes it back beside solution.py, which then parses."""
    import ast

    root, r, _ = kbh_imported
    for cell, name in SIDECAR_RUNS.items():
        folder = root / "models" / cell
        assert sorted(p.name for p in folder.iterdir()) == sorted(["solution.py", name])
        ast.parse((folder / "solution.py").read_text(encoding="utf-8"))
        assert b"===== sidecar:" not in (folder / "solution.py").read_bytes()
        assert (folder / name).read_bytes().rstrip().endswith(b"}")
        assert any(f"carries {name} appended" in n for n in r.notes)
    assert not any("does not parse as Python" in n for n in r.notes)
    grok = (root / "models/grok_grok-4.5_max/kbh_07_w4a16_gemm/w4a16_kernels.cu").read_text(encoding="utf-8")
    assert grok.startswith("// W4A16 kernels: fused GEMV") and len(grok) == 8062  # the size its banner gives


def test_split_sidecars_sizes_names_and_quote_lines():
    py = b"import torch\n\nclass Model:\n    pass\n"
    banner = b"# " + b"=" * 10 + b"\n# ===== sidecar: k.cu (%d bytes, loaded by solution.py) =====\n# " + b"=" * 10 + b"\n\n"
    cu = b"__global__ void k() {}\n// two\n"
    data = py + b"\n\n" + (banner % len(cu)) + cu
    files, starts, problems = kernelbench_hard.split_sidecars(data, "solution.py")
    assert files == {"solution.py": py, "k.cu": cu} and problems == []
    assert data.splitlines()[starts["k.cu"] - 1] == b"__global__ void k() {}"
    # a banner whose size is not what follows: split, and said
    _, _, problems = kernelbench_hard.split_sidecars(py + b"\n\n" + (banner % 99) + cu, "solution.py")
    assert problems == ["sidecar k.cu: its banner says 99 bytes, 30 follow"]
    # a name that would leave the answer folder: not split
    evil = banner.replace(b"k.cu", b"../k.cu") % len(cu)
    files, _, problems = kernelbench_hard.split_sidecars(py + evil + cu, "solution.py")
    assert files == {} and "cannot be a file of its own" in problems[0]
    assert kernelbench_hard.split_sidecars(py, "solution.py") == ({}, {}, [])


def test_kbh_a_quote_in_a_sidecar_is_noted_on_that_file(kbh_deck, tmp_path):
    run_id = "20260709_040836_grok_grok-4.5_07_w4a16_gemm"
    data = (kbh_deck / f"public/runs/h100/{run_id}_solution.py.txt").read_bytes()
    line = data.splitlines().index(b"// W4A16 kernels: fused GEMV (M=1) + fast dequant for prefill matmul.") + 1
    (kbh_deck / f"benchmarks/hard/results/annotations/{run_id}.yaml").write_text(
        f"run_id: {run_id}\nverdict: clean\nsummary: the kernels\nquotes:\n"
        f"  - lines: [{line}, {line}]\n    label: header\n    text: \"// W4A16 kernels: fused GEMV\"\n",
        encoding="utf-8")
    deck = kernelbench_hard.read_deck(kbh_deck, "h100")
    run = next(r for r in deck.runs if r.run_id == run_id)
    (quote,) = run.annotations[0]["quotes"]
    assert (quote["file"], quote["start"]) == ("w4a16_kernels.cu", 1)
    assert not any(run_id in p and "other text" in p for p in deck.problems_found)


def test_the_next_step_fits_what_the_import_brought():
    from benchtui.commands.deck_cmds import next_step
    from benchtui.decks.importer import ImportResult
    from benchtui.decks.model import KERNELBENCH, KERNELBENCH_HARD

    def result(kind, answers, results):
        return ImportResult(kind, "t", "/deck", "c", "", "/wb", answers=answers, results=results)

    assert next_step(result(KERNELBENCH_HARD, 79, 80)).startswith("`benchtui run -c CHALLENGE` runs the answers; "
                                                                   "`benchtui published` sets")
    bare = next_step(result(KERNELBENCH, 0, 0))  # problems only: no `run`, no `published` (there is nothing of either)
    assert bare.startswith("no answers to run yet: import its runs with `benchtui import DECK --runs RUNS_FOLDER`")
    assert "`benchtui model new NAME`" in bare and "run -c" not in bare and "published" not in bare
    board = next_step(result(KERNELBENCH_HARD, 0, 12))
    assert "--runs" not in board and board.endswith("`benchtui published` shows the deck's published results")


def test_a_view_of_one_problem_keeps_the_deck_lines_about_it_and_the_whole_decks(kbh_imported):
    from benchtui.decks.compare import compare
    from benchtui.store.database import Store

    root, _, _ = kbh_imported
    with Store(root / "store.db") as store:
        every = [line for i in compare(store)["imports"] for line in i["problems"]]
        kda = [line for i in compare(store, challenge="kbh_02_kda_cutlass")["imports"] for line in i["problems"]]
    assert any("_06_sonic_moe_swiglu" in line for line in every) and any("_02_kda_cutlass" in line for line in kda)
    assert [line for line in every if "_02_kda_cutlass" in line or "run " not in line] == kda
