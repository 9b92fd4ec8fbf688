"""Known-wrong answers, per challenge: each is the challenge's reference with
one bug people and models really write (a parameter ignored for a constant,
the wrong sort key, a clipped straight-through gradient, a running maximum
dropped, a prediction read from the wrong position, ...). Every one must get
``fail`` from its challenge's suite, and from the check meant to catch it:
a suite that gets weaker lets one pass, and this test says which.

Each answer folder carries the challenge's own PROMPT.md, as a deployed
answer does, so checks our prompt alone asks for are judged too. The cases
that catch these bugs are fixed (no seed decides them), so one seed is run.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from benchtui.authoring.soundness import static_names
from benchtui.challenges import contracts
from benchtui.challenges.definition import BUNDLED_CHALLENGES, load_challenge
from benchtui.runner.local import run_local
from challenge_kit import checks_by_name, fast_copy, mutate_source, run_stages, run_variants

SEED = 30

# lighter sizes: the bugs below are caught by fixed cases, not by size
FAST = {
    "backwards": {"speed_shape": "[2, 16, 64]", "timing_budget_s": "0.05"},
    # a check's wall-clock limit of 20 s, met on a quiet machine, is passed by the larger-vocabulary
    # checks on one shared by other jobs: these answers are judged on what they return
    "beam_search": {"timing_budget_s": "0.05", "check_timeout_s": "90"},
    "dflash_verify": {"golden_trees": "40", "mask_trees": "20", "timing_budget_s": "0.05"},
    "flash_attention": {"memory_n": "1024", "speed_shape": "[1, 1, 128, 32]", "speed_tile": "64",
                        "timing_budget_s": "0.05"},
    "flash_attention_bwd": {"grad_shape": "[1, 2, 128, 32]", "grad_tile": "32", "fd_shape": "[1, 1, 32, 16]",
                            "fd_tile": "8", "memory_shape": "[1, 1, 2048, 64]", "speed_shape": "[1, 1, 128, 32]",
                            "timing_budget_s": "0.05"},
    "kv": {"memory_steps": "128", "speed_lengths": "[20, 12]", "speed_steps": "4", "timing_budget_s": "0.05"},
    "ternary_training": {"timing_budget_s": "0.02"},
    "top_p": {"timing_budget_s": "0.05"},
}

# A verifier that takes nodes in index order and reads each one's prediction
# at the position of the node before it (not its parent's), stopping at the
# first rejection: right on chains, wrong once a root follows an accepted root.
PREVIOUS_POSITION_VERIFIER = '''
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
    logits = np.asarray(target_model.forward(list(prompt_tokens) + list(tree_tokens),
                                             build_tree_mask(P, tree_parents)))
    out = []
    for i, tok in enumerate(tree_tokens):
        want = int(np.argmax(logits[P + i - 1]))
        out.append(want)
        if int(tok) != want:
            return out
    return out + [int(np.argmax(logits[P + len(tree_tokens) - 1]))]
'''

# challenge -> variant -> (edits to reference.py, the check that must fail)
VARIANTS: dict[str, dict[str, tuple[list[tuple[str, str]], str]]] = {
    "backwards": {
        "eps_ignored_for_a_constant": ([("np.sqrt(var + eps)", "np.sqrt(var + 1e-5)")], "eps_far_from_default"),
        "one_pass_variance": ([("var = (xc * xc).mean(axis=-1, keepdims=True)",
                                "var = (x * x).mean(axis=-1, keepdims=True) - mean * mean")],
                              "huge_mean_tiny_variance"),
        "dx_without_mean_term": ([("rstd * (g - g.mean(axis=-1, keepdims=True) - ", "rstd * (g - ")],
                                 "backward_dx"),
    },
    "beam_search": {
        # its own toy model returns nothing: the harness cannot read its convention, and the
        # model is still the answer's own, held to what the prompt says a model returns
        "own_model_returns_nothing": ([("        return self._norm(x) @ self.unembed", "        return None")],
                                      "own_model_contract"),
        "alpha_ignored_for_a_constant": ([("logprob / (max(length, 1) ** alpha)", "logprob / (max(length, 1) ** 0.6)")],
                                         "length_penalty_order"),
        "result_ordered_by_raw_logprob": ([("    return [(b[0], score(b)) for b in beams]",
                                            "    return [(b[0], score(b)) for b in sorted(beams, key=lambda b: b[1], "
                                            "reverse=True)]")], "length_penalty_order"),
        "ranked_by_raw_logprob": ([("beams = sorted(candidates, key=score, reverse=True)[:k]",
                                    "beams = sorted(candidates, key=lambda b: b[1], reverse=True)[:k]")],
                                  "length_penalty_order"),
        # minimax-m2.7's fault: a finished beam's EOS costs nothing, so EOS wins whenever it is a candidate
        "eos_scored_free": ([("candidates.append((tokens + [tok], logp + float(lp[tok]), tok == eos_token_id))",
                              "candidates.append((tokens + [tok], logp + (0.0 if tok == eos_token_id else "
                              "float(lp[tok])), tok == eos_token_id))")], "greedy_k1"),
        "beam_width_ignored_for_a_constant": ([("    k = beam_width\n", "    k = 4\n")], "max_new_tokens_unfinished"),
        # token ids kept in 16 bits: right while every id is below 32768, as in a 1000-token toy model
        "token_ids_in_int16": ([("model(np.array(prompt + tokens, dtype=np.int64))",
                                 "model(np.array(prompt + tokens, dtype=np.int16))")], "large_vocabulary"),
        # a log-softmax shifted by the row's first logit: fine while a row spans a few units
        "log_softmax_shift_by_first_logit": ([("    m = z.max(axis=-1, keepdims=True)", "    m = z[..., :1]")],
                                             "logits_row_spread"),
        # EOS tested by truth value: id 0, an id the prompt allows, never ends a beam (an EOS
        # drawn at random was 0 on one seed in a vocabulary's size)
        "eos_tested_by_truth_value": ([("logp + float(lp[tok]), tok == eos_token_id))",
                                        "logp + float(lp[tok]), bool(eos_token_id) and tok == eos_token_id))")],
                                      "eos_id_edges"),
        # the top 2K by argpartition: kth=2K is out of bounds once the vocabulary is no larger than 2K
        "top_2k_by_argpartition": ([('for tok in np.argsort(-lp, kind="stable")[: 2 * k]:',
                                     "for tok in np.argpartition(-lp, 2 * k)[: 2 * k]:")], "vocab_at_and_below_2k"),
    },
    "dflash_verify": {
        # an empty tree taken, and nothing appended: a cycle always appends the bonus token
        "empty_tree_appends_nothing": ([("    P, N = len(prompt), len(tree)\n",
                                         "    P, N = len(prompt), len(tree)\n    if N == 0:\n        return []\n")],
                                       "empty_tree"),
        # a one-node tree goes down the empty-tree path: a right node is never accepted
        "single_node_tree_skipped": ([("    P, N = len(prompt), len(tree)\n",
                                       "    P, N = len(prompt), len(tree)\n    if N <= 1:\n        tree, parents, N = [], [], 0\n")],
                                     "smallest_inputs_bonus"),
        # predictions cast to 16 bits: ids of 2^15 and more come back negative
        "predictions_in_int16": ([("predicted = logits.reshape(P + N, -1).argmax(axis=-1)",
                                   "predicted = logits.reshape(P + N, -1).argmax(axis=-1).astype(np.int16)")],
                                 "large_vocabulary"),
        # the target's input ids cast to 16 bits: the target sees other tokens than the prompt and the tree
        "input_ids_in_uint16": ([("np.array(prompt + tree, dtype=np.int64)", "np.array(prompt + tree).astype(np.uint16)")],
                                "large_vocabulary"),
        # an empty tree's bonus token read from the first prompt row: right only on a one-token prompt
        "empty_tree_bonus_from_first_row": ([("want = int(predicted[P + node])", "want = int(predicted[P + node if N else 0])")],
                                            "empty_tree"),
        # kimi-k2.6's empty-tree path: the target called without the mask its prompt says the target
        # takes (a stand-in that read no mask as causal passed it)
        "empty_tree_target_without_mask": ([("build_tree_mask(P, parents)))",
                                             "*([build_tree_mask(P, parents)] if N else [])))")], "empty_tree"),
        "mask_sees_earlier_nodes": ([("            mask[P + i, P:P + N] |= mask[P + parent, P:P + N]",
                                      "            mask[P + i, P:P + i] = True")], "mask_random_trees"),
    },
    "flash_attention": {
        "tile_max_not_running_max": ([("m_new = np.maximum(m, s.max(axis=-1, keepdims=True))",
                                       "m_new = s.max(axis=-1, keepdims=True)")], "large_scores"),
        "causal_ignored": ([("                s = np.where(cols > rows, -np.inf, s)\n", "")], "causal_256_tile64"),
    },
    "flash_attention_bwd": {
        # qwen36's forward: each key tile's own maximum, no running maximum
        "tile_max_not_running_max": ([("m_new = np.maximum(m, s.max(axis=-1))", "m_new = s.max(axis=-1)")],
                                     "large_scores"),
        "missing_rowsum_term": ([("ds = p * (dp - Dr[:, :, q_lo:q_hi, None])", "ds = p * dp")], "gradients_vs_reference"),
    },
    "kv": {
        "padding_attended": ([("        scores = np.where(valid[:, None, :], scores, -np.inf)\n", "")],
                             "decode_matches_full_attention"),
        # a softmax shifted by the row's first score: fine while a row spans a few units
        "softmax_shift_by_first_score": ([("scores -= scores.max(axis=-1, keepdims=True)", "scores -= scores[..., :1]")],
                                         "row_spread_scores"),
        "scale_ignored": ([(") / np.sqrt(q.shape[-1])\n        valid", ")\n        valid")],
                          "decode_matches_full_attention"),
    },
    "ternary_training": {
        "ste_zero_beyond_one": ([("return np.array(grad_wq, copy=True)",
                                  "return np.where(np.abs(w) <= 1.0, grad_wq, 0.0)")], "ste_gradient"),
        "ste_zero_beyond_group_scale": ([("return np.array(grad_wq, copy=True)",
                                          "return np.where(np.abs(ternary_quantize(w, group_size)) >= "
                                          "np.abs(w) / 1.5, grad_wq, 0.0)")], "ste_gradient"),
        "group_size_ignored_for_a_constant": ([("    q, s = ternary_codes(w, group_size)\n"
                                                "    return (q.reshape(w.shape[0], -1, group_size)",
                                                "    q, s = ternary_codes(w, 128)\n"
                                                "    return (q.reshape(w.shape[0], -1, 128)")],
                                              "group_size_honoured"),
        # a layer's backward that clips the input gradient where activations exceed 1
        "dx_clipped_beyond_one": ([("    return dx, dw\n", "    return dx * (np.abs(x) <= 1), dw\n")],
                                  "linear_backward_dx"),
        # a training loop whose softmax is shifted by each column's max (the batch axis): it
        # still lowers the loss, but stops far short of the byte frequencies
        "softmax_shift_over_the_batch": ([("z = logits - logits.max(-1, keepdims=True)",
                                           "z = logits - logits.max(0, keepdims=True)")], "smoke_loss_falls"),
    },
    "top_p": {
        "p_ignored_for_a_constant": ([("before < p", "before < 0.9")], "fixed_crossing_token"),
        "crossing_token_dropped": ([("before < p", "np.cumsum(ranked, axis=-1) <= p")], "fixed_crossing_token"),
        "sorted_ascending": ([("np.argsort(-probs, axis=-1", "np.argsort(probs, axis=-1")], "fixed_crossing_token"),
    },
}
# variants written whole: challenge -> variant -> ({file: source}, the check that must fail)
WRITTEN = {
    "dflash_verify": {
        # kimi-k2.6's fault: the golden rule breaks in a few random cycles, always on the fixed trees
        "prediction_from_previous_position": ({"verify.py": PREVIOUS_POSITION_VERIFIER}, "golden_rule_fixed_trees"),
    },
}
# ternary_training's checks by the stage of its suite that records them (its conformance's
# run_stages): a bug meant for one of these runs through that stage alone, not through a
# minutes-long training of a real model it is not about; the reference runs the whole suite
STAGE_OF = {"ste_gradient": "ste", "linear_backward_dx": "ste", "group_size_honoured": "quantizer",
            "quantize_zero_group": "quantizer", "smoke_loss_falls": "smoke", "reported_loss_recomputed": "smoke",
            "smoke_model_sees_order": "smoke", "architecture_first_block": "architecture",
            "architecture_past_first_block": "architecture", "cached_decoding": "architecture",
            "ternary_block_projections": "layers",
            # judged alone: a whole kv run decodes for tens of seconds in pure Python
            "memory_figure_recomputed": "memory_figure", "decode_to_capacity": "capacity",
            "causal_default": "causal_default", "selection_new_tokens_length": "selection_new_tokens_length"}
# checks of other challenges a planted case runs alone, by their suite's run_stages
STAGED_CHECKS = {"memory_figure_recomputed", "decode_to_capacity", "causal_default", "selection_new_tokens_length"}
STAGED = {"ternary_training"}
CASES = sorted([(cid, name) for cid, names in VARIANTS.items() for name in names]
               + [(cid, name) for cid, names in WRITTEN.items() for name in names])


@pytest.fixture(scope="module")
def fast_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("known-wrong")


def answer_files(cid: str, name: str) -> tuple[dict[str, str], str]:
    if cid in WRITTEN and name in WRITTEN[cid]:
        return WRITTEN[cid][name]
    edits, check = VARIANTS[cid][name]
    return {"answer.py": mutate_source((BUNDLED_CHALLENGES / cid / "reference.py").read_text(), *edits)}, check


def run_variant(tmp_path: Path, root: Path, cid: str, files: dict[str, str], check: str | None = None) -> dict:
    """The suite on an answer of ``files`` beside our PROMPT.md; with ``check``, on a
    staged challenge, only the stage that records it."""
    folder = tmp_path / "answer"
    folder.mkdir()
    (folder / "PROMPT.md").write_bytes((BUNDLED_CHALLENGES / cid / "PROMPT.md").read_bytes())
    for filename, source in files.items():
        (folder / filename).write_text(source)
    return run_answer(cid, folder, root, check)


def run_answer(cid: str, folder: Path, root: Path, check: str | None, **kw) -> dict:
    challenges = fast_copy(cid, root, FAST[cid])
    if check is not None and (cid in STAGED or check in STAGED_CHECKS):
        return run_stages(cid, folder, (STAGE_OF[check],), seed=SEED, challenges_dir=challenges, **kw)
    return run_local(cid, folder, seed=SEED, challenges_dir=challenges, **kw)


def test_every_challenge_keeps_known_wrong_answers():
    bundled = {d.name for d in BUNDLED_CHALLENGES.iterdir() if (d / "challenge.toml").is_file()}
    # fuse's and paged_attention's answers are CUDA: their own tests keep their mutants (a NumPy
    # stand-in of the answer's process here, the demo answers on a GPU)
    assert bundled - {"fuse", "paged_attention"} == {cid for cid, _ in CASES}


@pytest.mark.parametrize("cid,name", CASES, ids=[f"{c}/{n}" for c, n in CASES])
def test_known_wrong_answer_fails(cid, name, tmp_path, fast_root):
    files, check = answer_files(cid, name)
    result = run_variant(tmp_path, fast_root, cid, files, check)
    checks = checks_by_name(result)
    summary = {n: (c["verdict"], (c.get("message") or "")[:160]) for n, c in checks.items() if c["verdict"] != "pass"}
    assert result["verdict"] == "fail", (name, summary)
    assert checks[check]["verdict"] == "fail", (name, check, summary)


@pytest.mark.parametrize("cid", sorted(FAST))
def test_the_reference_itself_passes_as_deployed(cid, tmp_path, fast_root):
    """The same harness on the unedited reference: the variants fail for their bug."""
    source = (BUNDLED_CHALLENGES / cid / "reference.py").read_text()
    result = run_variant(tmp_path, fast_root, cid, {"answer.py": source})
    checks = checks_by_name(result)
    failing = {n: c.get("message") for n, c in checks.items() if c["verdict"] not in ("pass", "info", "skipped")}
    assert not failing, failing
    # the contract table names only checks this suite has (FAST shrinks flash_attention's memory case)
    names = contracts.recorded_names(result["checks"]) | static_names(load_challenge(BUNDLED_CHALLENGES / cid))
    names |= {"memory_4096_tile128"} if cid == "flash_attention" else set()
    table = contracts.load(BUNDLED_CHALLENGES / cid)
    assert contracts.problems(table, (BUNDLED_CHALLENGES / cid / "PROMPT.md").read_text(), names) == []


# ---------------------------------------------------------------------------
# Faults an answer's own tests miss: a reported score its prompt forbids, a
# model's logits summed without log_softmax, the answer's own model breaking
# its contract (the suite swaps it for a mock everywhere else), a softmax
# without its row maximum, and the smallest inputs a contract allows. Each
# passed the suites before the check named beside it existed.
BEAM_SEARCH_CALL = "lp = log_softmax(np.asarray(model(np.array(prompt + tokens, dtype=np.int64)))[-1])"
MISSED_BY_OWN_TESTS: dict[str, dict[str, tuple[list[tuple[str, str]], str]]] = {
    "beam_search": {
        # the prompt: "a reported score must equal logprob / len(new_tokens) ** alpha"
        "reports_raw_logprob": ([("    return [(b[0], score(b)) for b in beams]",
                                  "    return [(b[0], b[1]) for b in beams]")], "scores_recomputed"),
        "logits_not_normalised": ([(BEAM_SEARCH_CALL,
                                    "lp = np.asarray(model(np.array(prompt + tokens, dtype=np.int64)))[-1]")],
                                  "logits_normalised"),
        # its own model's get_log_probs returns logits; the search calls it and trusts the name
        "own_model_log_probs_unnormalised": ([("        return self._norm(x) @ self.unembed\n",
                                               "        return self._norm(x) @ self.unembed\n\n"
                                               "    def get_log_probs(self, tokens):\n"
                                               "        return self(tokens)[-1]\n"),
                                              (BEAM_SEARCH_CALL, "lp = np.asarray(model.get_log_probs("
                                                                 "np.array(prompt + tokens, dtype=np.int64)))")],
                                             "own_model_contract"),
        # squeezes the batch axis away: with a one-token prompt the first step's (1, V) logits
        # become (V,) and [-1] picks a single logit (an error where the search sorts it)
        "squeezed_logits": ([(BEAM_SEARCH_CALL, "lp = log_softmax(np.squeeze(np.asarray(model(np.array("
                                                "prompt + tokens, dtype=np.int64))))[-1])")], "smallest_inputs"),
    },
    "kv": {
        "softmax_without_max": ([("        scores -= scores.max(axis=-1, keepdims=True)\n        weights = np.exp(scores)\n"
                                  "        weights /=", "        weights = np.exp(scores)\n        weights /=")],
                                "large_scores"),
    },
    "dflash_verify": {
        # its own target model (the published prompt asks for one) applies no mask: every row sees
        # every token; judged without a PROMPT.md, so the published prompt's check counts
        "own_target_ignores_tree_mask": ([("        s = np.where(allowed, s, -np.inf)\n", "")], "own_target_contract"),
    },
}
# what the catching check's message must name, so a reader sees the fault itself
MISSED_MESSAGES = {"reports_raw_logprob": "raw accumulated log-prob", "logits_not_normalised": "without normalising",
                   "own_model_log_probs_unnormalised": "log_softmax missing",
                   "softmax_without_max": "subtract each row's maximum",
                   "own_target_ignores_tree_mask": "the mask is not applied",
                   "squeezed_logits": "a one-token prompt"}
MISSED_CASES = sorted((cid, name) for cid, names in MISSED_BY_OWN_TESTS.items() for name in names)
# judged without a PROMPT.md: every check counts, checks only the published prompt asks for included
WITHOUT_PROMPT = {"own_target_ignores_tree_mask"}


@pytest.mark.parametrize("cid,name", MISSED_CASES, ids=[f"{c}/{n}" for c, n in MISSED_CASES])
def test_fault_missed_by_own_tests_fails(cid, name, tmp_path, fast_root):
    edits, check = MISSED_BY_OWN_TESTS[cid][name]
    source = mutate_source((BUNDLED_CHALLENGES / cid / "reference.py").read_text(), *edits)
    if name in WITHOUT_PROMPT:
        folder = tmp_path / "answer"
        folder.mkdir()
        (folder / "answer.py").write_text(source)
        result = run_local(cid, folder, seed=SEED, challenges_dir=fast_copy(cid, fast_root, FAST[cid]))
    else:
        result = run_variant(tmp_path, fast_root, cid, {"answer.py": source})
    checks = checks_by_name(result)
    summary = {n: (c["verdict"], (c.get("message") or "")[:160]) for n, c in checks.items() if c["verdict"] != "pass"}
    # a smallest input may crash a wrong answer: an error there is the catch too
    caught = ("fail", "error") if check == "smallest_inputs" else ("fail",)
    assert result["verdict"] in caught, (name, summary)
    assert checks[check]["verdict"] in caught, (name, check, summary)
    assert MISSED_MESSAGES[name] in checks[check]["message"], checks[check]["message"]

# -- Known-wrong answers whose catch is deliberate: each must fail the check
# designed for it, and that check's message must say what it caught. --------

# challenge -> variant -> (edits to reference.py, the check that must fail, words its message must hold)
DELIBERATE: dict[str, dict[str, tuple[list[tuple[str, str]], str, str]]] = {
    "flash_attention_bwd": {
        # the backward's row sum of dO * O taken in float32: 1e-7 relative, inside every gradient
        # tolerance on random inputs; dQ and dK must vanish when every key carries the same value
        "rowsum_in_float32": ([("Dr = (dO * O).sum(axis=-1)", "Dr = (dO * O).sum(axis=-1, dtype=np.float32)")],
                              "rowsum_cancels", "float32"),
        # the forward's running maximum taken over the tile before the causal mask
        "max_before_causal_mask": ([("                s = np.where(cols > rows, -np.inf, s)\n"
                                     "            m_new = np.maximum(m, s.max(axis=-1))\n",
                                     "                s_masked = np.where(cols > rows, -np.inf, s)\n"
                                     "            m_new = np.maximum(m, s.max(axis=-1))\n"
                                     "            if causal and k_hi - 1 > q_lo:\n"
                                     "                s = s_masked\n")],
                                   "masked_key_large", "maximum was taken before the causal mask"),
    },
    "ternary_training": {
        # the reported validation figure computed on a freshly built model, not the trained one
        # (a figure from a stale checkpoint or log): the loop itself is sound
        "reported_loss_of_a_stale_model": ([("    z = model(chunk[:, :-1])\n    z = z - z.max(-1, keepdims=True)\n    logp",
                                             "    z = ByteMLP(np.random.default_rng(0))(chunk[:, :-1])\n"
                                             "    z = z - z.max(-1, keepdims=True)\n    logp")],
                                           "reported_loss_recomputed", "the reported figure is not its model's"),
        # the context bytes taken as a set, not in order: position-blind, as a decoder whose rotary
        # embedding is left out; it still trains to the byte frequencies
        "position_blind_context": ([("return np.stack([padded[..., i:i + ids.shape[-1]] for i in range(self.context)], axis=-1)",
                                     "return np.sort(np.stack([padded[..., i:i + ids.shape[-1]] for i in range(self.context)], "
                                     "axis=-1), axis=-1)")],
                                   "smoke_model_sees_order", "does not see the order of its input"),
    },
}
DELIBERATE_CASES = sorted((cid, name) for cid, names in DELIBERATE.items() for name in names)


@pytest.mark.parametrize("cid,name", DELIBERATE_CASES, ids=[f"{c}/{n}" for c, n in DELIBERATE_CASES])
def test_known_wrong_answer_is_caught_by_the_check_made_for_it(cid, name, tmp_path, fast_root):
    edits, check, words = DELIBERATE[cid][name]
    source = mutate_source((BUNDLED_CHALLENGES / cid / "reference.py").read_text(), *edits)
    result = run_variant(tmp_path, fast_root, cid, {"answer.py": source}, check)
    checks = checks_by_name(result)
    summary = {n: (c["verdict"], (c.get("message") or "")[:160]) for n, c in checks.items() if c["verdict"] != "pass"}
    assert result["verdict"] == "fail", (name, summary)
    assert check in checks and checks[check]["verdict"] == "fail", (name, check, summary)
    assert words in (checks[check].get("message") or ""), (name, checks[check].get("message"))


# -- One-line bugs planted in real answers that pass: each passed the suite
# before the check beside it existed (the model never compared with the
# architecture its prompt names, its cached decoding never run, its own
# evaluation never bound). The published answers are read from the published
# benchmark beside the repository; without it those cases are skipped. ------

REPO = Path(__file__).resolve().parents[2]
PUBLISHED = REPO.parent / "shared" / "published-benchmark" / "llm_programming_tests"
REAL_ANSWERS = {"demo-careful": REPO / "models" / "demo-careful" / "ternary_training",
                "glm5.1": PUBLISHED / "glm5.1" / "ternary_training", "glm5": PUBLISHED / "glm5" / "ternary_training"}
REPEAT_KV = "return mx.broadcast_to(x[:, :, None, :, :], (B, H, n_rep, L, D)).reshape("
# variant -> (answer, file, old line, new line, the check that must fail, words its message must hold)
PLANTED: dict[str, tuple[str, str, str, str, str, str]] = {
    # the named architecture
    "attention_not_scaled": ("demo-careful", "qwen3_ternary.py", "scale=self.head_dim ** -0.5", "scale=1.0",
                             "architecture_first_block", "not scaled by 1/sqrt(head_dim)"),
    "rotary_adjacent_pairs": ("demo-careful", "qwen3_ternary.py", "nn.RoPE(self.head_dim, base=cfg.rope_theta)",
                              "nn.RoPE(self.head_dim, traditional=True, base=cfg.rope_theta)",
                              "architecture_first_block", "adjacent pairs"),
    "one_block_repeated": ("demo-careful", "qwen3_ternary.py", "self.blocks = [Block(cfg) for _ in range(cfg.n_layers)]",
                           "self.blocks = [Block(cfg)] * cfg.n_layers", "architecture_past_first_block",
                           "one block's weights"),
    "gqa_heads_round_robin": ("glm5.1", "ternary_model.py", REPEAT_KV,
                              "return mx.broadcast_to(x[:, None, :, :, :], (B, n_rep, H, L, D)).reshape(",
                              "architecture_first_block", "round-robin"),
    "blocks_read_the_embeddings": ("glm5.1", "ternary_model.py", "h = layer(h, mask, c)",
                                   "h = layer(self.embed_tokens(inputs), mask, c)", "architecture_past_first_block",
                                   "reads the embeddings"),
    # the named model's real configuration: Qwen3's rotary base (1,000,000) hard-coded as the common
    # 10000, which a test configuration of 10000 never told apart
    "rope_base_hard_coded": ("glm5.1", "ternary_model.py", "nn.RoPE(head_dim, base=args.rope_theta,",
                             "nn.RoPE(head_dim, base=10000.0,", "architecture_first_block", "the rotary base is 10000"),
    # a default argument: its Model's group size, which a caller may leave out, halved; the layers
    # of a Model built without it quantise groups of 64, not the prompt's 128
    "model_group_size_default_halved": ("glm5.1", "ternary_model.py",
                                        "    def __init__(self, args: ModelArgs, group_size: int = 128):\n"
                                        "        super().__init__()\n        self.args = args",
                                        "    def __init__(self, args: ModelArgs, group_size: int = 64):\n"
                                        "        super().__init__()\n        self.args = args",
                                        "ternary_block_projections", "not ternary as the prompt asks"),
    # the cached decoding path
    "cached_keys_without_offset": ("glm5.1", "ternary_model.py", "k = self.rope(k, offset=cache.offset)",
                                   "k = self.rope(k)", "cached_decoding", "keys are rotated at position 0"),
    "decoding_mask_without_offset": ("glm5.1", "ternary_model.py", "dtype=h.dtype), k=1 + offset", "dtype=h.dtype), k=1",
                                     "cached_decoding", "the attention mask ignores the cache's offset"),
    "cache_never_read": ("glm5", "run_rerun.py", "keys, values = cache.update_and_fetch(keys, values)",
                         "cache.update_and_fetch(keys, values)", "cached_decoding", "never read"),
    "cached_queries_without_offset": ("glm5", "run_rerun.py", "queries = self.rope(queries, offset=cache.offset)",
                                      "queries = self.rope(queries)", "cached_decoding",
                                      "queries are rotated at position 0"),
    # the figure the answer reports: its validation loss divided by the wrong count
    "validation_loss_per_window": ("glm5", "run_rerun.py", "val_losses_list.append(float(vl))",
                                   "val_losses_list.append(float(vl) / eval_batch_size)", "reported_loss_recomputed",
                                   "the reported figure is not its model's"),
    "validation_mean_over_all_windows": ("glm5", "run_rerun.py",
                                         "avg_val_loss = np.mean(val_losses_list) if val_losses_list",
                                         "avg_val_loss = np.sum(val_losses_list) / n_val if val_losses_list",
                                         "reported_loss_recomputed", "the reported figure is not its model's"),
}


# The checks these bugs meet compare the answer's model with the checker's reference or with
# itself, however long it trained: its smoke run trains 2 steps here, and the unplanted answer
# passes each of those checks on the same run (the control)
PLANTED_FAST = {"timing_budget_s": "0.02", "smoke_steps": "2"}
UNPLANTED = "(unplanted)"


@pytest.fixture(scope="module")
def planted_results(tmp_path_factory):
    """model -> {variant or UNPLANTED: result}: every bug planted in one real answer, and
    the answer as it is, judged one after another in one answer process (run_variants)."""
    cache: dict[str, dict] = {}
    challenges = fast_copy("ternary_training", tmp_path_factory.mktemp("planted"), PLANTED_FAST)

    def results(model: str) -> dict:
        if model not in cache:
            source = REAL_ANSWERS[model]
            if not source.is_dir():
                pytest.skip(f"no published benchmark at {PUBLISHED}")
            variants = {}
            for name, (owner, filename, old, new, check, _) in PLANTED.items():
                if owner == model:
                    text = mutate_source((source / filename).read_text(), (old, new), count=1)
                    variants[name] = ({filename: text}, (STAGE_OF[check],))
            stages = tuple(dict.fromkeys(stage for _, (stage,) in variants.values()))
            cache[model] = run_variants("ternary_training", source, {UNPLANTED: ({}, stages), **variants}, seed=SEED,
                                        challenges_dir=challenges, model=model,
                                        adapter=BUNDLED_CHALLENGES / "ternary_training" / "adapters" / f"{model}.py")
        return cache[model]

    return results


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xdist_group(f"planted-{PLANTED[n][0]}"))
                                  for n in sorted(PLANTED)], ids=[f"ternary_training/{n}" for n in sorted(PLANTED)])
def test_bug_planted_in_a_real_answer_is_caught(name, planted_results):
    model, *_, check, words = PLANTED[name]
    results = planted_results(model)
    result, control = results[name], checks_by_name(results[UNPLANTED])
    checks = checks_by_name(result)
    summary = {n: (c["verdict"], (c.get("message") or "")[:160]) for n, c in checks.items() if c["verdict"] != "pass"}
    assert result["verdict"] == "fail", (name, summary)
    assert check in checks and checks[check]["verdict"] == "fail", (name, check, summary)
    assert words in (checks[check].get("message") or ""), (name, checks[check].get("message"))
    # the same check passes the answer without the bug, on the same run
    assert control[check]["verdict"] == "pass", (model, check, control[check].get("message"))


@pytest.mark.xdist_group("planted-glm5")
def test_a_copy_of_the_model_no_check_ran_is_named(planted_results):
    """glm5 ships its Qwen3 model three times: the checks judge run_rerun.py's (its
    adapter's architecture_model and smoke run), while ternary_model.py's, which its
    train.py imports, never runs. A bug planted there passes, so the run names that
    file: a figure (info), the verdict as it was."""
    result = planted_results("glm5")[UNPLANTED]
    checks = checks_by_name(result)
    assert checks["architecture_first_block"]["verdict"] == "pass"  # its smoke run is 2 steps here: no verdict read
    unreached = checks["unreached_code"]
    assert unreached["verdict"] == "info"
    files = {e["file"]: e for e in unreached["details"]["files"]}
    assert "ternary_model.py" in files, unreached["message"]
    assert {"TernaryAttention", "TernaryModel"} <= set(files["ternary_model.py"]["definitions"])
    assert files["ternary_model.py"]["judged"] == ["run_rerun.py"]
    assert "ternary_model.py defines" in unreached["message"] and "the checks ran run_rerun.py's" in unreached["message"]
    assert "answer's process" in unreached["details"]["measured_by"]


@pytest.mark.xdist_group("planted-demo-careful")
def test_an_answer_with_one_copy_of_its_model_has_no_unreached_code(planted_results):
    result = planted_results("demo-careful")[UNPLANTED]
    assert any(c["details"].get("reach") for c in result["checks"])  # measured, and nothing to name
    assert "unreached_code" not in checks_by_name(result)


# -- One-line bugs planted in real published answers, one per kind of contract a
# suite left unexercised: each passed the suite before the check beside it (a
# contract the prompt states that no case exercised, an edge never built). ----

# variant -> (challenge, model, file, old line, new line, the check that must fail, words its message must hold)
CONTRACT_PLANTED: dict[str, tuple[str, str, str, str, str, str, str]] = {
    # exact shape: dbeta keeps the summed axes, (1, 1, D) for (D,); the error checks reshaped any
    # output of the right size. Judged against this repository's prompt, which fixes the shapes
    # (the published one fixes only the inputs'): glm5's answer passes every check of it as it is
    "dbeta_keeps_summed_axes": ("backwards", "glm5", "layer_norm.py", "dbeta  = dy.sum(axis=(0, 1))",
                                "dbeta  = dy.sum(axis=(0, 1), keepdims=True)", "output_shapes",
                                "dbeta (1, 1, 1), expected (1,)"),
    # a special token inside the prompt read as the end: a prompt whose last token is EOS starts
    # finished (every mock prompt left EOS out)
    "prompt_ending_in_eos_starts_finished": ("beam_search", "opus47_1m", "beam_search.py", '"finished": False,',
                                             '"finished": bool(p) and p[-1] == eos_token_id,', "eos_in_prompt",
                                             "an EOS in the prompt does not finish a beam"),
    # a zero group: glm5.1's guard on the scale dropped, so an all-zero group divides 0 by 0
    # (random weights never make one)
    "zero_group_scale_unguarded": ("ternary_training", "glm5.1", "ternary_model.py",
                                   "    scales = mx.maximum(scales, 1e-5)\n", "", "quantize_zero_group",
                                   "not finite where a group of 128 weights is all zero"),
    # an edge met by chance, now built: the search stops once the first item is done; random
    # models make the first item finish while another runs only on some seeds
    "batch_stops_when_the_first_item_is_done": ("beam_search", "opus47_1m", "beam_search.py",
                                                "for beams in state):\n            break",
                                                "for beams in state[:1]):\n            break",
                                                "ragged_finish", "one item's end is not the batch's"),
    # a default in a function the prompt names: the published prompt delivers
    # flash_attention_fwd(Q, K, V, tile_size, causal=True); every check passed causal explicitly
    "causal_default_flipped": ("flash_attention", "opus47_1m", "flash_attention.py",
                               "def flash_attention_fwd(Q, K, V, tile_size, causal=True):",
                               "def flash_attention_fwd(Q, K, V, tile_size, causal=False):", "causal_default",
                               "returns non-causal attention"),
    # a reported memory footprint nothing recomputed: the cache's bytes counted for the keys only
    "memory_figure_without_values": ("kv", "opus47_1m", "kv_cache.py",
                                     "return 2 * num_layers * B * H * S * D * dtype_bytes",
                                     "return num_layers * B * H * S * D * dtype_bytes", "memory_figure_recomputed",
                                     "its keys and values take"),
    # decoding up to the cache's capacity: the buffer one token short, so the cache's last row
    # overflows only where a sequence fills it (the checks decoded far below any capacity)
    "cache_buffer_one_token_short": ("kv", "opus47_1m", "kv_cache.py",
                                     "n = batch_size * num_heads * max_seq_len * head_dim",
                                     "n = batch_size * num_heads * (max_seq_len - 1) * head_dim", "decode_to_capacity",
                                     "decoding up to the cache's capacity"),
    # the length penalty's length counted with the prompt's tokens while selecting each step's K
    # (the returned order still by new tokens): a finished beam then outlasts a longer unfinished
    # one it should lose to; no case had finished and unfinished beams of other lengths compete
    # over a prompt of several tokens at a non-zero alpha
    "prompt_counted_in_selection_length": ("beam_search", "glm5", "beam_search.py",
                                           "pool.sort(\n                key=lambda b: penalized_score(b[1], len(b[0])),",
                                           "pool.sort(\n                key=lambda b: penalized_score(b[1], len(prompt) + len(b[0])),",
                                           "selection_new_tokens_length", "the prompt's tokens never count"),
}

# judged against this repository's PROMPT.md (deployed beside the answer), not the answer's own
OUR_PROMPT = {"dbeta_keeps_summed_axes"}


@pytest.mark.parametrize("name", sorted(CONTRACT_PLANTED))
def test_contract_bug_planted_in_a_real_answer_is_caught(name, tmp_path, fast_root):
    cid, model, filename, old, new, check, words = CONTRACT_PLANTED[name]
    source = PUBLISHED / model / cid
    if not source.is_dir():
        pytest.skip(f"no published benchmark at {PUBLISHED}")
    folder = tmp_path / model
    shutil.copytree(source, folder, ignore=shutil.ignore_patterns("__pycache__", "*.jsonl"),
                    copy_function=shutil.copyfile)
    for entry in [folder, *folder.rglob("*")]:  # the published copy is read-only
        entry.chmod(entry.stat().st_mode | 0o200)
    path = folder / filename
    path.write_text(mutate_source(path.read_text(), (old, new), count=1))
    if name in OUR_PROMPT:
        (folder / "PROMPT.md").write_bytes((BUNDLED_CHALLENGES / cid / "PROMPT.md").read_bytes())
    adapter = BUNDLED_CHALLENGES / cid / "adapters" / f"{model}.py"
    result = run_answer(cid, folder, fast_root, check, model=model, adapter=adapter if adapter.is_file() else None)
    checks = checks_by_name(result)
    summary = {n: (c["verdict"], (c.get("message") or "")[:160]) for n, c in checks.items() if c["verdict"] != "pass"}
    assert result["verdict"] == "fail", (name, summary)
    assert check in checks and checks[check]["verdict"] == "fail", (name, check, summary)
    assert words in (checks[check].get("message") or ""), (name, checks[check].get("message"))
