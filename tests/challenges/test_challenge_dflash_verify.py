"""dflash_verify: reference and demo answers get their verdicts, the suite's
target model respects masks, and mutants of the reference carrying the
known mistakes are caught by the check meant to catch them."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from benchtui.challenges.definition import BUNDLED_CHALLENGES, load_challenge
from benchtui.runner.local import run_local
from benchtui.verify.binding import load_module
from challenge_kit import mutate_source, write_answer
from hypothesis import given, settings
from hypothesis import strategies as st

CID = "dflash_verify"
CHALLENGE = BUNDLED_CHALLENGES / CID
MODELS = BUNDLED_CHALLENGES.parent / "models"
REFERENCE = (CHALLENGE / "reference.py").read_text()
mock = load_module(CHALLENGE / "mock_target.py", "test_dflash_mock_target")
conformance = load_module(CHALLENGE / "conformance.py", "test_dflash_conformance")
reference = load_module(CHALLENGE / "reference.py", "test_dflash_reference")


def run(folder: Path, seed: int = 1234) -> tuple[str, dict]:
    out = run_local(CID, folder, seed=seed)
    return out["verdict"], {c["name"]: c for c in out["checks"]}


def answer_from(tmp_path: Path, source: str) -> Path:
    return write_answer(tmp_path, "speculative.py", source)


def mutate(*edits: tuple[str, str]) -> str:
    return mutate_source(REFERENCE, *edits)


def failing(checks: dict) -> set[str]:
    return {n for n, c in checks.items() if c["verdict"] == "fail"}


def explain(checks: dict) -> dict:
    return {n: (c["verdict"], c["message"][:200]) for n, c in checks.items()}


# -- definition and the injected target ------------------------------------------

def test_challenge_definition_loads():
    ch = load_challenge(CHALLENGE)
    assert ch.position == 7 and ch.difficulty == "EXTRA HARD"
    assert ch.display_name == "DFlash"
    assert "mlx" in ch.forbidden_imports
    prompt = ch.prompt_path.read_text()
    assert "build_tree_mask(prompt_len, tree_parents)" in prompt
    assert "verify_and_accept(prompt_tokens, tree_tokens, tree_parents, target_model, temperature=0)" in prompt
    # The sketch keeps the trap of the original task.
    assert "argmax(logits[P + i])" in prompt


def test_mock_target_reads_the_prompts_mask_forms_and_nothing_else():
    """The prompt's two forms, read its way: boolean (True = may attend) and additive
    (0 = may attend, -inf or a large negative number = blocked). A forgiving stand-in
    would let an answer be right only against it: no mask, a batch or head axis, and a
    0/1 mask of numbers (1 = attend, where the additive reading says 0 = attend) are
    refused, each with what it is."""
    want = reference.build_tree_mask(3, [-1, 0, -1])
    additive = np.where(want, 0.0, -np.inf)
    large_negative = np.where(want, 0.0, -1e9).astype(np.float32)
    for form in (want, additive, large_negative, np.where(want, 0, -10_000)):
        assert np.array_equal(mock.allowed_matrix(form, 6), want)
    refused = {"no mask": (None, "no mask"), "batch and head axes": (want[None, None], "shape (1, 1, 6, 6)"),
               "0/1 floats": (want.astype(np.float32), "neither boolean nor additive"),
               "0/1 ints": (want.astype(np.int64), "neither boolean nor additive"),
               "small negative": (np.where(want, 0.0, -1.0), "value -1.0"), "wrong size": (want, "expected (7, 7)")}
    for label, (form, words) in refused.items():
        with pytest.raises(ValueError, match=re.escape(words)):
            mock.allowed_matrix(form, 7 if label == "wrong size" else 6)


def test_mock_target_takes_what_the_prompts_target_takes():
    """tokens: a list or a 1-D array of length T, and a mask, positionally or as
    ``mask=``; a (1, T) batch, float ids and a call without a mask are refused."""
    target = mock.TreeTarget(np.random.default_rng(5))
    mask = reference.build_tree_mask(2, [-1, 0])
    a = target([1, 2, 3, 4], mask)
    assert a.shape == (4, 32) and np.array_equal(target.forward(np.array([1, 2, 3, 4]), mask=mask), a)
    with pytest.raises(ValueError, match="tokens of shape"):
        target.forward(np.array([[1, 2, 3, 4]]), mask)
    with pytest.raises(ValueError, match="integers"):
        target.forward(np.array([1.0, 2.0, 3.0, 4.0]), mask)
    with pytest.raises(TypeError):
        target.forward([1, 2, 3, 4])
    with pytest.raises(TypeError):
        target.forward([1, 2, 3, 4], attention_mask=mask)


def test_mock_target_logits_follow_the_mask_only():
    target = mock.TreeTarget(np.random.default_rng(5))
    P, parents = 3, [-1, 0, 0]
    mask = reference.build_tree_mask(P, parents)
    a = target.forward([1, 2, 3, 4, 5, 6], mask)
    b = target.forward(np.array([1, 2, 3, 4, 5, 9]), mask)  # only the last sibling changed
    assert np.array_equal(a[:5], b[:5]) and not np.array_equal(a[5], b[5])
    # A node that sees exactly prompt + path predicts the greedy continuation.
    g = target.continuation([1, 2, 3], 2)
    assert int(a[2].argmax()) == g[0] and target.next_token([1, 2, 3, 4]) == int(a[3].argmax())
    # Seeing a sibling changes what a node predicts.
    leaky = mask.copy()
    leaky[5, 4] = True
    assert not np.array_equal(target.forward([1, 2, 3, 4, 5, 6], leaky)[5], a[5])


def test_results_are_normalised():
    norm = conformance.appended_tokens
    assert norm([4, 5]) == [4, 5]
    assert norm(np.array([4, 5])) == [4, 5]
    assert norm(([4], 5)) == [4, 5]
    assert norm((np.array([], dtype=int), np.int64(7))) == [7]
    assert norm({"accepted": [1, 2], "new_token": 3}) == [1, 2, 3]
    assert norm({"tokens": np.array([8])}) == [8]
    assert norm((4, 5)) == [4, 5]


# -- verdicts ----------------------------------------------------------------------

@pytest.mark.parametrize("seed", [1234, 99])
def test_reference_passes(tmp_path, seed):
    verdict, checks = run(answer_from(tmp_path, REFERENCE), seed)
    assert verdict == "pass", explain(checks)
    assert checks["speed"]["verdict"] == "info"


def test_demo_careful_passes():
    # additive float mask and an (accepted, new_token) result
    verdict, checks = run(MODELS / "demo-careful" / CID, seed=5)
    assert verdict == "pass", explain(checks)


def test_demo_hasty_falls_into_the_position_trap():
    verdict, checks = run(MODELS / "demo-hasty" / CID)
    assert verdict == "fail"
    assert checks["mask_random_trees"]["verdict"] == "pass"
    assert {"golden_rule", "random_trees_match_reference", "all_correct_chain"} <= failing(checks), explain(checks)
    assert checks["golden_rule"]["value"] > 0


def test_demo_quitter_is_unbound_for_verify_only():
    verdict, checks = run(MODELS / "demo-quitter" / CID)
    assert verdict == "unbound"
    assert checks["bind_verify_and_accept"]["verdict"] == "unbound"
    assert checks["mask_random_trees"]["verdict"] == "pass"


def test_answer_folders_ship_the_prompt():
    for model in ("demo-careful", "demo-hasty", "demo-quitter"):
        assert (MODELS / model / CID / "PROMPT.md").read_bytes() == (CHALLENGE / "PROMPT.md").read_bytes()


def test_missing_mask_builder_still_checks_verification(tmp_path):
    src = REFERENCE.replace("build_tree_mask", "_ancestor_matrix")
    verdict, checks = run(answer_from(tmp_path, src))
    assert verdict == "unbound"
    assert checks["bind_build_tree_mask"]["verdict"] == "unbound"
    assert "mask_random_trees" not in checks
    assert checks["golden_rule"]["verdict"] == "pass" and checks["all_correct_chain"]["verdict"] == "pass"


WALK = """        want = int(predicted[P + node])
        out.append(want)
        match = next((c for c in children[node + 1] if tree[c] == want), None)
        if match is None:
            return out
        node = match
"""

MUTANTS = {
    # node i judged by the logits at its own position, as the sketch suggests
    "position_trap": (
        [(WALK, "        match = next((c for c in children[node + 1] if tree[c] == int(predicted[P + c])), None)\n"
                "        if match is None:\n"
                "            out.append(int(predicted[P + node]))\n"
                "            return out\n"
                "        out.append(tree[match])\n"
                "        node = match\n")],
        {"golden_rule", "all_correct_chain"},
    ),
    # looks only at the first child: a wrong first sibling ends the cycle with a replacement
    "replacement_after_wrong_sibling": (
        [("for c in children[node + 1] if", "for c in children[node + 1][:1] if")],
        {"wrong_sibling_no_replacement", "second_root_path", "random_trees_match_reference"},
    ),
    # judges every node on its own, accepted parent or not
    "children_of_rejected_node": (
        [(REFERENCE[REFERENCE.index("    out = []\n"):],
          "    hits = [i for i in range(N) if tree[i] == int(predicted[P + parents[i]])]\n"
          "    last = hits[-1] if hits else -1\n"
          "    return [tree[i] for i in hits] + [int(predicted[P + last])]\n")],
        {"rejected_node_children_skipped"},
    ),
    "mask_sees_siblings": (
        [("mask[P + i, P + i] = True", "mask[P + i, P:P + i + 1] = True")],
        {"mask_random_trees", "golden_rule"},
    ),
    "mask_hides_prompt": (
        [("mask[P:, :P] = True", "mask[P:, :P] = False")],
        {"mask_random_trees", "golden_rule"},
    ),
    "no_bonus_token": (
        [("        want = int(predicted[P + node])",
          "        if node >= 0 and not children[node + 1]:\n            return out\n"
          "        want = int(predicted[P + node])")],
        {"all_correct_chain", "random_trees_match_reference"},
    ),
    "returns_zeros": (
        [("            return out\n", "            return [0] * len(out)\n"),
         ("    return mask\n", "    return np.zeros_like(mask)\n")],
        {"mask_random_trees", "golden_rule", "all_correct_chain"},
    ),
    "caches_outputs": (
        [("def verify_and_accept(prompt_tokens, tree_tokens, tree_parents, target_model, temperature=0):",
          "_MEMO = {}\n\n\ndef verify_and_accept(prompt_tokens, tree_tokens, tree_parents, target_model, temperature=0):\n"
          "    key = (len(prompt_tokens), len(tree_tokens))\n"
          "    if key not in _MEMO:\n"
          "        _MEMO[key] = _verify(prompt_tokens, tree_tokens, tree_parents, target_model, temperature)\n"
          "    return _MEMO[key]\n\n\n"
          "def _verify(prompt_tokens, tree_tokens, tree_parents, target_model, temperature=0):")],
        {"golden_rule", "random_trees_match_reference"},
    ),
}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_is_caught(name, tmp_path):
    edits, must_fail = MUTANTS[name]
    verdict, checks = run(answer_from(tmp_path, mutate(*edits)))
    assert verdict == "fail"
    assert must_fail <= failing(checks), explain(checks)


def test_input_mutation_is_reported(tmp_path):
    # extends the caller's context list in place
    src = mutate(("        if match is None:\n            return out",
                  "        if match is None:\n            prompt_tokens.extend(out)\n            return out"))
    verdict, checks = run(answer_from(tmp_path, src))
    assert verdict == "fail"
    assert "in place" in checks["golden_rule"]["message"]


def test_answer_without_temperature_parameter_still_binds(tmp_path):
    src = mutate((", target_model, temperature=0):", ", target_model):"),
                 ("    if temperature != 0:\n        raise NotImplementedError(\"the reference verifies greedily (temperature=0) only\")\n", ""))
    verdict, checks = run(answer_from(tmp_path, src))
    assert verdict == "pass", explain(checks)


# -- the oracle and the tree generator ---------------------------------------------

@st.composite
def trees(draw):
    n = draw(st.integers(1, 12))
    return draw(st.integers(1, 6)), [draw(st.integers(-1, i - 1)) for i in range(n)]


@settings(max_examples=150, deadline=None)
@given(trees())
def test_reference_mask_is_prompt_plus_ancestors(tree):
    P, parents = tree
    mask = reference.build_tree_mask(P, parents)
    for r in range(P + len(parents)):
        if r < P:
            want = set(range(r + 1))
        else:
            want, node = set(range(P)), r - P
            while node != -1:
                want.add(P + node)
                node = parents[node]
        assert set(np.flatnonzero(mask[r]).tolist()) == want


def test_reference_mask_rejects_unordered_parents():
    with pytest.raises(ValueError):
        reference.build_tree_mask(2, [-1, 2, 0])


@pytest.mark.parametrize("shape", conformance.SHAPES)
def test_random_trees_have_unique_sibling_tokens(shape):
    # Unique siblings make the correct output unique, so comparing with the
    # reference is fair to any correct answer.
    rng = np.random.default_rng(3)
    target = mock.TreeTarget(rng)
    for _ in range(50):
        prompt, tokens, parents = conformance.random_case(rng, target, shape, lambda key, default: default)
        assert all(-1 <= p < i for i, p in enumerate(parents))
        for parent in set(parents):
            siblings = [tokens[i] for i, p in enumerate(parents) if p == parent]
            assert len(siblings) == len(set(siblings))



@pytest.mark.parametrize("prompt", [False, True])
def test_own_target_model_with_the_tree_mask_passes_its_contract(prompt, tmp_path):
    """The published prompt asks the answer to write its target model: the
    reference's applies the tree mask, so the contract holds; under our
    prompt, which asks for no model, the same check is only a figure."""
    folder = tmp_path / "answer"
    folder.mkdir()
    (folder / "answer.py").write_text((BUNDLED_CHALLENGES / "dflash_verify" / "reference.py").read_text())
    if prompt:
        (folder / "PROMPT.md").write_bytes((BUNDLED_CHALLENGES / "dflash_verify" / "PROMPT.md").read_bytes())
    check = {c["name"]: c for c in run_local("dflash_verify", folder, seed=5)["checks"]}["own_target_contract"]
    assert check["verdict"] == ("info" if prompt else "pass"), check
    assert "masked tokens unseen" in check["message"], check
