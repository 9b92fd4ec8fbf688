"""backwards: the reference and demo-careful pass; demo-hasty and mutants of
the reference are caught by the check that targets each mistake."""
from __future__ import annotations

from pathlib import Path

import pytest
from benchtui.challenges.definition import BUNDLED_CHALLENGES, load_challenge
from benchtui.runner.local import run_local
from challenge_kit import checks_by_name, fast_copy, mutate_source, write_answer

CHALLENGE = BUNDLED_CHALLENGES / "backwards"
MODELS = BUNDLED_CHALLENGES.parent / "models"
REFERENCE = (CHALLENGE / "reference.py").read_text()


FAST = {"speed_shape": "[2, 16, 64]", "timing_budget_s": "0.05"}


def fast_challenges(root: Path) -> Path:
    return fast_copy("backwards", root, FAST)


def run_source(tmp_path: Path, source: str) -> dict:
    return run_local("backwards", write_answer(tmp_path, "layer_norm.py", source), challenges_dir=fast_challenges(tmp_path), seed=7)


def mutate(old: str, new: str) -> str:
    return mutate_source(REFERENCE, (old, new), count=1)


by_name = checks_by_name


def test_challenge_definition_loads():
    ch = load_challenge(CHALLENGE)
    assert (ch.id, ch.position, ch.difficulty, ch.language) == ("backwards", 1, "MEDIUM", "python")
    assert ch.display_name == "Layer Norm Backward"
    assert {"torch", "tensorflow", "jax", "autograd", "mlx"} <= set(ch.forbidden_imports)
    for model in ("demo-careful", "demo-hasty", "demo-quitter"):
        assert (MODELS / model / "backwards" / "PROMPT.md").read_bytes() == ch.prompt_path.read_bytes()


def test_reference_passes(tmp_path):
    result = run_source(tmp_path, REFERENCE)
    assert result["verdict"] == "pass", result
    checks = by_name(result)
    assert checks["cache_bytes"]["value"] == pytest.approx(1.0)
    assert checks["speed_2x16x64_float32"]["verdict"] == "info"


def test_demo_careful_passes_with_real_thresholds():
    result = run_local("backwards", MODELS / "demo-careful" / "backwards", model="demo-careful", seed=11)
    assert result["verdict"] == "pass", [c for c in result["checks"] if c["verdict"] != "pass"]


def test_demo_hasty_fails_on_stability_and_float32(tmp_path):
    result = run_local("backwards", MODELS / "demo-hasty" / "backwards", model="demo-hasty",
                       challenges_dir=fast_challenges(tmp_path), seed=5)
    failed = {c["name"] for c in result["checks"] if c["verdict"] == "fail"}
    assert result["verdict"] == "fail"
    assert failed == {"huge_mean_tiny_variance", "float32"}
    assert "float64" in by_name(result)["float32"]["message"]


def test_demo_quitter_answer_is_bound_and_passes(tmp_path):
    result = run_local("backwards", MODELS / "demo-quitter" / "backwards", model="demo-quitter",
                       challenges_dir=fast_challenges(tmp_path), seed=3)
    assert result["verdict"] == "pass"


MUTANTS = {
    "dx_missing_variance_term": (
        mutate(" - xhat * (g * xhat).mean(axis=-1, keepdims=True))", ")"), "backward_dx", ""),
    "dgamma_without_xhat": (mutate("dgamma = (dy * xhat).sum(", "dgamma = (dy).sum("), "backward_dgamma", ""),
    "no_eps_nan_on_constant_rows": (
        mutate("np.sqrt(var + eps)", "np.sqrt(var)"), "constant_rows", "non-finite"),
    "one_pass_variance": (
        mutate("var = (xc * xc).mean(axis=-1, keepdims=True)",
               "var = (x * x).mean(axis=-1, keepdims=True) - mean * mean"), "huge_mean_tiny_variance", ""),
    "float64_upcast": (mutate("    mean = x.mean(", "    x = x.astype(np.float64)\n    mean = x.mean("),
                       "float32", "float64"),
    "forward_returns_zeros": (mutate("y = xhat * gamma + beta", "y = np.zeros_like(x)"), "forward", ""),
    "mutates_input": (mutate("xc = x - mean", "x -= mean\n    xc = x"), "forward", "in place"),
    "caches_first_output": (REFERENCE + (
        "\n_forward_impl = forward\n_memo = []\n\n\n"
        "def forward(x, gamma, beta, eps):\n"
        "    if not _memo:\n        _memo.append(_forward_impl(x, gamma, beta, eps))\n"
        "    return _memo[0]\n"), "forward", ""),
}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_is_rejected_by_its_check(tmp_path, name):
    source, check, words = MUTANTS[name]
    result = run_source(tmp_path, source)
    c = by_name(result)[check]
    assert result["verdict"] in ("fail", "error"), result  # later checks may crash on the bad output
    assert c["verdict"] == "fail", c
    assert words in c["message"]


def test_torch_import_is_forbidden(tmp_path):
    result = run_source(tmp_path, "import torch\n" + REFERENCE)
    assert result["verdict"] == "forbidden"
    assert "layer_norm.py:1" in by_name(result)["forbidden_imports"]["message"]


def test_nothing_to_bind_is_unbound(tmp_path):
    result = run_source(tmp_path, "def normalise(x):\n    return x\n")
    assert result["verdict"] == "unbound"
    assert "layer_norm_backward" in by_name(result)["bind"]["message"]
