"""Requirements and what a verdict covers (engine/challenges/coverage.py): each check
names the prompt's requirements it tests; a pass that leaves a checkable
requirement not exercised is `partial`, shown as "partial: N of M requirements"
by run, results, show and the exports."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from benchtui.challenges import coverage
from benchtui.cli import main
from benchtui.records import verdicts as V
from benchtui.records.coverage import describe, summary

REPO = Path(__file__).resolve().parents[2]


class FakeChallenge:
    def __init__(self, raw):
        self.raw = raw


RAW = {"requirements": {"a": "does A", "b": "does B", "c": {"words": "runs on a GPU", "checkable": False,
                                                              "reason": "read, not run"}},
       "prompts": {"short": {"requirements": ["a"]}}}


def check(name, verdict, requires, **details):
    return {"name": name, "verdict": verdict, "message": "", "requires": list(requires), "details": details}


def test_prompt_version_narrows_the_requirements():
    assert [r["id"] for r in coverage.requirements(FakeChallenge(RAW), None)] == ["a", "b", "c"]
    assert [r["id"] for r in coverage.requirements(FakeChallenge(RAW), "short")] == ["a"]
    assert [r["id"] for r in coverage.requirements(FakeChallenge(RAW), "unknown")] == ["a", "b", "c"]


def test_each_requirement_gets_pass_fail_or_not_exercised_with_a_reason():
    reqs = coverage.requirements(FakeChallenge(RAW))
    cov = {c["id"]: c for c in coverage.compute(reqs, [check("x", V.PASS, "a"), check("y", V.PASS, "b")])}
    assert (cov["a"]["status"], cov["b"]["status"], cov["c"]["status"]) == ("pass", "pass", "not_exercised")
    assert cov["c"]["reason"] == "not checkable: read, not run" and cov["a"]["checks"] == ["x"]
    cov = {c["id"]: c for c in coverage.compute(reqs, [check("x", V.PASS, "a"), check("y", V.FAIL, "ab")])}
    assert (cov["a"]["status"], cov["b"]["status"]) == ("fail", "fail")
    cov = {c["id"]: c for c in coverage.compute(reqs, [check("x", V.PASS, "a")])}
    assert cov["b"]["status"] == "not_exercised" and "no check reached it" in cov["b"]["reason"]
    cov = {c["id"]: c for c in coverage.compute(reqs, [check("x", V.PASS, "a"), check("g", V.SKIPPED, "b")])}
    assert cov["b"]["status"] == "not_exercised" and "g: skipped" in cov["b"]["reason"]


def test_a_requirement_no_check_reached_says_what_ended_the_run():
    """After a timeout the requirements left are unreached because of the time limit, not
    for want of a binding (ternary_training with --timeout 1 used to say "no binding for it")."""
    reqs = coverage.requirements(FakeChallenge(RAW), None)
    timed_out = [check("a_check", V.PASS, ["a"]),
                 {"name": "b_check", "verdict": V.TIMEOUT, "message": "stopped by the run's time limit (1 s)"},
                 {"name": "run", "verdict": V.TIMEOUT, "message": "killed after 1.0 s"}]
    reason = {r["id"]: r["reason"] for r in coverage.compute(reqs, timed_out)}["b"]
    assert "time limit" in reason and "binding" not in reason
    unbound = [{"name": "bind", "verdict": V.UNBOUND, "message": "looked for f in x.py"}]
    assert {r["id"]: r["reason"] for r in coverage.compute(reqs, unbound)}["b"] == "no check reached it (no binding for it)"
    died = [{"name": "conformance", "verdict": V.ERROR, "message": "RuntimeError: boom"}]
    assert "stopped on an error" in {r["id"]: r["reason"] for r in coverage.compute(reqs, died)}["a"]


def test_a_reason_many_checks_share_is_said_once(capsys):
    """A CPU-only fuse run skips every check for one reason: the requirements and the
    run's output say it once, not once per check (about 40 times per answer)."""
    gpu = "needs an NVIDIA GPU: this run's backend is cpu, not cuda"
    skipped = [check(f"topk[{i}]", V.SKIPPED, ["a", "b"]) | {"message": gpu} for i in range(11)]
    reqs = coverage.requirements(FakeChallenge(RAW), None)
    cov = coverage.compute(reqs, skipped)
    assert [r["reason"].count(gpu) for r in cov if r["id"] in ("a", "b")] == [1, 1]
    mixed = coverage.compute(reqs, skipped + [check("bind", V.UNBOUND, ["a"]) | {"message": "looked for f"}])
    assert mixed[0]["reason"] == f"11 checks: skipped ({gpu}); bind: unbound (looked for f)"
    from benchtui.commands.run_cmds import print_record

    print_record({"verdict": V.SKIPPED, "model": "m", "challenge": "fuse", "backend": "cpu", "duration_s": 1.0,
                  "coverage": cov, "checks": skipped + [check("speed", V.SKIPPED, []) | {"message": gpu}]})
    out = capsys.readouterr().out
    assert out.count("needs an NVIDIA GPU") == 2 and len(out.splitlines()) <= 6
    assert "12 checks, topk[0] to speed" in out


def test_a_requirement_met_by_the_adapter_is_not_exercised_and_the_pass_is_partial():
    reqs = coverage.requirements(FakeChallenge(RAW))
    checks = [check("x", V.PASS, "ab", not_exercised={"b": "the adapter loops over the sequences"}),
              check("y", V.PASS, "b")]  # a pass elsewhere does not undo what the adapter did
    verdict, cov = coverage.for_run(FakeChallenge(RAW), None, checks, V.PASS)
    by_id = {c["id"]: c for c in cov}
    assert verdict == V.PARTIAL
    assert by_id["a"]["status"] == "pass" and by_id["b"]["status"] == "not_exercised"
    assert "adapter loops" in by_id["b"]["reason"]
    assert describe(verdict, cov) == "partial: 1 of 2 checkable requirements met, 1 not checkable"
    # a failure stays a failure; a not-checkable requirement alone never makes a pass partial
    assert coverage.apply(V.FAIL, cov) == V.FAIL
    full = coverage.compute(reqs, [check("x", V.PASS, "ab")])
    assert coverage.apply(V.PASS, full) == V.PASS and summary(full) == "2 of 2 checkable requirements met, 1 not checkable"
    assert summary(coverage.compute(coverage.requirements(FakeChallenge(RAW), "short"), [])) == "0 of 1 requirements met"


FAST = {"memory_steps": "64", "speed_lengths": "[20, 12]", "speed_steps": "4", "timing_budget_s": "0.05"}


@pytest.mark.sandbox
def test_run_results_show_and_export_carry_the_coverage(tmp_path, capsys):
    root = tmp_path / "wb"
    shutil.copytree(REPO / "challenges", root / "challenges")
    toml = root / "challenges" / "kv" / "challenge.toml"
    text = toml.read_text()
    for key, value in FAST.items():
        text = re.sub(rf"(?m)^{key} = .*$", f"{key} = {value}", text)
    # a requirement no check names: the reference's pass becomes partial
    toml.write_text(text.replace("[requirements]\n", '[requirements]\nstreams = "stream tokens to a socket"\n', 1))
    answer = root / "models" / "ref" / "kv"
    answer.mkdir(parents=True)
    shutil.copy(REPO / "challenges" / "kv" / "reference.py", answer / "cache.py")
    wb = ["--workbench", str(root)]
    assert main([*wb, "run", "-m", "ref", "-c", "kv", "--json", "--no-self-check"]) == 0
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    by_id = {c["id"]: c for c in run["coverage"]}
    assert run["verdict"] == "partial" and run["covers"] == "6 of 7 checkable requirements met, 1 not checkable"
    assert by_id["streams"]["status"] == "not_exercised" and by_id["incremental_decode"]["status"] == "pass"
    assert "decode_matches_full_attention" in by_id["incremental_decode"]["checks"]
    assert by_id["no_recompute"]["reason"].startswith("not checkable")
    from benchtui.store.database import Store

    with Store(root / "store.db") as store:
        (row,) = store.query("select details from checks where name = 'padding_isolated'")
    assert json.loads(row["details"])["requires"] == ["variable_lengths", "inputs_unchanged"]
    assert main([*wb, "results"]) == 0
    assert "partial: 6 of 7 checkable requirements met, 1 not checkable" in capsys.readouterr().out
    assert main([*wb, "show", "ref", "kv", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)["latest_run"]
    assert shown["covers"] == "6 of 7 checkable requirements met, 1 not checkable" and len(shown["coverage"]) == 8
    assert main([*wb, "export", "json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["verdicts"]
    assert (row["verdict"], row["covers"]) == ("partial", "6 of 7 checkable requirements met, 1 not checkable")
