"""Imported answers run end to end on a small KernelBench deck made here (no
published deck needed): each run records the deck's prompt version, which the
import wrote as the challenge's PROMPT.md; and how a KernelBench-Hard check.py
compares an index output is read into the challenge."""
from __future__ import annotations

import json
import sqlite3
import tomllib
from pathlib import Path

import pytest
from benchtui.decks import index_rule, kernelbench, kernelbench_hard, pyread
from benchtui.decks.challenge import challenge_toml
from benchtui.decks.importer import import_deck
from benchtui.decks.model import KERNELBENCH_HARD, Deck
from deck_kit import cli

REPO = Path(__file__).resolve().parents[2]

DOUBLE = """import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x * 2


batch_size = 4
dim = 8


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return []
"""
RIGHT = DOUBLE.replace("class Model(", "class ModelNew(").split("\n\nbatch_size")[0] + "\n"
WRONG = RIGHT.replace("return x * 2", "return x * 3")


@pytest.fixture(scope="module")
def tiny_kb(tmp_path_factory) -> Path:
    """Two level-1 problems and one run folder answering the first right and the second wrong."""
    pytest.importorskip("torch")
    base = tmp_path_factory.mktemp("kb-tiny")
    level = base / "deck" / "KernelBench" / "level1"
    level.mkdir(parents=True)
    (level / "1_Double.py").write_text(DOUBLE)
    (level / "2_Double_again.py").write_text(DOUBLE)
    run = base / "deck" / "runs" / "demo"
    run.mkdir(parents=True)
    (run / "level_1_problem_1_sample_0_kernel.py").write_text(RIGHT)
    (run / "level_1_problem_2_sample_0_kernel.py").write_text(WRONG)
    (run / "eval_results.json").write_text(json.dumps({
        "1": [{"sample_id": 0, "compiled": True, "correctness": True, "runtime": 1.0}],
        "2": [{"sample_id": 0, "compiled": True, "correctness": True, "runtime": 1.0}]}))
    root = base / "wb"
    import_deck(kernelbench.read_deck(base / "deck", runs=base / "deck" / "runs", commit="423217d"), root)
    return root


def test_an_imported_answers_run_is_judged_against_the_decks_prompt(tiny_kb, capsys):
    code, _ = cli(capsys, "--workbench", str(tiny_kb), "run", "--backend", "cpu")
    with sqlite3.connect(tiny_kb / "store.db") as conn:
        versions = conn.execute("select challenge, prompt_version from runs order by challenge").fetchall()
    assert versions == [("kb_l1_p1_double", "deck"), ("kb_l1_p2_double_again", "deck")]
    code, out = cli(capsys, "--workbench", str(tiny_kb), "show", "demo", "kb_l1_p1_double")
    assert code == 0
    assert ("judged against prompt version: deck (from the kernelbench import, run "
            "demo/level_1_problem_1_sample_0; no PROMPT.md)") in out
    assert "unknown or missing prompt" not in out
    code, out = cli(capsys, "--workbench", str(tiny_kb), "published", "--json")
    rows = {a["challenge"]: a for a in json.loads(out)["answers"]}
    wrong = rows["kb_l1_p2_double_again"]
    assert (wrong["verdict"], wrong["figure"]) == ("fail", None)
    # a failing run stored with a figure (as an older harness kept one) is neither shown nor ranked by it
    with sqlite3.connect(tiny_kb / "store.db") as conn:
        conn.execute("update checks set value = '0.5' where name like '%peak_fraction' and run_id = "
                     "(select max(id) from runs where challenge = 'kb_l1_p2_double_again')")
        assert conn.total_changes == 1
    code, out = cli(capsys, "--workbench", str(tiny_kb), "published", "--json")
    assert {a["challenge"]: a for a in json.loads(out)["answers"]}["kb_l1_p2_double_again"]["figure"] is None


def test_an_answer_not_imported_keeps_an_unknown_prompt(tiny_kb, capsys):
    """The deck's prompt is taken only for an answer the import recorded."""
    folder = tiny_kb / "models" / "someone" / "kb_l1_p1_double"
    folder.mkdir(parents=True)
    (folder / "solution.py").write_text(RIGHT)
    cli(capsys, "--workbench", str(tiny_kb), "scan")
    cli(capsys, "--workbench", str(tiny_kb), "run", "--backend", "cpu", "-m", "someone")
    with sqlite3.connect(tiny_kb / "store.db") as conn:
        (version,) = conn.execute("select prompt_version from runs where model = 'someone'").fetchone()
    assert version is None


TOPK_CHECK = """import torch
from src.eval.correctness import check_correctness


def main():
    for seed in (42, 123, 456):
        inputs = reference.get_inputs()
        ref_values, ref_indices = ref_model(*inputs)
        sol_out = sol_model(*inputs)
        sol_values, sol_indices = sol_out
        x = inputs[0]
        sol_idx_long = sol_indices.to(torch.int64)
        gathered = torch.gather(x, dim=-1, index=sol_idx_long)
        ok, msg = check_correctness(ref_values.float(), gathered.float(), dtype=torch.float32, override=tol)
"""


def problem_folder(tmp_path: Path, check: str) -> Path:
    folder = tmp_path / "problems-h100" / "05_topk"
    folder.mkdir(parents=True)
    (folder / "reference.py").write_text("import torch\n")
    (folder / "problem.yaml").write_text("name: 05_topk\nprecision: fp32\nregime: memory\ntolerance:\n  float32: 1.0e-4\n")
    (folder / "PROMPT.txt").write_text("I need you to write a top-k kernel.\n")
    (folder / "check.py").write_text(check)
    return folder


def test_a_check_that_gathers_at_the_returned_indices_is_read_into_the_challenge(tmp_path):
    """check.py's gather, followed back through its names: the index output is the answer's
    second (sol_indices), gathered from the first input along the last dim and compared with
    the reference's first output at float32's tolerance; the harness reads it back."""
    from benchtui.verify.module.suite import Spec

    deck = Deck(KERNELBENCH_HARD, "KernelBench-Hard (H100)", str(tmp_path), "abc1234", gpu="h100")
    defaults = {"float32": {"atol": 1e-4, "rtol": 1e-4}, "int64": {"atol": 0.0, "rtol": 0.0}}
    problem = kernelbench_hard.read_problem(deck, problem_folder(tmp_path, TOPK_CHECK), 1, [42, 123, 456],
                                            defaults, {}, {})
    assert problem.module["indices"] == {"output": 1, "values": 0, "input": 0, "dim": -1, "dtype": "float32"}
    challenge = tmp_path / "challenge"
    challenge.mkdir()
    (challenge / "challenge.toml").write_text(challenge_toml(deck, problem))
    tomllib.loads((challenge / "challenge.toml").read_text())
    spec = Spec.read(challenge)
    assert spec.indices == problem.module["indices"] and spec.default_tolerance == defaults


def test_a_gather_the_reader_cannot_follow_is_a_note(tmp_path):
    deck = Deck(KERNELBENCH_HARD, "KernelBench-Hard (H100)", str(tmp_path), "abc1234", gpu="h100")
    unfollowable = TOPK_CHECK.replace("x = inputs[0]", "x = pick(inputs)")
    problem = kernelbench_hard.read_problem(deck, problem_folder(tmp_path, unfollowable), 1, [42], {}, {}, {})
    assert "indices" not in problem.module
    assert any("check.py gathers the input at returned indices in a form this reader cannot follow" in n
               for n in deck.notes)


def test_the_published_decks_checks_compare_by_value(decks):
    """None of the shared slice's four problems gathers: each is compared by value."""
    checks = sorted((decks / "kernelbench-hard" / "benchmarks" / "hard" / "problems-h100").glob("*/check.py"))
    assert len(checks) == 4
    for path in checks:
        tree = pyread.parse(path)
        assert tree is not None and index_rule.read(tree) is None and not index_rule.gathers(tree), path
