"""A part the deck lacks is the deck's, never the answer's: the import follows what
the deck's property stress imports (src/eval/__init__.py imports correctness.py and
numeric_stress.py), names each missing one with the property stress among what it
loses, and a run of an answer says "the deck lacks X" for the property stress and
still judges the rest, instead of calling the answer's run a missing dependency."""
from __future__ import annotations

import tomllib
from pathlib import Path

import deck_kit as K
import pytest
from benchtui.decks import kernelbench_hard
from benchtui.decks.importer import import_deck
from benchtui.decks.pyread import import_closure

PARTS = ("src/eval/numeric_stress.py", "src/eval/correctness.py")


def module_table(root: Path, challenge: str) -> dict:
    return tomllib.loads((root / "challenges" / challenge / "challenge.toml").read_text(encoding="utf-8"))["module"]


@pytest.mark.parametrize("part", PARTS)
def test_the_import_names_a_part_other_parts_import(any_kbh_deck, tmp_path, part):
    bench = any_kbh_deck / "benchmarks" / "hard"
    _, before = import_closure(bench, kernelbench_hard.PROPERTY_MODULE)
    assert before == []
    (bench / part).unlink()
    _, after = import_closure(bench, kernelbench_hard.PROPERTY_MODULE)
    assert after == [part]
    deck = kernelbench_hard.read_deck(any_kbh_deck, "h100")
    result = import_deck(deck, tmp_path / "wb")
    covered = [p for p in deck.problems.values() if p.module.get("property_stress")]
    assert covered, "a problem of the deck has the property stress"
    line = next(m for m in result.missing if m.startswith(f"benchmarks/hard/{part} is missing"))
    for problem in covered:
        assert f"{problem.key}'s property stress" in line
        table = module_table(tmp_path / "wb", problem.challenge)
        assert table["missing"]["property_stress"] == f"benchmarks/hard/{part}"


@pytest.mark.parametrize("part", PARTS)
def test_a_run_says_the_deck_lacks_it_and_judges_the_rest(tmp_path, part):
    pytest.importorskip("torch", reason="the module harness runs the answers with torch")
    from benchtui.runner.local import run_local

    root = tmp_path / "wb"
    import_deck(kernelbench_hard.read_deck(K.hard_deck(tmp_path / "deck", without=(part,)), "h100"), root)
    answer = tmp_path / "answer"
    answer.mkdir()
    (answer / "solution.py").write_text(K.SOLUTION.format(tag="right", k=2), encoding="utf-8")
    result = run_local("kbh_01_tiny_double", answer, challenges_dir=root / "challenges", seed=7)
    checks = {c["name"]: c for c in result["checks"]}
    assert result["verdict"] == "skipped", [(c["name"], c["verdict"], c["message"][:120]) for c in result["checks"]]
    assert not any(c["verdict"] == "missing_dependency" for c in result["checks"])
    lacks = checks["property_stress"]
    assert lacks["verdict"] == "skipped"
    assert lacks["message"].startswith(f"the deck lacks benchmarks/hard/{part}")
    # the rest is judged: the answer's calls on the deck's seeds and benchtui's own pass
    assert checks["deck_seeds:shape0"]["verdict"] == checks["secret_seeds:shape1"]["verdict"] == "pass"
    assert checks["deck_rule"]["value"] == "not reproducible"


def test_the_whole_decks_property_stress_runs(tmp_path):
    pytest.importorskip("torch", reason="the module harness runs the answers with torch")
    from benchtui.runner.local import run_local

    root = tmp_path / "wb"
    import_deck(kernelbench_hard.read_deck(K.hard_deck(tmp_path / "deck"), "h100"), root)
    answer = tmp_path / "answer"
    answer.mkdir()
    (answer / "solution.py").write_text(K.SOLUTION.format(tag="right", k=2), encoding="utf-8")
    result = run_local("kbh_01_tiny_double", answer, challenges_dir=root / "challenges", seed=7)
    checks = {c["name"]: c for c in result["checks"]}
    assert checks["property_stress:shape0"]["verdict"] == "pass" and checks["deck_rule"]["value"] == "pass"
