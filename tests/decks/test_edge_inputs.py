"""Inputs that construct the edge a comparison cares about, on every run, as
benchtui's own requirement beside the deck's rule: rows of ties for an index
output (an answer naming an index twice on ties fails every run, not on the
seed that happens to tie), and inputs beyond the deck's distribution where the
reference defines the operator (signed, zero, large), so an identity passes no
ReLU whose deck draws only nonnegative inputs."""
from __future__ import annotations

import shutil
from pathlib import Path

import deck_kit as K
import pytest
from benchtui.decks import kernelbench, kernelbench_hard
from benchtui.decks.importer import import_deck

torch = pytest.importorskip("torch")


def checks_of(root: Path, challenge: str, tmp_path: Path, source: str, seed: int) -> tuple[str, dict]:
    from benchtui.runner.local import run_local

    answer = tmp_path / f"answer-{seed}-{abs(hash(source)) % 10**6}"
    answer.mkdir()
    (answer / "solution.py").write_text(source, encoding="utf-8")
    result = run_local(challenge, answer, challenges_dir=root / "challenges", seed=seed)
    return result["verdict"], {c["name"]: c for c in result["checks"]}


@pytest.fixture(scope="module")
def topk_wb(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("topk")
    deck = K.hard_deck(base / "deck")
    K.topk_problem(deck)
    root = base / "wb"
    import_deck(kernelbench_hard.read_deck(deck, "h100"), root)
    return root


def test_ties_are_built_on_every_run(topk_wb, tmp_path):
    """The answer that repeats an index on ties fails the ties check on each of three seeds;
    the deck's own rule (any tie-break, no distinct-index rule) is not moved by it."""
    challenge = "kbh_03_tiny_topk"
    for seed in (1, 2, 3):
        verdict, checks = checks_of(topk_wb, challenge, tmp_path, K.TOPK_REPEATS_ON_TIES, seed)
        assert verdict == "fail", (seed, [(n, c["verdict"]) for n, c in checks.items()])
        tie = checks["ties:shape0"]
        assert tie["verdict"] == "fail" and "name an index twice" in tie["message"], tie
    verdict, checks = checks_of(topk_wb, challenge, tmp_path, K.TOPK_RIGHT, 1)
    assert checks["ties:shape0"]["verdict"] == "pass" and "benchtui's own requirement" in checks["ties:shape0"]["message"]
    assert verdict == "pass", [(n, c["verdict"], c["message"][:100]) for n, c in checks.items()]


def test_tied_rows_are_ties():
    from benchtui.verify.module.edges import tied

    x = torch.rand(6, 16)
    t = tied(x, -1)
    assert t.shape == x.shape and (t[0] == t[0, 0]).all() and (t[3] == t[3, 0]).all()
    assert t[1].unique().numel() < 16 and (t[2] == t[2].max()).sum() >= 4


def kb_relu_wb(tmp_path: Path, deck: Path) -> Path:
    root = tmp_path / "wb"
    import_deck(kernelbench.read_deck(deck, runs=deck / "runs"), root)
    return root


@pytest.fixture(params=["handmade", "published"])
def relu_wb(request, tmp_path) -> tuple[Path, str]:
    """A KernelBench deck holding a ReLU whose inputs are torch.rand, at a CPU size: the
    hand-built one, and the published slice's own 19_ReLU cut to 4 x 8 (skipped where absent)."""
    if request.param == "handmade":
        deck = K.kernelbench_deck(tmp_path / "kb")
        K.relu_problem(deck)
        return kb_relu_wb(tmp_path, deck), "kb_l1_p3_tiny_relu"
    shared = request.getfixturevalue("decks") / "kernelbench"
    deck = tmp_path / "kb"
    (deck / "KernelBench" / "level1").mkdir(parents=True)
    shutil.copytree(shared / "src", deck / "src")
    text = (shared / "KernelBench" / "level1" / "19_ReLU.py").read_text(encoding="utf-8")
    text = text.replace("batch_size = 4096", "batch_size = 4").replace("dim = 393216", "dim = 8")
    (deck / "KernelBench" / "level1" / "19_ReLU.py").write_text(text, encoding="utf-8")
    (deck / "runs").mkdir()
    return kb_relu_wb(tmp_path, deck), "kb_l1_p19_relu"


def test_an_identity_passes_no_relu(relu_wb, tmp_path):
    root, challenge = relu_wb
    verdict, checks = checks_of(root, challenge, tmp_path, K.KB_IDENTITY, 5)
    wider = checks["wider_inputs:shape0"]
    assert verdict == "fail" and wider["verdict"] == "fail", [(n, c["verdict"]) for n, c in checks.items()]
    assert "benchtui's own" not in checks["deck_rule"]["message"]
    # the deck's own rule, on its own inputs, would pass it: the wider inputs are never folded into it
    assert checks["deck_rule"]["value"] == "pass"
    verdict, checks = checks_of(root, challenge, tmp_path, K.KB_RELU_RIGHT, 5)
    assert checks["wider_inputs:shape0"]["verdict"] == "pass" and verdict == "pass", \
        [(n, c["verdict"], c["message"][:100]) for n, c in checks.items()]
    assert "not the deck's rule" in checks["wider_inputs:shape0"]["message"]
