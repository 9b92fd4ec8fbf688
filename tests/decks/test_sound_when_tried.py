"""``challenge check`` calls a plugin sound only when its mutation audit tried
something: an audit whose baseline failed, that made no mutant, or whose every
mutant was likely equivalent is "not judged" with its reason, never a score of
nothing read as success. An imported deck problem's reference is audited as
its answer file (solution.py), so its baseline is the reference's own."""
from __future__ import annotations

import json

import deck_kit
import pytest
from benchtui.authoring import soundness
from benchtui.authoring.soundness import Item, Report
from benchtui.cli import main
from benchtui.decks import kernelbench_hard
from benchtui.decks.importer import import_deck

torch = pytest.importorskip("torch")

BASELINE_FAILED = {"model": "(reference)", "challenge": "c", "status": "baseline_failed", "score": None,
                   "message": "the original does not pass on the audit's path: bind: unbound no solution.py in the answer",
                   "killed": 0, "survived": 0, "equivalent": 0, "mutants": 0}


def judged_report(mutation: dict | None) -> Report:
    report = Report("c", [Item("files", True, "present")])
    report.mutation = mutation
    return report


@pytest.mark.parametrize("row", [
    BASELINE_FAILED,
    {**BASELINE_FAILED, "status": "no_mutants", "message": "no mutable line reached"},
    {**BASELINE_FAILED, "status": "audited", "message": "", "equivalent": 3, "mutants": 3},
])
def test_an_audit_that_tried_nothing_is_not_judged_and_not_sound(monkeypatch, tmp_path, row):
    """reference_mutation_score on the store's word for an audit that ran no mutant, as
    the top-k problem's did ("no solution.py in the answer", 0 mutants)."""
    from benchtui.audit import core, report
    from benchtui.runner import sandbox

    monkeypatch.setattr(sandbox, "choose_layer", lambda *a, **k: "unshare")
    monkeypatch.setattr(core.Auditor, "run", lambda self: None)
    deck_kit.hard_deck(tmp_path / "deck")
    root = tmp_path / "wb"
    import_deck(kernelbench_hard.read_deck(tmp_path / "deck", "h100"), root)
    from benchtui.challenges.definition import load_challenge
    from benchtui.workbench.layout import find_workbench

    challenge = load_challenge(root / "challenges" / "kbh_01_tiny_double")
    challenge_id = challenge.id
    monkeypatch.setattr(report, "challenge_reports",
                        lambda store: [{"challenge": challenge_id, "answers": [{**row, "challenge": challenge_id}]}])
    m = soundness.reference_mutation_score(find_workbench(str(root), None, root), challenge, 2)
    rep = judged_report(m)
    assert m["score"] is None and m["note"].startswith("not judged:"), m
    assert not rep.sound and rep.not_judged == ["mutation_score"]
    assert "survived the likely-equivalent filter" not in rep.mutation_text()
    if row["status"] == "baseline_failed":
        assert "baseline failed" in rep.mutation_text() and "no solution.py" in rep.mutation_text()


def test_a_count_of_zero_is_never_a_score():
    for m in ({"score": None, "killed": 0, "survived": 0, "equivalent": 0, "mutants": 0},
              {"score": 1.0, "killed": 0, "survived": 0, "equivalent": 0, "mutants": 0}):
        assert not judged_report(m).sound
    assert judged_report({"score": 0.5, "killed": 1, "survived": 1, "equivalent": 0, "mutants": 2}).sound


@pytest.mark.sandbox
def test_a_deck_problems_reference_is_audited_as_its_answer_file(tmp_path, capsys, monkeypatch):
    """The reference goes into the audit as solution.py (the deck's answer file): the
    baseline passes and mutants are made, so the figure is a measured one."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    deck_kit.hard_deck(tmp_path / "deck")
    root = tmp_path / "wb"
    import_deck(kernelbench_hard.read_deck(tmp_path / "deck", "h100"), root)
    try:
        code = main(["--workbench", str(root), "challenge", "check", "kbh_01_tiny_double", "--json", "--seeds", "1",
                     "--mutants", "2"])
    except SystemExit as exc:
        code = exc.code
    report = json.loads(capsys.readouterr().out)
    m = report["mutation"]
    assert code == 0 and m.get("status") != "baseline_failed", report["mutation_score_note"]
    assert m["mutants"] > 0, report["mutation_score_note"]
    assert report["sound"] == (m["killed"] + m["survived"] > 0 and not report["failed"]
                               and report["not_judged"] == [])
