"""flash_attention: reference and demo-careful pass; demo-hasty forgets to
rescale its accumulator; each known mistake of a mutant is caught by name."""
from __future__ import annotations

from pathlib import Path

import pytest
from benchtui.challenges.definition import BUNDLED_CHALLENGES, load_challenge
from benchtui.runner.local import run_local
from challenge_kit import checks_by_name, fast_copy, mutate_source, write_answer

CHALLENGE = BUNDLED_CHALLENGES / "flash_attention"
MODELS = BUNDLED_CHALLENGES.parent / "models"
REFERENCE = (CHALLENGE / "reference.py").read_text()
FAST = {"memory_n": "1024", "speed_shape": "[1, 1, 128, 32]", "speed_tile": "64", "timing_budget_s": "0.05"}


def fast_challenges(root: Path) -> Path:
    return fast_copy("flash_attention", root, FAST)


def run_source(tmp_path: Path, source: str) -> dict:
    return run_local("flash_attention", write_answer(tmp_path, "attn.py", source), challenges_dir=fast_challenges(tmp_path), seed=13)


def mutate(old: str, new: str) -> str:
    return mutate_source(REFERENCE, (old, new), count=1)


by_name = checks_by_name


def test_challenge_definition_loads():
    ch = load_challenge(CHALLENGE)
    assert (ch.id, ch.position, ch.difficulty) == ("flash_attention", 5, "HARD")
    assert ch.display_name == "Flash Attn Forward"
    assert ch.thresholds["tol"] == 1e-4 and ch.thresholds["memory_fraction"] == 0.2
    for model in ("demo-careful", "demo-hasty"):
        assert (MODELS / model / "flash_attention" / "PROMPT.md").read_bytes() == ch.prompt_path.read_bytes()


def test_reference_passes(tmp_path):
    result = run_source(tmp_path, REFERENCE)
    assert result["verdict"] == "pass", result
    memory = by_name(result)["memory_1024_tile128"]
    assert memory["value"] < memory["threshold"]


def test_demo_careful_passes(tmp_path):
    # the full-size memory check (N = 4096) runs through `python -m benchtui.runner.local`; too slow here
    result = run_local("flash_attention", MODELS / "demo-careful" / "flash_attention", model="demo-careful",
                       challenges_dir=fast_challenges(tmp_path), seed=2)
    assert result["verdict"] == "pass", [c for c in result["checks"] if c["verdict"] != "pass"]
    assert by_name(result)["memory_1024_tile128"]["value"] < 0.2 * 1024 * 1024 * 8


def test_demo_hasty_misses_the_rescale(tmp_path):
    result = run_local("flash_attention", MODELS / "demo-hasty" / "flash_attention", model="demo-hasty",
                       challenges_dir=fast_challenges(tmp_path), seed=8)
    checks = by_name(result)
    assert result["verdict"] == "fail"
    for name in ("causal_256_tile64", "uneven_tiles", "non_causal", "float32"):
        assert checks[name]["verdict"] == "fail", name
    # a single key tile needs no rescale: those cases pass, as its own test did
    for name in ("n_equals_1", "n_smaller_than_tile", "memory_1024_tile128"):
        assert checks[name]["verdict"] == "pass", name


MUTANTS = {
    "missing_rescale": (mutate("acc = alpha * acc + p", "acc = acc + p"), "causal_256_tile64", ""),
    "inverted_causal_mask": (mutate("np.where(cols > rows,", "np.where(cols < rows,"), "causal_256_tile64", ""),
    "scale_one_over_d": (mutate("1.0 / np.sqrt(d)", "1.0 / d"), "causal_256_tile64", ""),
    "no_running_max": (mutate("p = np.exp(s - m_new)", "p = np.exp(s)").replace(
        "alpha = np.exp(m - m_new)", "alpha = 1.0"), "large_scores_float32", "non-finite"),
    # a stale running max is exact in exact arithmetic (it cancels in acc / l):
    # only scores past float64's exp range show it, on every run
    "running_max_not_the_max": (mutate("m_new = np.maximum(m, s.max(axis=-1, keepdims=True))",
                                       "m_new = np.where(np.isinf(m), s.max(axis=-1, keepdims=True), m)"),
                                "large_scores", "non-finite"),
    "materialises_n_by_n": (REFERENCE + (
        "\n\ndef flash_attention_fwd(Q, K, V, tile_size, causal):\n"
        "    return naive_attention(Q, K, V, causal).astype(Q.dtype)\n"), "memory_1024_tile128", "materialises"),
    "returns_zeros": (mutate("    return out\n", "    return np.zeros_like(out)\n"), "causal_256_tile64", ""),
    "mutates_input": (mutate("q = Q[:, :, qs:qe] * scale", "Q[:, :, qs:qe] *= scale\n        q = Q[:, :, qs:qe]"),
                      "causal_256_tile64", "in place"),
    "caches_first_output": (REFERENCE + (
        "\n_impl = flash_attention_fwd\n_memo = []\n\n\n"
        "def flash_attention_fwd(Q, K, V, tile_size, causal):\n"
        "    if not _memo:\n        _memo.append(_impl(Q, K, V, tile_size, causal))\n"
        "    return _memo[0]\n"), "uneven_tiles", "shape"),
}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_is_rejected_by_its_check(tmp_path, name):
    source, check, words = MUTANTS[name]
    result = run_source(tmp_path, source)
    c = by_name(result)[check]
    assert result["verdict"] in ("fail", "error"), result
    assert c["verdict"] == "fail", c
    assert words in c["message"]


def test_keyword_binding_passes_every_argument(tmp_path):
    # an answer whose defaults are block_size=16, causal=False must still get tile and causal;
    # judged under this repository's prompt, which asks callers to pass every argument (the
    # published prompt's causal=True default, causal_default, is a figure there)
    source = mutate("def flash_attention_fwd(Q: np.ndarray, K: np.ndarray, V: np.ndarray, tile_size: int,\n"
                    "                        causal: bool = True)",
                    "def flash_attention(Q, K, V, causal=False, block_size=16)").replace("tile_size", "block_size")
    folder = write_answer(tmp_path, "attn.py", source)
    (folder / "PROMPT.md").write_bytes((CHALLENGE / "PROMPT.md").read_bytes())
    result = run_local("flash_attention", folder, challenges_dir=fast_challenges(tmp_path), seed=13)
    assert result["verdict"] == "pass", [c for c in result["checks"] if c["verdict"] != "pass"]
    default = by_name(result)["causal_default"]
    assert default["verdict"] == "info" and default["details"]["would_be"]["verdict"] == "fail"
