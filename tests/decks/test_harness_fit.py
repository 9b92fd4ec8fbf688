"""An imported deck's challenges run by the PyTorch module harness: the
requirements the importer declares are the ones the harness's checks name,
``challenge check`` runs the reference as the deck's answer, and a run's
verdict shows beside the deck's in ``published``."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from benchtui.authoring.soundness import check_challenge
from benchtui.challenges.coverage import words
from benchtui.challenges.definition import load_challenge
from benchtui.decks import kernelbench, kernelbench_hard
from benchtui.decks.importer import import_deck
from benchtui.store.database import Store
from benchtui.verify.module.suite import Spec
from deck_kit import cli

torch = pytest.importorskip("torch")

RIGHT = """import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)
"""
WRONG = """import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B) + 1.0
"""
RESULTS = {"1": [{"sample_id": 0, "compiled": True, "correctness": True, "runtime": 1.0}],
           "19": [{"sample_id": 0, "compiled": True, "correctness": True, "runtime": 1.0}]}


@pytest.fixture(scope="module")
def small_kb(decks, tmp_path_factory) -> Path:
    """The KernelBench deck cut to two level-1 problems at CPU sizes (ReLU, square
    matmul), with a run holding a right ModelNew for one and a wrong one for the other."""
    base = tmp_path_factory.mktemp("kb-small")
    deck = Path(shutil.copytree(decks / "kernelbench", base / "deck"))
    shutil.rmtree(deck / "KernelBench" / "level2")
    level1 = deck / "KernelBench" / "level1"
    for f in level1.iterdir():
        if f.name not in ("19_ReLU.py", "1_Square_matrix_multiplication_.py"):
            f.unlink()
    for name, sizes in (("19_ReLU.py", {"batch_size": 4, "dim": 8}), ("1_Square_matrix_multiplication_.py", {"N": 8})):
        lines = (level1 / name).read_text().splitlines()
        for i, line in enumerate(lines):
            key = line.split("=")[0].strip()
            if key in sizes and not line.startswith(" "):
                lines[i] = f"{key} = {sizes[key]}"
        (level1 / name).write_text("\n".join(lines) + "\n")
    run = deck / "runs" / "demo"
    run.mkdir(parents=True)
    (run / "level_1_problem_19_sample_0_kernel.py").write_text(RIGHT)
    (run / "level_1_problem_1_sample_0_kernel.py").write_text(WRONG)
    (run / "eval_results.json").write_text(json.dumps(RESULTS))
    root = base / "wb"
    import_deck(kernelbench.read_deck(deck, runs=deck / "runs", commit="423217d"), root)
    return root


def test_imported_requirements_are_the_harness_checks(kbh_imported):
    root = kbh_imported[0]
    for folder in sorted((root / "challenges").iterdir()):
        spec = Spec.read(folder)
        prompt = words((folder / "PROMPT.md").read_text(encoding="utf-8"))
        toml = load_challenge(folder).raw["requirements"]
        # the forbidden ops are declared in the prompt's own sentence naming them
        said = toml["no_forbidden_ops"]
        assert words(said) in prompt and any(f in said for f in spec.forbidden), folder.name
        assert spec.requires("no_forbidden_ops") == ("no_forbidden_ops",)
        assert spec.requires("interface") == ("interface",)
        assert spec.requires("correct") == ("correct", "task")
        assert set(spec.skipped()) == {"interface", "correct", "task"}


def test_requirements_a_challenge_does_not_declare_fall_to_correct():
    spec = Spec(deck="kernelbench", problem="p", answer_file="solution.py", answer_class="ModelNew", weights="seeded",
                seeds=[42], atol=1e-4, rtol=1e-4, tolerance={}, forbidden=[], num_correct_trials=1, num_perf_trials=1,
                flops_formula=None, bytes_formula=None, regime="compute", precision="", peak={},
                declared=frozenset({"correct"}))
    assert spec.requires("no_forbidden_ops") == ("correct",)
    assert spec.requires("interface") == ("correct",)
    assert spec.requires("correct") == ("correct",)


def test_challenge_check_passes_on_an_imported_kernelbench_problem(small_kb):
    report = check_challenge(load_challenge(small_kb / "challenges" / "kb_l1_p19_relu"), seeds=(1,))
    items = {i.name: i for i in report.items}
    # a deck problem's checks compare against the reference with no numeric tolerance to measure, so
    # that item is not judged (a count of zero is never a success), nor is the skipped mutation audit
    assert not report.failed and report.not_judged == ["thresholds_outside_noise", "mutation_score"], \
        [i.as_dict() for i in report.items]
    assert "no tolerance was measured" in items["thresholds_outside_noise"].message
    assert items["reference_passes"].ok and items["checks_name_requirements"].ok


@pytest.mark.skipif(torch.cuda.is_available(), reason="the reference runs where torch sees a GPU")
def test_challenge_check_of_a_kernelbench_hard_problem_too_large_for_the_cpu_says_not_judged(kbh_imported):
    """The shared deck's SonicMoE (5 GiB a call) is not run on the CPU; its smaller
    problems are (tests/authoring/test_check_deck_problems.py)."""
    report = check_challenge(load_challenge(kbh_imported[0] / "challenges" / "kbh_06_sonic_moe_swiglu"), seeds=(1,))
    items = {i.name: i for i in report.items}
    assert not report.failed and not report.sound
    assert set(report.not_judged) == {"reference_passes", "checks_name_requirements", "thresholds_outside_noise",
                                      "mutation_score"}
    assert "5.0 GiB" in items["reference_passes"].message
    assert items["requirements_quote_prompt"].ok and items["prompt_version"].ok


@pytest.mark.skipif(torch.cuda.is_available(), reason="the reference runs where torch sees a GPU")
def test_challenge_check_of_a_kernelbench_problem_too_large_for_the_cpu_says_not_judged(decks, tmp_path):
    """The shared deck's ReLU at its own sizes (6 GiB of input) is not run on the CPU."""
    root = tmp_path / "wb"
    import_deck(kernelbench.read_deck(decks / "kernelbench", runs=tmp_path / "no-runs", commit="423217d"), root)
    report = check_challenge(load_challenge(root / "challenges" / "kb_l1_p19_relu"), seeds=(1,))
    items = {i.name: i for i in report.items}
    assert set(report.not_judged) == {"reference_passes", "checks_name_requirements", "thresholds_outside_noise",
                                      "mutation_score"} and not report.sound
    assert "6.0 GiB" in items["reference_passes"].message


def test_run_verdicts_beside_the_decks_in_published_json(small_kb, capsys):
    code, _ = cli(capsys, "--workbench", str(small_kb), "run", "--backend", "cpu")
    code, out = cli(capsys, "--workbench", str(small_kb), "published", "--json")
    assert code == 0
    rows = {a["challenge"]: a for a in json.loads(out)["answers"]}
    right, wrong = rows["kb_l1_p19_relu"], rows["kb_l1_p1_square_matrix_multiplication"]
    assert (right["deck_verdict"], right["verdict"], right["agreement"]) == ("PASS", "pass", "agree")
    assert (wrong["deck_verdict"], wrong["verdict"], wrong["agreement"]) == ("PASS", "fail", "disagree")
    assert "output_values" in wrong["reason"]


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU runs the published answers")
def test_published_cuda_answers_on_the_cpu_are_skipped_not_disagreements(decks, tmp_path, capsys):
    root = tmp_path / "wb"
    import_deck(kernelbench_hard.read_deck(decks / "kernelbench-hard", "h100", commit="c7d9221"), root)
    model = "codex_gpt-5.5"
    code, _ = cli(capsys, "--workbench", str(root), "run", "-c", "kbh_07_w4a16_gemm", "-m", model, "--backend", "cpu")
    code, out = cli(capsys, "--workbench", str(root), "published", "--json", "-c", "kbh_07_w4a16_gemm")
    data = json.loads(out)
    mine = [a for a in data["answers"] if a["model"] == model]
    assert mine and all(a["verdict"] == "skipped" for a in mine)
    assert all("GPU" in (a["reason"] or "") or "Triton" in (a["reason"] or "") for a in mine)
    assert all(a["agreement"] == "not judged here" for a in mine)


def test_the_decks_property_stress_loads_from_the_imported_challenge(decks, tmp_path):
    """The copied deck code generates its plan in the checker: the fixed case
    first, then Hypothesis's, the same for the same seed; its ``src`` package
    is not left behind in the checker's modules."""
    import sys

    pytest.importorskip("hypothesis")
    from benchtui.verify.module import property as module_property

    root = tmp_path / "wb"
    import_deck(kernelbench_hard.read_deck(decks / "kernelbench-hard", "h100"), root)
    folder = root / "challenges/kbh_06_sonic_moe_swiglu"
    table = Spec.read(folder).property_stress
    mod = module_property.load(folder, table)
    assert not any(k == "src" or k.startswith("src.") for k in sys.modules)
    assert mod.property_shape_index("06_sonic_moe_swiglu") == 1
    _, cases = mod.generate_property_cases("06_sonic_moe_swiglu", seed=12345)
    _, again = mod.generate_property_cases("06_sonic_moe_swiglu", seed=12345)
    assert cases == again and cases[0] == mod.canonical_property_case("06_sonic_moe_swiglu") and len(cases) >= 2
    # its mutation of the routing offsets keeps every expert non-empty, on CPU tensors
    hidden = torch.randn(8 * 4, 16, dtype=torch.bfloat16)
    offsets = torch.arange(0, 33, 4, dtype=torch.int32)
    mutated = mod.apply_property_case("06_sonic_moe_swiglu", [hidden, offsets], cases[0])
    counts = mutated[1][1:] - mutated[1][:-1]
    assert int(counts.sum()) == 32 and int(counts.min()) >= 1 and not torch.equal(mutated[1], offsets)


SLOW = """import time
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        time.sleep(2)  # a plain-torch answer on a CPU far slower than the GPU it was written for
        return torch.relu(x)
"""


def test_an_answer_too_slow_for_the_cpu_is_stopped_early_and_not_judged(small_kb, tmp_path, capsys):
    """The first calls' time tells that the checks cannot finish in the run's limit: the run
    stops then, as skipped (nothing was judged) with a clear reason, not at the limit as a
    timeout; `published` counts it not judged here."""
    root = Path(shutil.copytree(small_kb, tmp_path / "wb"))
    (answer,) = (root / "models").glob("*/kb_l1_p19_relu/solution.py")
    answer.write_text(SLOW)
    code, out = cli(capsys, "--workbench", str(root), "run", "--backend", "cpu", "--timeout", "30",
                    "-c", "kb_l1_p19_relu", "--json")
    assert code in (0, 1)
    with Store(root / "store.db") as store:
        run = store.query("select verdict, duration_s, message from runs order by id desc limit 1")[0]
        checks = {c["name"]: c for c in store.query("select name, verdict, message from checks where run_id = "
                                                    "(select max(id) from runs)")}
    assert run["verdict"] == "skipped", (run, checks)
    # it ended by itself at its first calls' share of the limit: the limit never had to stop it
    assert "run" not in checks and run["duration_s"] < 30, (run, checks)
    first = checks["deck_seeds:shape0"]
    assert first["verdict"] == "skipped" and first["message"].startswith("too slow for this CPU: the answer's first")
    assert "run's 30 s limit" not in first["message"] and "of its 30 s limit" in first["message"]
    assert "--backend cuda" in first["message"]
    # said from calls that finished, with what they project to
    assert "finished in" in first["message"] and " calls project to " in first["message"], first
    code, out = cli(capsys, "--workbench", str(root), "published", "--json")
    row = next(a for a in json.loads(out)["answers"] if a["challenge"] == "kb_l1_p19_relu")
    assert (row["agreement"], row["not_judged"]) == ("not judged here", "skipped: too slow for this CPU")
