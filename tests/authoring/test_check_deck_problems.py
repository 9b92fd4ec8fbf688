"""``challenge check`` of an imported deck problem on a machine without a GPU:
the reference runs wherever ``benchtui run`` would run an answer on the CPU
(whichever deck it comes from), a problem too large for the CPU is named not
judged, and ``sound`` is true only when every item, the mutation score
included, was judged."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from benchtui.authoring.soundness import check_challenge
from benchtui.challenges.definition import load_challenge
from benchtui.challenges.prompts import file_prompt_sha256
from benchtui.cli import main

from tests.challenges import module_deck_kit as K

torch = pytest.importorskip("torch")

REPO = Path(__file__).resolve().parents[2]
ON_RUN = ("reference_passes", "checks_name_requirements", "thresholds_outside_noise")
# 32768 x 32768 of fp8, the input and the weight: 2 GiB a call, over what the CPU runs
TOO_LARGE = 'SHAPES = [\n    {"M": 32768, "N": 32768, "K": 32768},\n]\n'


@pytest.fixture(autouse=True)
def no_gpu(monkeypatch):
    """This machine as one without a GPU, wherever the test runs."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)


def hard_problem(root: Path, cid: str, shapes: str | None = None) -> Path:
    """A KernelBench-Hard-shaped problem (fp8 in, bf16 out) as an import writes it:
    a prompt that words its requirements, its hash under a prompt version."""
    (root / "models").mkdir(exist_ok=True)
    folder = K.write_challenge(root / "challenges", cid, "hard")
    (folder / "ADAPTER.md").write_text("# Adapter\n\nsolution.py defines Model, as the deck asks.\n")
    if shapes is not None:
        (folder / "shapes.py").write_text(shapes)
    # the prompt words each requirement, as a deck's prompt does
    (folder / "PROMPT.md").write_text(f"# {cid}\n\nWrite solution.py: solution.Model matches reference.Model on every "
                                      "shape, seed and stress case. Do not call torch._scaled_mm.\n")
    toml = (folder / "challenge.toml").read_text()
    head, module = toml.split("[module]\n", 1)
    sha = file_prompt_sha256(folder / "PROMPT.md")
    (folder / "challenge.toml").write_text(
        f'{head}[prompts.deck]\nsha256 = ["{sha}"]\nchecks = []\nrequirements = ["correct", "no_forbidden_ops"]\n\n'
        f"[module]\n{module}")
    return folder


def cli_json(capsys, root: Path, cid: str) -> tuple[int, dict]:
    try:
        code = main(["--workbench", str(root), "challenge", "check", cid, "--json", "--seeds", "1", "--mutants", "0"])
    except SystemExit as exc:
        code = exc.code
    return code, json.loads(capsys.readouterr().out)


def test_a_kernelbench_hard_problem_that_fits_the_cpu_is_checked_on_it(tmp_path):
    report = check_challenge(load_challenge(hard_problem(tmp_path, "kbh_small")), seeds=(1,))
    items = {i.name: i for i in report.items}
    assert not report.failed, [i.as_dict() for i in report.items]
    assert all(items[name].ok is True for name in ON_RUN), [items[n].as_dict() for n in ON_RUN]
    assert "passes all" in items["reference_passes"].message
    # the mutation score was not asked for here: not judged, so not sound
    assert report.not_judged == ["mutation_score"] and not report.sound
    report.mutation = {"score": 1.0, "killed": 3, "survived": 0, "equivalent": 0, "mutants": 3}
    assert report.not_judged == [] and report.sound


def test_a_problem_too_large_for_the_cpu_is_named_not_judged_and_not_sound(tmp_path, capsys):
    hard_problem(tmp_path, "kbh_large", TOO_LARGE)
    code, report = cli_json(capsys, tmp_path, "kbh_large")
    items = {i["name"]: i for i in report["items"]}
    assert report["sound"] is False and report["failed"] is False and code == 0
    assert report["not_judged"] == [*ON_RUN, "mutation_score"]
    assert all(items[name]["ok"] is None for name in ON_RUN)
    # the reason is the size rule `benchtui run` applies on the CPU, with the size
    assert "2.0 GiB of inputs and weights" in items["reference_passes"]["message"]
    assert items["requirements_quote_prompt"]["ok"] and items["prompt_version"]["ok"]


def test_the_summary_lists_everything_not_judged_the_mutation_score_included(tmp_path, capsys):
    hard_problem(tmp_path, "kbh_large", TOO_LARGE)
    try:
        code = main(["--workbench", str(tmp_path), "challenge", "check", "kbh_large", "--seeds", "1", "--mutants", "0"])
    except SystemExit as exc:
        code = exc.code
    last = capsys.readouterr().out.rstrip().splitlines()[-1]
    assert code == 0 and "not everything was judged" in last and not last.endswith(" sound")
    assert last.endswith(": reference_passes, checks_name_requirements, thresholds_outside_noise, mutation_score")


def test_where_torch_sees_a_gpu_a_deck_problem_s_reference_runs_there(tmp_path, monkeypatch):
    from benchtui.authoring.soundness import reference_backend, why_reference_cannot_run_here

    large = load_challenge(hard_problem(tmp_path, "kbh_large", TOO_LARGE))
    assert reference_backend(large) == "cpu" and "2.0 GiB" in (why_reference_cannot_run_here(large) or "")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    # the CPU's size rule is not the GPU's: the suite runs it with --backend cuda
    assert reference_backend(large) == "cuda" and why_reference_cannot_run_here(large) is None
    # a challenge of one's own (not a deck's) runs on the CPU, as before
    assert reference_backend(load_challenge(REPO / "challenges" / "top_p")) == "cpu"


def test_a_reference_calling_what_its_deck_forbids_answers_still_passes(tmp_path):
    """The deck's forbidden list binds its answers; its reference is the plain-torch
    baseline and calls those very ops (KernelBench-Hard's GEMM references use `@`
    where `torch.matmul` is forbidden). reference_passes says so and holds; any
    other failing check still fails it."""
    folder = hard_problem(tmp_path, "kbh_gemm")
    toml = (folder / "challenge.toml").read_text()
    (folder / "challenge.toml").write_text(toml.replace('forbidden = ["torch._scaled_mm", "torch.ops.aten._scaled_mm"]',
                                                        'forbidden = ["torch.matmul"]'))
    report = check_challenge(load_challenge(folder), seeds=(1,))
    item = {i.name: i for i in report.items}["reference_passes"]
    assert item.ok is True, item.as_dict()
    assert "calls what the deck forbids its answers (forbidden_calls" in item.message, item.message
    assert "forbidden_calls" in item.details["forbidden_to_answers"]
