"""beam_search conformance: reference and demo answers, and mutants of the
reference that each known mistake must be caught by a named check."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from benchtui.challenges.definition import BUNDLED_CHALLENGES
from benchtui.runner.local import run_local
from challenge_kit import checks_by_name, fast_copy

ROOT = Path(__file__).resolve().parents[2]
CHALLENGE = BUNDLED_CHALLENGES / "beam_search"
REFERENCE = (CHALLENGE / "reference.py").read_text()


@pytest.fixture(scope="module")
def fast_challenges(tmp_path_factory) -> Path:
    """A copy of the challenge with a tiny timing budget, to keep tests fast."""
    return fast_copy("beam_search", tmp_path_factory.mktemp("fast"), {"timing_budget_s": "0.05"})


checks_of = checks_by_name


def run_source(tmp_path: Path, source: str, challenges: Path, seed: int = 7) -> dict:
    folder = tmp_path / "answer"
    folder.mkdir()
    (folder / "reference.py").write_text(source)
    return run_local("beam_search", folder, seed=seed, challenges_dir=challenges)


def mutate(old: str, new: str) -> str:
    assert REFERENCE.count(old) == 1, f"mutation anchor not found once: {old!r}"
    return REFERENCE.replace(old, new)


def test_reference_passes_every_check(tmp_path):
    result = run_source(tmp_path, REFERENCE, BUNDLED_CHALLENGES, seed=20250101)
    assert result["verdict"] == "pass", result
    checks = checks_of(result)
    for name in ("greedy_k1", "batch_independence", "eos_retention", "ranking_alpha",
                 "prompt_not_in_output", "scores_recomputed", "max_new_tokens_unfinished", "long_beams_log_space"):
        assert checks[name]["verdict"] == "pass", checks[name]
    assert checks["speed"]["verdict"] == "info"
    assert "all-position" in checks["model_convention"]["message"]


def test_demo_careful_passes(fast_challenges):
    result = run_local("beam_search", ROOT / "models/demo-careful/beam_search", model="demo-careful",
                       seed=99, challenges_dir=fast_challenges)
    assert result["verdict"] == "pass", result


def test_demo_hasty_fails_on_eos_and_scores(fast_challenges):
    result = run_local("beam_search", ROOT / "models/demo-hasty/beam_search", model="demo-hasty",
                       seed=5, challenges_dir=fast_challenges)
    checks = checks_of(result)
    assert result["verdict"] == "fail"
    assert checks["eos_retention"]["verdict"] == "fail"
    assert checks["scores_recomputed"]["verdict"] == "fail"
    assert checks["greedy_k1"]["verdict"] == "pass"
    # its model is a module global with last-position logits: the probe must see that
    assert "MODEL" in checks["model_convention"]["message"]
    assert "last-position" in checks["model_convention"]["message"]


MUTANTS = {
    "drops_finished_beams": (
        "candidates.append(beam)\n                continue", "continue", "eos_retention"),
    "length_penalty_in_running_score": (
        "logp + float(lp[tok])", "(logp + float(lp[tok])) / (len(tokens) + 1) ** alpha", "scores_recomputed"),
    "prompt_in_output": (
        "return [(b[0], score(b)) for b in beams]", "return [(prompt + b[0], score(b)) for b in beams]",
        "prompt_not_in_output"),
    "left_pads_batch": (
        "[beam_search_one(model, p,",
        "[beam_search_one(model, [0] * (max(map(len, prompts)) - len(p)) + list(p),", "batch_independence"),
    "expands_top2_not_top2k": ("[: 2 * k]", "[: 2]", "ranking_alpha"),
    # right to rounding on short beams; a beam's probability underflows to 0 past ~110 tokens
    "accumulates_probabilities": (
        "logp + float(lp[tok])", "float(np.log(np.exp(logp) * np.exp(lp[tok])))", "long_beams_log_space"),
    "returns_zeros": (
        "return [(b[0], score(b)) for b in beams]",
        "return [([0] * max_new_tokens, 0.0) for b in beams]", "greedy_k1"),
    "mutates_prompts": (  # right answer, but the caller's list grows afterwards
        "for p in prompts]", "for p in prompts] + [prompts.append([])][:0]", "greedy_k1"),
    "caches_outputs": (
        "    return [beam_search_one(",
        "    if len(prompts) in _CACHE:\n        return _CACHE[len(prompts)]\n"
        "    return _CACHE.setdefault(len(prompts), [beam_search_one(", "ranking_alpha"),
}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_is_caught_by_its_check(name, tmp_path, fast_challenges):
    old, new, check = MUTANTS[name]
    source = mutate(old, new)
    if name == "caches_outputs":
        source = source.replace("for p in prompts]", "for p in prompts])") + "\n_CACHE = {}\n"
    result = run_source(tmp_path, source, fast_challenges)
    checks = checks_of(result)
    assert result["verdict"] == "fail", (name, result)
    assert checks[check]["verdict"] == "fail", (name, checks[check])
    if name == "mutates_prompts":
        assert "in place" in checks[check]["message"]


SEARCHER_CLASS = '''
from HELPER import beam_search_one


class BeamSearcher:
    def __init__(self, lm, beam_width, alpha=0.6):
        self.lm, self.k, self.alpha = lm, beam_width, alpha

    def search(self, prompts, max_new_tokens, eos_token_id):
        return [beam_search_one(self.lm, p, self.k, max_new_tokens, self.alpha, eos_token_id) for p in prompts]
'''

BUILDS_OWN_MODEL = '''
from HELPER import TinyLM, beam_search_one


def batched_beam_search(prompts, beam_width, max_new_tokens, alpha, eos_token_id):
    lm = TinyLM(seed=3)
    return [beam_search_one(lm, p, beam_width, max_new_tokens, alpha, eos_token_id) for p in prompts]
'''


@pytest.mark.parametrize("source, via", [(SEARCHER_CLASS, "constructor parameter 'lm'"),
                                         (BUILDS_OWN_MODEL, "class factory TinyLM")])
def test_other_injection_routes_bind_and_pass(source, via, tmp_path, fast_challenges):
    folder = tmp_path / "answer"
    folder.mkdir()
    # The search lives in its own module; the reference is only its helper here,
    # under a name no other test's module can shadow in sys.modules.
    helper = "helper_" + re.sub(r"\W", "_", tmp_path.name)
    (folder / f"{helper}.py").write_text(REFERENCE.replace("def batched_beam_search(", "def _unused_search("))
    (folder / "search.py").write_text(source.replace("HELPER", helper))
    result = run_local("beam_search", folder, seed=3, challenges_dir=fast_challenges)
    checks = checks_of(result)
    assert result["verdict"] == "pass", result
    assert via in checks["model_convention"]["message"]


def _harness():
    from benchtui.verify.binding import load_module

    return load_module(CHALLENGE / "harness.py", "test_beam_harness")


@pytest.mark.parametrize("result", [
    [[([5, 6], -1.0), ([7], -2.0)]],
    [[{"tokens": [5, 6], "score": -1.0}, {"tokens": [7], "score": -2.0}]],
    ([[[5, 6], [7]]], [[-1.0, -2.0]]),
    {"sequences": [[[5, 6], [7]]], "scores": [[-1.0, -2.0]]},
])
def test_result_layouts_normalise_alike(result):
    beams = _harness().normalise(result, 1)
    assert [(b.tokens, b.score) for b in beams[0]] == [([5, 6], -1.0), ([7], -2.0)]


def test_the_mock_takes_only_the_token_ranks_the_answers_own_model_takes():
    """The prompt leaves the model's calling convention to the answer, to keep consistent:
    the mock model takes what the answer's own model took when probed, and refuses the other
    rank (a search that calls its model another way would fail on its own model)."""
    import numpy as np

    h = _harness()

    class OneD:  # takes 1-D tokens only, returns a row per position
        def __call__(self, tokens):
            tokens = np.asarray(tokens)
            if tokens.ndim != 1:
                raise ValueError("1-D tokens only")
            return np.zeros((len(tokens), 50))

    class Either:  # takes both: a leading batch axis is kept
        def __call__(self, tokens):
            return np.zeros(np.shape(tokens) + (50,))

    core = h.MockCore(50, salt=1, eos=25)
    for model, ranks in ((OneD(), {1}), (Either(), {1, 2})):
        conv = h.Convention()
        h.probe(model, ["__call__"], conv)
        assert conv.token_ranks == {"__call__": ranks} and conv.all_positions == {"__call__": True}
        mock = h.MockLM(core, conv)
        assert np.shape(mock(np.array([1, 2, 3]))) == (3, 50)
        if 2 in ranks:
            assert np.shape(mock(np.array([[1, 2, 3]]))) == (1, 3, 50)
        else:
            with pytest.raises(TypeError, match="takes 1-D token arrays"):
                mock(np.array([[1, 2, 3]]))
    # no model of the answer's own probed: no convention to hold it to
    unprobed = h.MockLM(core, h.Convention())
    assert np.shape(unprobed(np.array([[1, 2]]))) == (1, 2, 50) and np.shape(unprobed(np.array([1, 2]))) == (2, 50)


def test_the_mock_refuses_arguments_the_answers_own_model_refuses():
    """A search that hands its model a keyword (or an extra positional) its own model does not
    take would fail on that model: the mock, holding the probed signature, fails it too, and
    still takes every call the answer's model takes."""
    import numpy as np

    h = _harness()

    class TokensOnly:  # the answer's own model: tokens and nothing else
        def __call__(self, tokens):
            return np.zeros(np.shape(tokens) + (50,))

    class WithMask:  # takes a padding mask by name
        def __call__(self, tokens, attention_mask=None):
            return np.zeros(np.shape(tokens) + (50,))

    core = h.MockCore(50, salt=1, eos=25)
    ones = np.ones((1, 3), dtype=np.int64)
    conv = h.Convention()
    h.probe(TokensOnly(), ["__call__"], conv)
    mock = h.MockLM(core, conv)
    assert np.shape(mock(np.array([[1, 2, 3]]))) == (1, 3, 50)
    with pytest.raises(TypeError, match="refuses that"):
        mock(np.array([[1, 2, 3]]), attention_mask=ones)
    with pytest.raises(TypeError, match="refuses that"):
        mock(np.array([[1, 2, 3]]), ones)
    conv = h.Convention()
    h.probe(WithMask(), ["__call__"], conv)
    mock = h.MockLM(core, conv)
    assert np.shape(mock(np.array([[1, 2, 3]]), attention_mask=ones)) == (1, 3, 50)
    assert np.shape(mock(np.array([[1, 2, 3]]), ones)) == (1, 3, 50)
    # no model of the answer's own probed: no signature to hold it to
    assert np.shape(h.MockLM(core, h.Convention())(np.array([[1, 2]]), attention_mask=ones[:, :2])) == (1, 2, 50)


def test_padded_array_result_is_stripped():
    import numpy as np

    beams = _harness().normalise(np.array([[[5, 6], [7, -1]]]), 1)
    assert [b.tokens for b in beams[0]] == [[5, 6], [7]]


# One left-padded batch over all items with an attention mask, a model whose
# forward needs the mask and returns last-position logits, arrays as beams.
MASKED_BATCH_ANSWER = '''import numpy as np

class MaskedLM:
    def __init__(self, vocab_size=1000, d_model=64):
        rng = np.random.default_rng(0)
        self.E = rng.normal(size=(vocab_size, d_model)); self.W = rng.normal(size=(d_model, vocab_size)) / 8

    def forward(self, input_ids, attention_mask):
        m = attention_mask[..., None]
        h = (self.E[input_ids] * m).sum(1) / m.sum(1)
        return h @ self.W   # (B, V) last-position logits

def _lsm(x):
    x = x - x.max(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))

def beam_search(model, prompts, k, max_new_tokens, length_penalty, eos_id):
    # all beams of all items in one left-padded batch
    beams = [[(list(p), [], 0.0, False)] for p in prompts]
    for _ in range(max_new_tokens):
        rows = [(i, j) for i, bs in enumerate(beams) for j, b in enumerate(bs) if not b[3]]
        if not rows:
            break
        seqs = [beams[i][j][0] + beams[i][j][1] for i, j in rows]
        T = max(map(len, seqs))
        ids = np.array([[0] * (T - len(s)) + s for s in seqs])
        mask = np.array([[0] * (T - len(s)) + [1] * len(s) for s in seqs])
        lp = _lsm(model.forward(ids, attention_mask=mask))
        new = [[b for b in bs if b[3]] for bs in beams]
        for (i, j), row in zip(rows, lp):
            p, toks, s, _ = beams[i][j]
            for t in np.argsort(-row)[:2 * k]:
                new[i].append((p, toks + [int(t)], s + row[t], int(t) == eos_id))
        beams = [sorted(c, key=lambda b: b[2] / len(b[1]) ** length_penalty, reverse=True)[:k] for c in new]
    return [[np.array(b[1]) for b in bs] for bs in beams]
'''


def test_masked_left_padded_batch_answer_binds_and_passes(tmp_path, fast_challenges):
    folder = tmp_path / "answer"
    folder.mkdir()
    (folder / "lm_search.py").write_text(MASKED_BATCH_ANSWER)
    result = run_local("beam_search", folder, seed=4, challenges_dir=fast_challenges)
    checks = checks_of(result)
    assert result["verdict"] == "pass", result
    assert "forward: last-position" in checks["model_convention"]["message"]
    assert checks["scores_recomputed"]["verdict"] == "info"  # it returns no scores


def test_masked_answer_without_its_mask_is_not_independent(tmp_path, fast_challenges):
    folder = tmp_path / "answer"
    folder.mkdir()
    # padding now counts as context: batching changes the shorter prompt's result
    (folder / "lm_search.py").write_text(MASKED_BATCH_ANSWER.replace(
        "mask = np.array([[0] * (T - len(s))", "mask = np.array([[1] * (T - len(s))"))
    checks = checks_of(run_local("beam_search", folder, seed=4, challenges_dir=fast_challenges))
    assert checks["batch_independence"]["verdict"] == "fail"


def test_raw_scores_are_only_a_reading_where_no_prompt_states_the_rule(tmp_path, fast_challenges):
    """Both known prompts say a reported score is logprob / len**alpha (the
    known-wrong suite runs this mutant under ours: fail); an answer without a
    known prompt gets the raw log-prob shown as a reading, never a pass."""
    source = mutate("return [(b[0], score(b)) for b in beams]", "return [(b[0], b[1]) for b in beams]")
    check = checks_of(run_source(tmp_path, source, fast_challenges))["scores_recomputed"]
    assert check["verdict"] == "info", check
    assert check["message"].startswith("reading: the reported scores are the raw accumulated log-prob"), check
    assert check["details"]["raw_logprob_error"] <= 1e-9 < check["value"]


def test_mock_logits_differ_from_log_probs_by_a_constant_per_context():
    import numpy as np

    h = _harness()
    core = h.MockCore(50, 11, 3, offsets={(1, 2): 5.0})
    shifts = {ctx: core.logits(ctx) - core.logprobs(ctx) for ctx in [(1, 2), (1,), (4, 5, 6)]}
    for shift in shifts.values():
        assert np.ptp(shift) < 1e-12  # one constant over the whole row: log_softmax removes it
    assert shifts[(1, 2)][0] == 5.0 and len({round(float(s[0]), 9) for s in shifts.values()}) == 3
    # logits from forward, log-probs from a name that promises them, or where the answer's own model gave them
    conv = h.Convention(all_positions={"forward": False, "score": False}, normalised={"score": True})
    lm = h.MockLM(core, conv)
    assert abs(h.logsumexp(lm.forward(np.array([1, 2])))) > 1.0
    for out in (lm.get_log_probs(np.array([1, 2])), lm.score(np.array([1, 2]))):
        assert abs(h.logsumexp(out)) < 1e-12


def test_context_key_is_the_tokens_as_python_ints():
    """The mock's cache key converts a context as ``int()`` of each token would, in C."""
    import numpy as np

    h = _harness()
    big = np.array([2**63 + 5, 7], dtype=np.uint64)
    for ctx in ([3, 4], (3, 4), np.array([3, 4]), np.array([3, 4], dtype=np.int32), np.array([3.7, 4.2]), big, []):
        key = h.context_key(ctx)
        assert key == tuple(int(t) for t in ctx) and all(type(t) is int for t in key)
    for bad in (["x"], [None], np.zeros((2, 2), dtype=int)):  # refused as int() refuses them
        with pytest.raises((TypeError, ValueError)):
            h.context_key(bad)


def test_the_mock_scores_each_position_as_its_own_prefix():
    """An all-position call gives, per position, the scores of the kept prefix up to it
    (zeros before the first kept token), as fresh arrays the answer may edit."""
    import numpy as np

    h = _harness()
    rng = np.random.default_rng(5)
    core = h.MockCore(40, 3, 7, overrides={(1, 2): {7: -0.5}}, offsets={(1,): 2.0})
    for normalised in (True, False):
        lm = h.MockLM(core, h.Convention(all_positions={"forward": True}, normalised={"forward": normalised}))
        one = core.logprobs if normalised else core.logits
        for _ in range(30):
            batch = np.concatenate([[[1, 2]] * 2, rng.integers(0, 40, size=(2, 4))], axis=1)
            mask = rng.random(batch.shape) < 0.7
            out = lm.forward(batch, attention_mask=mask)
            for row, keep, got in zip(batch, mask, out):
                kept = []
                for t, k, scores in zip(row.tolist(), keep, got):
                    kept += [t] if k else []
                    assert np.array_equal(scores, one(kept) if kept else np.zeros(40))
            out[:] = 0.0
            assert np.array_equal(lm.forward(batch[:1, :2])[0, 1], one([1, 2]))
