"""challenge new / challenge check / deploy."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from api_imports import files_reaching_past_api
from benchtui.cli import main
from benchtui.runner.orchestrate import tree_digest

REPO = Path(__file__).resolve().parents[2]


def cli(capsys, *argv) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def wb(tmp_path) -> Path:
    root = tmp_path / "wb"
    for model in ("alpha", "beta", "gamma"):
        (root / "models" / model / "kv").mkdir(parents=True)
    (root / "models" / "alpha" / "kv" / "cache.py").write_text("x = 1\n")
    return root


def check_json(capsys, root: Path, cid: str, *extra) -> tuple[int, dict]:
    # A test of one other item passes --mutants 0: the mutation score is most of a
    # check's time, and test_new_scaffolds_a_plugin_that_check_proves_sound covers it.
    # One that judges no spread over seeds passes --seeds 1: each seed is a sandboxed run.
    code, out, err = cli(capsys, "--workbench", str(root), "challenge", "check", cid, "--json", "--seeds", "2", *extra)
    return code, json.loads(out)


def items(report: dict) -> dict:
    return {i["name"]: i for i in report["items"]}


def test_new_scaffolds_a_plugin_that_check_proves_sound(capsys, wb):
    code, out, _ = cli(capsys, "--workbench", str(wb), "challenge", "new", "my_task")
    assert code == 0 and "wrote" in out and "`benchtui deploy my_task` gives each model's folder its prompt" in out
    folder = wb / "challenges" / "my_task"
    assert {p.name for p in folder.iterdir()} >= {"challenge.toml", "PROMPT.md", "reference.py", "conformance.py",
                                                  "ADAPTER.md", "adapters"}
    # written against the public API alone, which the check below then loads
    assert files_reaching_past_api(folder) == []
    assert "from benchtui.api import" in (folder / "conformance.py").read_text()
    code, report = check_json(capsys, wb, "my_task")
    assert code == 0 and not report["failed"], report
    got = items(report)
    assert set(got) == {"files", "reference_passes", "checks_name_requirements", "requirements_quote_prompt",
                        "contracts_checked", "thresholds_outside_noise", "prompt_version"}
    # a new challenge has no contract table yet: nothing to enforce, said so
    assert got["contracts_checked"]["ok"] and "no contract table" in got["contracts_checked"]["message"]
    assert got["checks_name_requirements"]["details"]["checks"] == {
        "fixed_large_inputs": ["large_inputs"], "random_cases": ["softmax_rows"]}
    # The suite's strength on its own reference: a real audit (sandboxed), a figure beside the verdict.
    # Sound only with it measured: a check judged in part is not called sound.
    m = report["mutation"]
    if m.get("score") is None:
        assert "not measured" in report["mutation_score_note"], report
        assert not report["sound"] and report["not_judged"] == ["mutation_score"], report
    else:
        assert 0.0 <= m["score"] <= 1.0 and m["killed"] + m["survived"] + m["equivalent"] == m["mutants"] > 0, m
        assert report["sound"] and report["not_judged"] == [], report
    # The text form says the same; --mutants 0 leaves the audit out and names it not judged.
    code, out, _ = cli(capsys, "--workbench", str(wb), "challenge", "check", "my_task", "--seeds", "1", "--mutants", "0")
    last = out.rstrip().splitlines()[-1]
    assert code == 0 and "--mutants 0" in out and "not everything was judged" in last and last.endswith(": mutation_score")


def test_new_refuses_a_bad_id_and_an_existing_folder(capsys, wb):
    assert cli(capsys, "--workbench", str(wb), "challenge", "new", "Bad-Id")[0] == 2
    assert cli(capsys, "--workbench", str(wb), "challenge", "new", "ok_id")[0] == 0
    code, _, err = cli(capsys, "--workbench", str(wb), "challenge", "new", "ok_id")
    assert code == 2 and "already exists" in err and len(err.strip().splitlines()) == 1


def test_new_from_a_prompt_uses_it_and_check_asks_for_its_requirements(capsys, wb, tmp_path):
    prompt = tmp_path / "PROMPT.md"
    prompt.write_text("# Row max in NumPy\n\nReturn the max of each row.\n")
    assert cli(capsys, "--workbench", str(wb), "challenge", "new", "rowmax", "--from", str(prompt))[0] == 0
    folder = wb / "challenges" / "rowmax"
    assert (folder / "PROMPT.md").read_text() == prompt.read_text()
    assert 'title = "Row max in NumPy"' in (folder / "challenge.toml").read_text()
    code, report = check_json(capsys, wb, "rowmax", "--seeds", "1")
    got = items(report)
    assert code == 1 and not report["sound"]
    assert not got["requirements_quote_prompt"]["ok"]
    assert got["requirements_quote_prompt"]["details"]["not_quoted"] == ["softmax_rows", "large_inputs"]
    assert got["reference_passes"]["ok"] and got["prompt_version"]["ok"]


def copy_top_p(root: Path) -> Path:
    folder = root / "challenges" / "top_p"
    shutil.copytree(REPO / "challenges" / "top_p", folder)
    return folder


def test_check_fails_a_check_that_names_no_requirement(capsys, wb):
    folder = copy_top_p(wb)
    suite = folder / "conformance.py"
    text = suite.read_text()
    suite.write_text(text.replace(', requires=("batched",)', "", 1))
    code, report = check_json(capsys, wb, "top_p", "--seeds", "1", "--mutants", "0")
    item = items(report)["checks_name_requirements"]
    assert code == 1 and not item["ok"]
    assert "checks naming no requirement: rows_independent" in item["message"]
    assert "requirements no check tests: batched" in item["message"]


def test_check_fails_a_reference_that_fails_its_suite(capsys, wb):
    folder = copy_top_p(wb)
    ref = folder / "reference.py"
    # Dropping the crossing token empties the set for a tiny p: NaN rows. (The
    # reference is also the oracle, so only what a check tests beyond the
    # oracle, such as finiteness or row sums, can catch a wrong reference.)
    ref.write_text(ref.read_text().replace("before < p", "before + ranked <= p"))
    code, report = check_json(capsys, wb, "top_p", "--seeds", "1", "--mutants", "0")
    item = items(report)["reference_passes"]
    assert code == 1 and not item["ok"] and "fixed_tiny_p: fail" in item["message"]


def test_check_fails_a_threshold_inside_the_reference_noise(capsys, wb):
    # The reference's rows sum to 1 within about 2e-16: a tolerance of 1e-15 sits
    # within 10x of that noise, so an answer as good as the reference could fail.
    folder = copy_top_p(wb)
    toml = folder / "challenge.toml"
    toml.write_text(re.sub(r"(?m)^tol = .*$", "tol = 1e-15", toml.read_text()))
    code, report = check_json(capsys, wb, "top_p", "--mutants", "0")
    item = items(report)["thresholds_outside_noise"]
    assert code == 1 and not item["ok"] and "rows_sum_to_one" in item["message"]
    assert item["details"]["tolerances"]["rows_sum_to_one"]["reference_worst"] > 0
    # Loosened again, the same check passes: the margin is what failed.
    toml.write_text(re.sub(r"(?m)^tol = .*$", "tol = 1e-9", toml.read_text()))
    assert items(check_json(capsys, wb, "top_p", "--mutants", "0")[1])["thresholds_outside_noise"]["ok"]


def test_check_fails_a_prompt_edited_without_its_hash(capsys, wb):
    folder = copy_top_p(wb)
    (folder / "PROMPT.md").write_text((folder / "PROMPT.md").read_text() + "\nOne more sentence.\n")
    code, report = check_json(capsys, wb, "top_p", "--seeds", "1", "--mutants", "0")
    item = items(report)["prompt_version"]
    assert code == 1 and not item["ok"] and re.fullmatch(r"[0-9a-f]{64}", item["details"]["sha256"])


def test_deploy_writes_missing_prompts_and_never_touches_an_answer(capsys, wb):
    folder = copy_top_p(wb)
    models = wb / "models"
    (models / "beta" / "top_p").mkdir()
    (models / "beta" / "top_p" / "PROMPT.md").write_text("an older prompt\n")
    (models / "alpha" / "top_p").mkdir()
    (models / "alpha" / "top_p" / "answer.py").write_text("def top_p_filter(l, p):\n    return l\n")
    before = tree_digest(models / "alpha" / "top_p")
    code, out, _ = cli(capsys, "--workbench", str(wb), "deploy", "top_p", "--json")
    got = {r["model"]: r for r in json.loads(out)["models"]}
    assert code == 0
    assert got["alpha"]["action"] == "skipped" and "holds an answer (answer.py)" in got["alpha"]["reason"]
    assert tree_digest(models / "alpha" / "top_p") == before and not (models / "alpha" / "top_p" / "PROMPT.md").exists()
    assert got["beta"]["action"] == "up_to_date" and "differs" in got["beta"]["reason"]
    assert (models / "beta" / "top_p" / "PROMPT.md").read_text() == "an older prompt\n"
    assert got["gamma"] == {"model": "gamma", "folder": "models/gamma/top_p", "action": "written",
                            "written": ["PROMPT.md"], "reason": ""}
    assert (models / "gamma" / "top_p" / "PROMPT.md").read_bytes() == (folder / "PROMPT.md").read_bytes()
    # Again: nothing left to write.
    code, out, _ = cli(capsys, "--workbench", str(wb), "deploy", "top_p", "--json")
    assert [r["action"] for r in json.loads(out)["models"]] == ["skipped", "up_to_date", "up_to_date"]


def test_deploy_hands_out_data_files_and_takes_models_by_name(capsys, wb):
    code, out, _ = cli(capsys, "--workbench", str(wb), "deploy", "Ternary Training", "-m", "gamma")
    target = wb / "models" / "gamma" / "ternary_training"
    assert code == 0 and "written to 1 of 1" in out
    assert sorted(p.name for p in target.iterdir()) == ["PROMPT.md", "train_data.txt"]
    assert not (wb / "models" / "beta" / "ternary_training").exists()
    code, _, err = cli(capsys, "--workbench", str(wb), "deploy", "top_q")
    assert code == 2 and "unknown challenge" in err
    code, _, err = cli(capsys, "--workbench", str(wb), "deploy", "kv", "-m", "nobody")
    assert code == 2 and "unknown model(s) nobody" in err


def test_margins_judge_errors_by_ratio_and_quantities_by_spread():
    from benchtui.authoring.soundness import check_margins

    def runs(values_by_seed):
        return {seed: {"checks": [{"name": n, "verdict": "pass", "value": v, "threshold": t}
                                  for n, (v, t) in checks.items()]}
                for seed, checks in values_by_seed.items()}

    # an error 1000x inside its tolerance; a ratio near 2 with threshold 4 and a small spread
    ok = check_margins(runs({1: {"err": (1e-12, 1e-9), "ratio": (1.95, 4.0)},
                             2: {"err": (2e-12, 1e-9), "ratio": (1.99, 4.0)}}), 10.0)
    assert ok.ok and ok.details["tolerances"]["err"]["rule"] == "ratio"
    assert ok.details["tolerances"]["ratio"]["rule"] == "spread"
    assert "closest: ratio, 2.01x its worst value" in ok.message
    # a reference exact on every seed: said in words, not as an infinite ratio
    exact = check_margins(runs({1: {"err": (0.0, 1e-9)}, 2: {"err": (0.0, 1e-9)}}), 10.0)
    assert exact.ok and "exact (0) on every one" in exact.message and "inf" not in exact.message
    # the same ratio with no spread measured, and an error 5x inside: neither rule vouches
    bad = check_margins(runs({1: {"err": (2e-10, 1e-9), "ratio": (1.99, 4.0)},
                              2: {"err": (2e-10, 1e-9), "ratio": (1.99, 4.0)}}), 10.0)
    assert not bad.ok and "err (" in bad.message and "ratio (" in bad.message
    # a floor the reference clears from above is not judged as a tolerance; with nothing
    # else measured the item itself is not judged (no margin cleared is no success)
    floor = check_margins(runs({1: {"tokens": (0.9, 0.5)}}), 10.0)
    assert floor.ok is None and floor.details["floors_not_judged"] == ["tokens"]
    assert floor.message.startswith("not judged:")


def test_requirements_declared_not_checkable_need_no_check_and_quote_by_their_words():
    from benchtui.authoring.soundness import check_requirements
    from benchtui.challenges.definition import load_challenge

    challenge = load_challenge(Path(__file__).resolve().parents[2] / "challenges" / "backwards")
    declared = challenge.raw["requirements"]
    checkable = [r for r, spec in declared.items() if not (isinstance(spec, dict) and spec.get("checkable") is False)]
    assert len(checkable) < len(declared)  # the bundled table declares some not checkable, with a reason
    checks = [{"name": f"c_{r}", "verdict": "pass", "requires": [r]} for r in checkable]
    items = {i.name: i for i in check_requirements(challenge, checks)}
    assert items["checks_name_requirements"].ok, items["checks_name_requirements"].message
    quoted = items["requirements_quote_prompt"]
    # declared as {words, checkable, reason}: its words are what is looked for in PROMPT.md
    assert "own_gradient_check" not in quoted.details["not_quoted"]
    # a checkable requirement left untested is still named
    items = {i.name: i for i in check_requirements(challenge, checks[1:])}
    assert not items["checks_name_requirements"].ok and checkable[0] in items["checks_name_requirements"].message


def test_a_threshold_near_the_reference_passes_only_with_its_reason_shown():
    from benchtui.authoring.soundness import check_margins

    runs = {seed: {"checks": [{"name": "peak", "verdict": "pass", "value": 0.1, "threshold": 0.2}]} for seed in (1, 2)}
    assert not check_margins(runs, 10.0).ok
    said = check_margins(runs, 10.0, {"peak": "separates O(N) from O(N^2)"})
    assert said.ok and "near the reference by design: peak (2.0x: separates O(N) from O(N^2))" in said.message
    assert said.details["tolerances"]["peak"]["rule"] == "declared"


@pytest.mark.parametrize("cid", sorted(p.parent.name for p in (REPO / "challenges").glob("*/challenge.toml")))
def test_every_bundled_requirement_quotes_the_bundled_prompt(cid):
    from benchtui.authoring.soundness import check_requirements
    from benchtui.challenges.definition import load_challenge

    items = {i.name: i for i in check_requirements(load_challenge(REPO / "challenges" / cid), [])}
    assert items["requirements_quote_prompt"].ok, items["requirements_quote_prompt"].message


def test_a_prompt_version_words_a_requirement_its_own_way():
    from benchtui.challenges import coverage
    from benchtui.challenges.definition import load_challenge

    challenge = load_challenge(REPO / "challenges" / "beam_search")
    ours = {r["id"]: r["words"] for r in coverage.requirements(challenge, "benchtui")}
    published = {r["id"]: r["words"] for r in coverage.requirements(challenge, "published")}
    assert ours["written"].startswith("explain the complexity per step")
    assert published["written"] == challenge.raw["requirements"]["written"]["words"]
    assert ours["stopping"] == published["stopping"]  # not reworded: the [requirements] words


def test_a_cuda_challenge_is_checked_as_far_as_this_machine_can(capsys, wb):
    shutil.copytree(REPO / "challenges" / "fuse", wb / "challenges" / "fuse")
    code, report = check_json(capsys, wb, "fuse", "--mutants", "0")
    got = items(report)
    assert code == 0 and not report["failed"] and not report["sound"] and report["not_judged"] == [
        "reference_passes", "checks_name_requirements", "thresholds_outside_noise", "mutation_score"]
    assert got["reference_passes"]["ok"] is None and "not an answer nvcc builds" in got["reference_passes"]["message"]
    assert got["requirements_quote_prompt"]["ok"] and got["prompt_version"]["ok"]


def test_new_refuses_a_bundled_id_without_force(capsys, wb):
    """A workbench challenge with a bundled id replaces the bundled suite for every answer."""
    code, _, err = cli(capsys, "--workbench", str(wb), "challenge", "new", "kv")
    assert code == 2 and "kv is a bundled challenge" in err and "--force" in err
    assert not (wb / "challenges").exists()
    code, out, _ = cli(capsys, "--workbench", str(wb), "challenge", "new", "kv", "--force")
    assert code == 0 and "it replaces the bundled kv" in out
    assert (wb / "challenges" / "kv" / "challenge.toml").is_file()
    # the demo's own example (bundled = false) replaces nothing elsewhere: no --force needed
    assert cli(capsys, "--workbench", str(wb), "challenge", "new", "top_p")[0] == 0


@pytest.mark.sandbox
def test_a_verdict_of_a_removed_workbench_suite_is_not_current(capsys, tmp_path):
    """A run judged by the workbench's own kv stays history once that folder is gone: the
    matrix, results, list and show no longer present its verdict as the answer's."""
    from benchtui.store import queries
    from benchtui.store.database import Store
    from benchtui.workbench.layout import find_workbench

    demo_workbench = tmp_path / "wb"
    shutil.copytree(REPO / "models" / "demo-careful" / "kv", demo_workbench / "models" / "demo-careful" / "kv")
    wb = ("--workbench", str(demo_workbench))
    own = demo_workbench / "challenges" / "kv"
    assert cli(capsys, *wb, "challenge", "new", "kv", "--force")[0] == 0
    assert cli(capsys, *wb, "run", "-m", "demo-careful", "-c", "kv", "--no-self-check")[0] == 0
    code, out, _ = cli(capsys, *wb, "results")
    assert "demo-careful/kv  run #1" in out  # while the workbench's kv is in place, its verdict is current
    shutil.rmtree(own)
    code, out, _ = cli(capsys, *wb, "results")
    line = next(x for x in out.splitlines() if "demo-careful/kv" in x)
    assert line.startswith("not_run") and "challenges/kv, which is gone" in line
    with Store(find_workbench(str(demo_workbench), None, demo_workbench).store_path) as store:
        assert queries.load_matrix(store).cells["demo-careful", "kv"].verdict == "not_run"
    code, out, _ = cli(capsys, *wb, "show", "demo-careful", "kv")
    assert "not the current verdict" in out


def test_new_outside_a_workbench_is_refused_in_one_line_and_writes_nothing(capsys, tmp_path):
    # written there, it would be a challenge `challenge check` then refuses and no run finds
    code, out, err = cli(capsys, "--workbench", str(tmp_path), "challenge", "new", "my_task")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "challenge new writes into a workbench, where `challenge check` and `run` find it" in err
    assert "`benchtui model new NAME`" in err and "then `benchtui challenge new my_task` there" in err
    assert list(tmp_path.iterdir()) == []
