"""flash_attention_bwd: the reference and demo answers get their verdicts, and
mutants of the reference carrying the known mistakes are caught by the
check meant to catch them."""
from __future__ import annotations

from pathlib import Path

import pytest
from benchtui.challenges.definition import BUNDLED_CHALLENGES, load_challenge
from benchtui.runner.local import run_local
from challenge_kit import fast_copy, mutate_source, write_answer

CID = "flash_attention_bwd"
CHALLENGE = BUNDLED_CHALLENGES / CID
MODELS = BUNDLED_CHALLENGES.parent / "models"
REFERENCE = (CHALLENGE / "reference.py").read_text()

# Lighter settings for the many mutant runs: the memory check at N=2048 still
# tells O(N) from O(N^2), and timing is an info figure. An O(N) backward's peak
# is a larger fraction of N x N at half the N (the reference's: 0.195 there,
# 0.1 at the real 4096), so the fraction doubles with it: at 0.2 the reference
# sat a few KiB of allocator noise under the bar; an N x N array is 1.0.
FAST = {"grad_shape": "[1, 2, 128, 32]", "grad_tile": "32", "fd_shape": "[1, 1, 32, 16]", "fd_tile": "8",
        "memory_shape": "[1, 1, 2048, 64]", "memory_fraction": "0.4", "speed_shape": "[1, 1, 128, 32]",
        "timing_budget_s": "0.05"}


@pytest.fixture(scope="module")
def fast_challenges(tmp_path_factory) -> Path:
    return fast_copy(CID, tmp_path_factory.mktemp("fast"), FAST)


def run(folder: Path, challenges: Path | None = None, seed: int = 1234, adapter: Path | None = None) -> tuple[str, dict]:
    kw = {"challenges_dir": challenges} if challenges else {}
    out = run_local(CID, folder, seed=seed, adapter=adapter, **kw)
    return out["verdict"], {c["name"]: c for c in out["checks"]}


def answer_from(tmp_path: Path, source: str) -> Path:
    return write_answer(tmp_path, "attention.py", source)


def mutate(*edits: tuple[str, str], count: int = -1) -> str:
    return mutate_source(REFERENCE, *edits, count=count)


def failing(checks: dict) -> set[str]:
    return {n for n, c in checks.items() if c["verdict"] == "fail"}


def test_challenge_definition_loads():
    ch = load_challenge(CHALLENGE)
    assert ch.position == 6 and ch.difficulty == "EXTRA HARD"
    assert ch.display_name == "Flash Attn Backward"
    assert {"torch", "jax", "autograd", "mlx"} <= set(ch.forbidden_imports)
    prompt = ch.prompt_path.read_text()
    assert "flash_attention_fwd(Q, K, V, tile_size, causal)" in prompt
    assert "flash_attention_bwd(dO, cache, tile_size, causal)" in prompt


def test_reference_passes_full_suite(tmp_path):
    verdict, checks = run(answer_from(tmp_path, REFERENCE))
    assert verdict == "pass", {n: c["message"] for n, c in checks.items() if c["verdict"] != "pass"}
    assert checks["finite_differences"]["value"] < 1e-7
    assert checks["memory_peak"]["value"] < 0.2
    assert checks["speed"]["verdict"] == "info"


def test_demo_careful_passes(fast_challenges):
    verdict, checks = run(MODELS / "demo-careful" / CID, fast_challenges, seed=7)
    assert verdict == "pass", {n: c["message"] for n, c in checks.items() if c["verdict"] != "pass"}


def test_demo_hasty_fails_only_causal_gradients(fast_challenges):
    # Its backward skips tiles above the diagonal but never masks inside the
    # diagonal tiles: forward and non-causal gradients are right.
    verdict, checks = run(MODELS / "demo-hasty" / CID, fast_challenges)
    assert verdict == "fail"
    # every check with causal gradients in it (large_scores, masked_key_large, float64_accuracy and
    # tile_remainders, which sweeps N against the tile both causal and not, too)
    assert failing(checks) == {"gradients_vs_reference", "finite_differences", "uneven_n", "small_n", "large_scores",
                               "masked_key_large", "float64_accuracy", "tile_remainders"}
    # of the two large-score cases only the causal one is wrong
    assert "causal=True" in checks["large_scores"]["message"] and "causal=False" not in checks["large_scores"]["message"]
    for name in ("forward_matches_reference", "non_causal", "cache_has_no_nxn", "memory_peak"):
        assert checks[name]["verdict"] == "pass", name


def test_answer_folders_ship_the_prompt():
    for model in ("demo-careful", "demo-hasty"):
        assert (MODELS / model / CID / "PROMPT.md").read_bytes() == (CHALLENGE / "PROMPT.md").read_bytes()


MUTANTS = {
    "missing_rowsum_term": (
        [("ds = p * (dp - Dr[:, :, q_lo:q_hi, None])", "ds = p * dp")],
        {"gradients_vs_reference", "finite_differences", "uneven_n", "non_causal"},
    ),
    "wrong_causal_skip": (
        # drops the diagonal tiles in the backward
        [("            if causal and k_lo > q_hi - 1:\n                continue",
          "            if causal and k_lo >= q_lo:\n                continue")],
        {"gradients_vs_reference", "finite_differences", "uneven_n", "small_n"},
    ),
    "nxn_in_cache": (
        [('"causal": bool(causal)}', '"causal": bool(causal), "P": naive_attention_fwd(Q, K, V, causal)[1]}')],
        {"cache_has_no_nxn", "memory_peak"},
    ),
    "wrong_scale": (
        # self-consistent, so finite differences agree: the oracle catches it
        [("return 1.0 / np.sqrt(d)", "return 1.0 / d")],
        {"forward_matches_reference", "gradients_vs_reference", "uneven_n", "non_causal"},
    ),
    "tile_max_not_running_max": (
        # each key tile's own maximum: exp(m_old - m_tile) overflows once an earlier tile scores ~1000 higher
        [("m_new = np.maximum(m, s.max(axis=-1))", "m_new = s.max(axis=-1)")],
        {"large_scores"},
    ),
    "zero_gradients": (
        [("    return dQ, dK, dV\n", "    return np.zeros_like(dQ), np.zeros_like(dK), np.zeros_like(dV)\n")],
        {"gradients_vs_reference", "finite_differences"},
    ),
    "caches_outputs_by_shape": (
        [("def flash_attention_bwd(dO, cache, tile_size, causal):", "def _bwd(dO, cache, tile_size, causal):"),
         ("\n\ndef naive_attention_fwd(",
          "\n\n_MEMO = {}\n\n\ndef flash_attention_bwd(dO, cache, tile_size, causal):\n"
          "    key = (np.shape(dO), tile_size, causal)\n"
          "    if key not in _MEMO:\n        _MEMO[key] = _bwd(dO, cache, tile_size, causal)\n"
          "    return _MEMO[key]\n\n\ndef naive_attention_fwd(")],
        {"gradients_vs_reference"},
    ),
}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_is_caught(name, tmp_path, fast_challenges):
    edits, must_fail = MUTANTS[name]
    verdict, checks = run(answer_from(tmp_path, mutate(*edits)), fast_challenges)
    assert verdict == "fail"
    assert must_fail <= failing(checks), {n: (c["verdict"], c["message"]) for n, c in checks.items()}


def test_large_score_case_is_fixed_and_named(tmp_path, fast_challenges):
    """Without the running maximum every seed gives NaN on both fixed cases,
    and the message says which case and how many entries."""
    src = mutate(("m_new = np.maximum(m, s.max(axis=-1))", "m_new = s.max(axis=-1)"))
    for seed in (1, 2):
        (tmp_path / str(seed)).mkdir()
        verdict, checks = run(answer_from(tmp_path / str(seed), src), fast_challenges, seed=seed)
        message = checks["large_scores"]["message"]
        assert checks["large_scores"]["verdict"] == "fail"
        assert "key tile 0 scoring 1000 above the later tiles" in message and "not finite" in message
        assert "causal=True" in message and "causal=False" in message
        assert failing(checks) == {"large_scores", "masked_key_large"}  # both large-score cases, nothing else


def test_input_mutation_is_reported(tmp_path, fast_challenges):
    src = mutate(("    scale = _scale(D)\n    O = np.zeros", "    scale = _scale(D)\n    Q *= scale\n    scale = 1.0\n    O = np.zeros"))
    verdict, checks = run(answer_from(tmp_path, src), fast_challenges)
    assert verdict == "fail"
    assert "in place" in checks["forward_matches_reference"]["message"]


def test_forward_returning_only_o_is_an_error(tmp_path, fast_challenges):
    src = mutate(("    return O, cache\n", "    return O\n"))
    verdict, checks = run(answer_from(tmp_path, src), fast_challenges)
    assert checks["forward_matches_reference"]["verdict"] == "error"
    assert "(O, cache)" in checks["forward_matches_reference"]["message"]


def test_missing_backward_is_unbound(tmp_path, fast_challenges):
    src = REFERENCE.replace("def flash_attention_bwd(", "def _private_helper(")
    verdict, checks = run(answer_from(tmp_path, src), fast_challenges)
    assert verdict == "unbound"
    assert "flash_attention_bwd" in checks["bind"]["message"]


def test_cache_walk_finds_arrays_in_any_container():
    import numpy as np
    from benchtui.verify.binding import load_module

    conf = load_module(CHALLENGE / "conformance.py", "test_flash_bwd_conformance")

    class Ctx:
        def __init__(self):
            self.saved = (np.zeros(3), {"P": np.zeros((4, 4))})

    found = dict(conf.walk([Ctx(), np.ones(2)]))
    assert set(found) == {"cache[0].saved[0]", "cache[0].saved[1]['P']", "cache[1]"}
    assert conf.rel_err(np.ones(3), np.ones(3)) == 0.0
    assert conf.rel_err(np.array([1.0, np.nan]), np.ones(2)) == float("inf")
    assert conf.rel_err(np.zeros(2), np.zeros(3)) == float("inf")


def test_adapter_binds_an_answer_with_other_names(tmp_path, fast_challenges):
    src = REFERENCE.replace("def flash_attention_fwd(", "def fa_forward(").replace("def flash_attention_bwd(", "def fa_backward(")
    folder = tmp_path / "answer"
    folder.mkdir()
    # A name no other test imports: suites here share one process and sys.modules.
    (folder / "fa_adapter_target.py").write_text(src)
    verdict, checks = run(folder, fast_challenges)
    assert verdict == "unbound" and "flash_attention_fwd" in checks["bind"]["message"]
    adapter = tmp_path / "adapter.py"
    adapter.write_text(
        "from fa_adapter_target import fa_backward, fa_forward\n\n\n"
        "def flash_attention_fwd(Q, K, V, tile_size, causal):\n    return fa_forward(Q, K, V, tile_size, causal)\n\n\n"
        "def flash_attention_bwd(dO, cache, tile_size, causal):\n    return fa_backward(dO, cache, tile_size, causal)\n")
    verdict, checks = run(folder, fast_challenges, adapter=adapter)
    assert verdict == "pass", {n: c["message"] for n, c in checks.items() if c["verdict"] != "pass"}


def test_a_forward_that_masks_after_the_tile_maximum_fails_masked_key_large(tmp_path, fast_challenges):
    # The masked entries still raise the tile's maximum: exact on every random
    # case, but a masked key ~1000 above the rest makes the rows before it 0/0.
    source = mutate(
        ("s = (q @ K[:, :, k_lo:k_hi].swapaxes(-1, -2)) * scale",
         "s = (q @ K[:, :, k_lo:k_hi].swapaxes(-1, -2)) * scale\n            late = np.zeros(s.shape[-2:], dtype=bool)"),
        ("s = np.where(cols > rows, -np.inf, s)", "late = cols > rows"),
        ("p = np.exp(s - m_new[..., None])", "p = np.where(late, 0.0, np.exp(s - m_new[..., None]))"),
        count=1)  # the forward's; the backward masks its scores the same way
    verdict, checks = run(answer_from(tmp_path, source), fast_challenges)
    assert verdict == "fail" and failing(checks) == {"masked_key_large"}, failing(checks)
    assert "rows before key" in checks["masked_key_large"]["message"]


def test_a_float32_accumulator_fails_float64_accuracy_only(tmp_path, fast_challenges):
    source = mutate(("dV = np.zeros(V.shape, dtype=O.dtype)", "dV = np.zeros(V.shape, dtype=np.float32)"))
    verdict, checks = run(answer_from(tmp_path, source), fast_challenges)
    assert verdict == "fail" and failing(checks) == {"float64_accuracy"}, failing(checks)
    assert 1e-10 < checks["float64_accuracy"]["value"] < 1e-4
