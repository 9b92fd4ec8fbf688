"""Without the shared benchmark: prompt versions, several
implementations in one folder, missing dependencies, the beam mock's method
names, whitespace-blind prompt drift and unique-prefix model names."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from benchtui.challenges import prompts
from benchtui.challenges.definition import BUNDLED_CHALLENGES, load_challenge
from benchtui.grading.judge_import import import_text
from benchtui.records import verdicts as V
from benchtui.records.job import Job, host_thresholds
from benchtui.runner.local import local_answer_process
from benchtui.runner.orchestrate import run_answers
from benchtui.store.database import Store
from benchtui.verify.execute import execute, load_module, verdict_of
from benchtui.workbench.layout import find_workbench
from benchtui.workbench.scan import scan_workbench

REPO = Path(__file__).resolve().parents[2]
DFLASH = BUNDLED_CHALLENGES / "dflash_verify"
REFERENCE = (DFLASH / "reference.py").read_text()
# Stops at the first rejected node in topological order: exact greedy decoding,
# fewer tokens per cycle (what the published DFlash prompt asks for).
STOP_EARLY = '''
import numpy as np


def build_tree_mask(prompt_len, tree_parents):
    P, N = prompt_len, len(tree_parents)
    m = np.zeros((P + N, P + N), dtype=bool)
    m[:P, :P] = np.tril(np.ones((P, P), dtype=bool))
    m[P:, :P] = True
    for i, parent in enumerate(tree_parents):
        m[P + i, P + i] = True
        while parent >= 0:
            m[P + i, P + parent] = True
            parent = tree_parents[parent]
    return m


def verify_and_accept(prompt_tokens, tree_tokens, tree_parents, target_model, temperature=0):
    P = len(prompt_tokens)
    logits = np.asarray(target_model.forward(list(prompt_tokens) + list(tree_tokens), build_tree_mask(P, tree_parents)))
    out, last = [], -1
    for i, parent in enumerate(tree_parents):
        if parent != last:
            continue
        want = int(np.argmax(logits[P - 1 if parent < 0 else P + parent]))
        if tree_tokens[i] != want:
            return out + [want]
        out.append(int(tree_tokens[i]))
        last = i
    return out + [int(np.argmax(logits[P - 1 if last < 0 else P + last]))]
'''


def run_job(folder: Path, cid: str = "dflash_verify", **kw) -> tuple[str, dict]:
    challenge = load_challenge(BUNDLED_CHALLENGES / cid)
    with local_answer_process(folder) as (peer, monitor):
        suite = execute(Job(challenge_id=cid, challenge_dir=str(challenge.path), answer_dir=str(folder), model="t",
                            seed=7, thresholds=host_thresholds({**challenge.thresholds, "golden_trees": 60, "mask_trees": 20}),
                            forbidden_imports=list(challenge.forbidden_imports), **kw), peer=peer, monitor=monitor)
    return verdict_of(suite), {c.name: c for c in suite.checks}


def stop_early_answer(tmp_path: Path, prompt: str | None) -> Path:
    folder = tmp_path / "answer"
    folder.mkdir()
    (folder / "dflash.py").write_text(STOP_EARLY)
    if prompt is not None:
        (folder / "PROMPT.md").write_text(prompt)
    return folder


def pi_session(*user_messages: str) -> str:
    """A pi session transcript (the published benchmark's format): each user
    message answered by the assistant."""
    import json

    lines = [{"type": "session", "version": 3, "id": "s1", "timestamp": "2026-04-22T22:57:58.436Z", "cwd": "."}]
    parent = None
    for n, text in enumerate(user_messages):
        for role, said in (("user", text), ("assistant", "done")):
            lines.append({"type": "message", "id": f"{role}{n}", "parentId": parent,
                          "timestamp": f"2026-04-22T22:5{n}:00.000Z",
                          "message": {"role": role, "content": [{"type": "text", "text": said}]}})
            parent = f"{role}{n}"
    return "".join(json.dumps(line) + "\n" for line in lines)


# -- prompt versions ----------------------------------------------------------------

def test_prompt_versions_are_recognised_whitespace_blind(tmp_path):
    ch = load_challenge(DFLASH)
    ours = (DFLASH / "PROMPT.md").read_text()
    folder = tmp_path / "a"
    folder.mkdir()
    (folder / "PROMPT.md").write_text("\n\n" + ours.replace("\n", "  \n").rstrip() + "\n\n\n")
    assert prompts.answer_prompt(ch, folder)[0] == "benchtui"
    (folder / "PROMPT.md").write_text(ours + "\nOne more requirement.\n")
    version, sha = prompts.answer_prompt(ch, folder)
    assert version is None and sha
    (folder / "PROMPT.md").unlink()
    assert prompts.answer_prompt(ch, folder) == (None, None)
    assert set(prompts.version_checks(ch)) == {"random_trees_match_reference", "wrong_sibling_no_replacement",
                                               "second_root_path", "all_correct_chain", "smallest_inputs_bonus",
                                               "empty_tree", "own_target_contract"}


def test_a_prompt_version_may_relax_a_threshold():
    kv = load_challenge(BUNDLED_CHALLENGES / "kv")
    assert kv.thresholds["tol"] == 1e-8  # ours asks for float64 agreement
    assert prompts.version_thresholds(kv, "published") == {"tol": 2e-3}  # names no precision
    assert prompts.version_thresholds(kv, "benchtui") == {} and prompts.version_thresholds(kv, None) == {}


def test_every_challenge_knows_its_own_prompt():
    for d in sorted(BUNDLED_CHALLENGES.iterdir()):
        if (d / "challenge.toml").is_file():
            ch = load_challenge(d)
            assert prompts.answer_prompt(ch, d)[0] == "benchtui", d.name


def test_check_of_another_prompt_version_is_info_with_its_would_be_verdict(tmp_path):
    ch = load_challenge(DFLASH)
    folder = stop_early_answer(tmp_path, None)
    versions = prompts.version_checks(ch)
    # Judged against our prompt (longest accepted path), stopping early fails.
    verdict, checks = run_job(folder, prompt_version="benchtui", version_checks=versions)
    assert verdict == V.FAIL
    assert checks["second_root_path"].verdict == V.FAIL
    assert checks["golden_rule"].verdict == V.PASS
    # Judged against the published prompt (stop at the first rejection), it passes;
    # what that prompt leaves open is a figure.
    verdict, checks = run_job(folder, prompt_version="published", version_checks=versions)
    assert verdict == V.PASS
    c = checks["second_root_path"]
    assert c.verdict == V.INFO and c.details["would_be"]["verdict"] == V.FAIL
    assert "not asked by this answer's prompt" in c.message
    assert checks["all_correct_chain_accepted"].verdict == V.PASS
    figure = checks["tokens_per_cycle"]
    assert figure.verdict == V.INFO and 0 < figure.value < 1
    assert figure.details["appended"] < figure.details["most_possible"]
    # Unknown or missing prompt: universal checks only.
    verdict, checks = run_job(folder, prompt_version=None, version_checks=versions)
    assert verdict == V.PASS and checks["random_trees_match_reference"].verdict == V.INFO
    # A universal check still fails whatever the prompt: the golden rule.
    bad = tmp_path / "bad"
    shutil.copytree(folder, bad)
    (bad / "dflash.py").write_text(STOP_EARLY.replace("return out + [want]", "return out + [want, want]"))
    verdict, checks = run_job(bad, prompt_version="published", version_checks=versions)
    assert verdict == V.FAIL and checks["golden_rule"].verdict == V.FAIL


def test_reference_keeps_full_tokens_per_cycle(tmp_path):
    folder = tmp_path / "ref"
    folder.mkdir()
    (folder / "spec.py").write_text(REFERENCE)
    verdict, checks = run_job(folder)
    assert verdict == V.PASS and checks["tokens_per_cycle"].value == 1.0


# -- several implementations ----------------------------------------------------------

def test_each_implementation_runs_under_its_name_and_the_worst_counts(tmp_path):
    folder = stop_early_answer(tmp_path, None)
    (folder / "dflash_verify.py").write_text(STOP_EARLY.replace("return out + [want]", "return out + [want, want]"))
    (folder / "test_dflash.py").write_text(STOP_EARLY)  # the answer's own tests are never an implementation
    verdict, checks = run_job(folder, duplicates={"dflash.py": "same content (sha256 0123) as other/dflash_verify/dflash.py"},
                              prompt_version="published", version_checks=prompts.version_checks(load_challenge(DFLASH)))
    assert verdict == V.FAIL
    assert checks["dflash.py::golden_rule"].verdict == V.PASS
    assert checks["dflash_verify.py::golden_rule"].verdict == V.FAIL
    assert checks["dflash_verify.py::golden_rule"].details["implementation"] == "dflash_verify.py"
    assert not any(n.startswith("test_dflash.py") for n in checks)
    summary = checks["implementations"]
    assert summary.verdict == V.INFO and summary.details["files"] == ["dflash.py", "dflash_verify.py"]
    assert summary.details["verdicts"] == {"dflash.py": V.PASS, "dflash_verify.py": V.FAIL}
    assert "dflash.py: pass (a copy: same content" in summary.message
    assert "forbidden_imports" in checks  # per answer, not per file


def test_single_implementation_keeps_plain_check_names(tmp_path):
    verdict, checks = run_job(stop_early_answer(tmp_path, None))
    assert "golden_rule" in checks and "implementations" not in checks
    assert not any("::" in n for n in checks)


# -- missing dependencies ---------------------------------------------------------------

def test_a_package_the_sandbox_lacks_is_missing_dependency(tmp_path):
    folder = tmp_path / "dep"
    folder.mkdir()
    (folder / "dflash.py").write_text(REFERENCE + "\nimport benchtui_no_such_pkg.sub\n")
    verdict, checks = run_job(folder)
    assert verdict == V.MISSING_DEPENDENCY
    assert checks["conformance"].details["package"] == "benchtui_no_such_pkg"
    assert V.SEVERITY[V.SKIPPED] < V.SEVERITY[V.MISSING_DEPENDENCY] < V.SEVERITY[V.UNBOUND] < V.SEVERITY[V.FAIL]


def test_answer_raising_its_own_error_is_still_error(tmp_path):
    folder = tmp_path / "own"
    folder.mkdir()
    (folder / "dflash.py").write_text(REFERENCE.replace("def verify_and_accept(", "def _unused(") +
                                      "\n\ndef verify_and_accept(*a):\n    raise RuntimeError('mine')\n")
    verdict, checks = run_job(folder)
    assert verdict == V.ERROR and checks["golden_rule"].verdict == V.ERROR


# -- the beam mock offers the names answers call ------------------------------------------

def test_beam_mock_offers_get_log_probs():
    h = load_module(BUNDLED_CHALLENGES / "beam_search" / "harness.py", "prompt_versions_beam_harness")
    core = h.MockCore(50, 3, 0)
    lm = h.MockLM(core, h.Convention())
    ctx = [1, 2, 3]
    want = core.logprobs(ctx)
    for name in ("get_log_probs", "log_probs", "logprobs"):
        got = getattr(lm, name)(np.array(ctx))
        assert got.shape == (50,) and np.allclose(got, want), name
    # all positions, as before; logits: the log-probs plus a constant of the context
    shift = lm.forward(np.array(ctx))[-1] - want
    assert np.ptp(shift) < 1e-12 and np.allclose(shift, core.offset(ctx))


# -- scan and import ---------------------------------------------------------------------

def test_prompt_drift_ignores_whitespace_only_differences(tmp_path):
    root = tmp_path / "wb"
    shutil.copytree(REPO / "challenges", root / "challenges")
    text = (DFLASH / "PROMPT.md").read_text()
    for model, body in (("a", text), ("b", text), ("c", text.rstrip("\n")), ("d", text + "\nAlso stream the output.\n")):
        folder = root / "models" / model / "dflash_verify"
        folder.mkdir(parents=True)
        (folder / "PROMPT.md").write_text(body)
        (folder / "x.py").write_text(f"X = {model!r}\n")
    wb = find_workbench(str(root), None, Path.cwd())
    with Store(wb.store_path) as store:
        result = scan_workbench(wb, store, index_transcripts=False)
    drift = {w.model for w in result.warnings if w.kind == "prompt_drift"}
    assert drift == {"d"}


def test_import_maps_a_unique_prefix_and_lists_it(tmp_path):
    root = tmp_path / "wb"
    shutil.copytree(REPO / "challenges", root / "challenges")
    for model in ("minimax-m2.7", "qwen36", "qwen3-coder"):
        (root / "models" / model / "kv").mkdir(parents=True)
        (root / "models" / model / "kv" / "a.py").write_text("A = 1\n")
    wb = find_workbench(str(root), None, Path.cwd())
    md = ("| Challenge | MiniMax | Qwen |\n|---|---|---|\n| KV-Cache | B- | A |\n")
    with Store(wb.store_path) as store:
        scan_workbench(wb, store, index_transcripts=False)
        result = import_text(store, md, grader="judge", dry_run=True)
    assert {"kind": "model", "name": "MiniMax", "to": "minimax-m2.7", "how": "prefix"} in result.mapped
    assert result.unmapped == ["model Qwen"]  # two models start with it: never guessed
    assert result.imported == 1


# -- through the sandbox: the run records its prompt version --------------------------------

@pytest.mark.sandbox
def test_run_records_prompt_version_and_show_says_it(tmp_path, capsys):
    import json

    from benchtui.cli import main

    root = tmp_path / "wb"
    shutil.copytree(REPO / "challenges", root / "challenges")
    text = (DFLASH / "PROMPT.md").read_text()
    for model, prompt in (("ours", text + "\n\n"), ("unknown", None), ("session", None), ("chatted", None),
                          ("later", None)):
        folder = root / "models" / model / "dflash_verify"
        folder.mkdir(parents=True)
        (folder / "spec.py").write_text(REFERENCE)
        if prompt is not None:
            (folder / "PROMPT.md").write_text(prompt)
    # no PROMPT.md, but the session's first user message is a known prompt (re-wrapped),
    # or a prompt no version knows
    said = {"session": [" ".join(text.split())], "chatted": ["write a tree verifier, please"],
            "later": ["/init", text]}  # a command first, then the prompt
    for model, messages in said.items():
        (root / "models" / model / "dflash_verify" / "session.jsonl").write_text(pi_session(*messages))
    wb = find_workbench(str(root), None, Path.cwd())
    with Store(wb.store_path) as store:
        scan_workbench(wb, store, index_transcripts=False)
    models = ["ours", "unknown", "session", "chatted", "later"]
    events = run_answers(wb, [(m, "dflash_verify") for m in models], jobs=2, seed=3, self_check=False)
    assert {e.model: e.verdict for e in events} == {m: V.PASS for m in models}
    assert main(["--workbench", str(root), "show", "session", "dflash_verify", "--json"]) == 0
    run = json.loads(capsys.readouterr().out)["latest_run"]
    checks = {c["name"]: c for c in run["checks"]}
    assert run["prompt_version"] == "benchtui" and checks["second_root_path"]["verdict"] == V.PASS
    assert checks["prompt"]["verdict"] == V.INFO and "session.jsonl's first user message" in checks["prompt"]["message"]
    assert run["prompt_source"] == "session.jsonl's first user message"
    assert main(["--workbench", str(root), "show", "session", "dflash_verify"]) == 0
    assert ("judged against prompt version: benchtui (from session.jsonl's first user message; no PROMPT.md)"
            in capsys.readouterr().out)
    assert main(["--workbench", str(root), "show", "later", "dflash_verify", "--json"]) == 0
    run = json.loads(capsys.readouterr().out)["latest_run"]
    said = {c["name"]: c for c in run["checks"]}["prompt"]
    assert run["prompt_version"] == "benchtui" and "session.jsonl's second user message" in said["message"]
    assert main(["--workbench", str(root), "show", "chatted", "dflash_verify", "--json"]) == 0
    run = json.loads(capsys.readouterr().out)["latest_run"]
    assert run["prompt_version"] is None and "prompt" not in {c["name"] for c in run["checks"]}
    assert main(["--workbench", str(root), "show", "ours", "dflash_verify", "--json"]) == 0
    run = json.loads(capsys.readouterr().out)["latest_run"]
    assert run["prompt_version"] == "benchtui"
    assert {c["name"]: c["verdict"] for c in run["checks"]}["second_root_path"] == V.PASS
    assert main(["--workbench", str(root), "show", "unknown", "dflash_verify", "--json"]) == 0
    run = json.loads(capsys.readouterr().out)["latest_run"]
    assert run["prompt_version"] is None
    assert {c["name"]: c["verdict"] for c in run["checks"]}["second_root_path"] == V.INFO
