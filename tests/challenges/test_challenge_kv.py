"""kv: reference and demo-careful pass; demo-hasty leaks padding; mutants of
the reference's mask, update and memory are each caught by their check."""
from __future__ import annotations

from pathlib import Path

import pytest
from benchtui.challenges.definition import BUNDLED_CHALLENGES, load_challenge
from benchtui.runner.local import run_local
from challenge_kit import checks_by_name, fast_copy, mutate_source, write_answer

CHALLENGE = BUNDLED_CHALLENGES / "kv"
MODELS = BUNDLED_CHALLENGES.parent / "models"
REFERENCE = (CHALLENGE / "reference.py").read_text()
FAST = {"memory_steps": "128", "speed_lengths": "[20, 12]", "speed_steps": "4", "timing_budget_s": "0.05"}


def fast_challenges(root: Path) -> Path:
    return fast_copy("kv", root, FAST)


def run_source(tmp_path: Path, source: str) -> dict:
    return run_local("kv", write_answer(tmp_path, "cache.py", source), challenges_dir=fast_challenges(tmp_path), seed=9)


def mutate(old: str, new: str) -> str:
    return mutate_source(REFERENCE, (old, new), count=1)


by_name = checks_by_name


def test_challenge_definition_loads():
    ch = load_challenge(CHALLENGE)
    assert (ch.id, ch.position, ch.difficulty) == ("kv", 3, "MEDIUM")
    assert ch.display_names[:2] == ("KV-Cache", "KV Cache")
    assert ch.adapter_path("demo-careful") and ch.adapter_path("demo-hasty")
    quitter = MODELS / "demo-quitter" / "kv"
    assert [p.name for p in quitter.iterdir()] == ["PROMPT.md"]  # the "no answer" case
    for model in ("demo-careful", "demo-hasty", "demo-quitter"):
        assert (MODELS / model / "kv" / "PROMPT.md").read_bytes() == ch.prompt_path.read_bytes()


def test_reference_passes(tmp_path):
    result = run_source(tmp_path, REFERENCE)
    assert result["verdict"] == "pass", result
    figure = by_name(result)["memory_per_token"]
    assert figure["verdict"] == "info" and "prompt states no factor" in figure["message"]


def test_demo_careful_passes_through_its_adapter():
    result = run_local("kv", MODELS / "demo-careful" / "kv", model="demo-careful", seed=21)
    assert result["verdict"] == "pass", [c for c in result["checks"] if c["verdict"] != "pass"]


def test_demo_hasty_leaks_padding(tmp_path):
    result = run_local("kv", MODELS / "demo-hasty" / "kv", model="demo-hasty",
                       challenges_dir=fast_challenges(tmp_path), seed=4)
    failed = {c["name"] for c in result["checks"] if c["verdict"] == "fail"}
    assert result["verdict"] == "fail"
    assert failed == {"decode_matches_full_attention", "padding_isolated", "batch_independence"}


def test_without_adapter_hasty_is_unbound(tmp_path):
    # its class has prefill but no decode: an adapter is required
    result = run_local("kv", MODELS / "demo-hasty" / "kv", model="nobody", challenges_dir=fast_challenges(tmp_path))
    assert result["verdict"] == "unbound"
    assert "prefill(k, v, lengths)" in by_name(result)["bind"]["message"]


MASK = "valid = np.arange(used)[None, :] < self.lengths[:, None]"
MUTANTS = {
    "inverted_mask": (mutate(MASK, MASK.replace("<", ">=")), "decode_matches_full_attention", ""),
    "mask_one_too_long": (mutate(MASK, MASK.replace("<", "<=")), "decode_matches_full_attention", ""),
    "mask_excludes_new_token": (mutate(MASK, MASK + " - 1"), "decode_matches_full_attention", ""),
    "padding_leaks": (mutate("scores = np.where(valid[:, None, :], scores, -np.inf)", "pass"),
                      "padding_isolated", ""),
    "returns_zeros": (mutate("return np.einsum(\"bht,bhtd->bhd\", weights, values)",
                             "return np.zeros_like(q)  #"), "decode_matches_full_attention", ""),
    "mutates_query": (mutate("scores = np.einsum(\"bhd,bhtd->bht\", q, keys) / np.sqrt(q.shape[-1])",
                             "q /= np.sqrt(q.shape[-1])\n        scores = np.einsum(\"bhd,bhtd->bht\", q, keys)"),
                      "decode_matches_full_attention", "in place"),
    "caches_first_output": (mutate("    def decode(self, q", (
        "    def decode(self, q, k_new, v_new):\n"
        "        if not hasattr(self, '_first'):\n"
        "            self._first = self._decode(q, k_new, v_new)\n"
        "        return self._first\n\n"
        "    def _decode(self, q")), "decode_matches_full_attention", ""),
    "keeps_snapshots": (mutate("        self.lengths += 1\n",
                               "        self.lengths += 1\n"
                               "        self.__dict__.setdefault('log', []).append(self.k[:, :, :self.lengths.max()].copy())\n"),
                        "memory_linear", "faster than linearly"),
}


NON_CAUSAL_EXTEND = """    def extend(self, q, k_new, v_new):
        for j in range(q.shape[2]):
            self.decode(q[:, :, j], k_new[:, :, j], v_new[:, :, j])
        used = int(self.lengths.max())  # every new row attends over the whole cache, later rows included
        keys, values = self.k[:, :, :used], self.v[:, :, :used]
        scores = np.einsum("bhtd,bhsd->bhts", q, keys) / np.sqrt(q.shape[-1])
        valid = np.arange(used)[None, :] < self.lengths[:, None]
        scores = np.where(valid[:, None, None, :], scores, -np.inf)
        w = np.exp(scores - scores.max(-1, keepdims=True))
        return np.einsum("bhts,bhsd->bhtd", w / w.sum(-1, keepdims=True), values)


def causal_attention("""


def test_multi_token_path_must_be_causal_and_the_smallest_failing_case_is_named(tmp_path):
    (tmp_path / "ok").mkdir(), (tmp_path / "bad").mkdir()
    ok = by_name(run_source(tmp_path / "ok", REFERENCE))["multi_token_causal"]
    assert ok["verdict"] == "pass" and "5 cases" in ok["message"]
    source = REFERENCE.replace("def causal_attention(", NON_CAUSAL_EXTEND.split("def causal_attention(")[0] + "def causal_attention(", 1)
    source = source.replace("    def extend(self, q: np.ndarray", "    def _unused_extend(self, q: np.ndarray", 1)
    result = run_source(tmp_path / "bad", source)
    c = by_name(result)["multi_token_causal"]
    assert result["verdict"] == "fail" and c["verdict"] == "fail"
    # the first hand-built case (one sequence of length 1, one head, dim 2, 2 new tokens) catches it every run
    assert "smallest failing case: lengths [1], 1 head, dim 2, 2 new tokens: new row 0" in c["message"], c["message"]
    assert "earlier rows see later ones" in c["message"]
    # its one-token decode path is the reference's: every decode check passes
    assert by_name(result)["decode_matches_full_attention"]["verdict"] == "pass"


def test_without_a_multi_token_path_the_check_says_so(tmp_path):
    source = REFERENCE.replace("    def extend(self, q: np.ndarray", "    def _unused_extend(self, q: np.ndarray", 1)
    c = by_name(run_source(tmp_path, source))["multi_token_causal"]
    assert c["verdict"] == "info" and "no multi-token path bound" in c["message"]


def test_a_large_constant_factor_is_a_figure_not_a_verdict(tmp_path):
    # ten extra float64 copies of each new token's K and V: linear, but about
    # 10x the bytes of the cache itself (like a cache of Python floats, 4x)
    source = mutate("        self.lengths += 1\n",
                    "        self.lengths += 1\n"
                    "        self.__dict__.setdefault('log', []).extend(np.array([k_new, v_new]) for _ in range(10))\n")
    result = run_source(tmp_path, source)
    checks = by_name(result)
    assert result["verdict"] == "pass", [c for c in result["checks"] if c["verdict"] != "pass"]
    assert checks["memory_linear"]["verdict"] == "pass"
    assert checks["memory_per_token"]["verdict"] == "info" and checks["memory_per_token"]["value"] > 4


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_is_rejected_by_its_check(tmp_path, name):
    source, check, words = MUTANTS[name]
    result = run_source(tmp_path, source)
    c = by_name(result)[check]
    assert result["verdict"] in ("fail", "error"), result
    assert c["verdict"] == "fail", c
    assert words in c["message"]


LOOPING_ADAPTER = """import numpy as np
from cache import KVCache


class Session:
    def prefill(self, k, v, lengths):
        self.caches = []
        for b, n in enumerate(int(x) for x in lengths):
            c = KVCache()
            c.prefill(k[b:b + 1, :, :n], v[b:b + 1, :, :n], [n])
            self.caches.append(c)

    def decode(self, q, k_new, v_new):
        # one sequence at a time: the batching is the adapter's, not the answer's
        return np.concatenate([c.decode(q[b:b + 1], k_new[b:b + 1], v_new[b:b + 1])
                               for b, c in enumerate(self.caches)])


def make_session():
    return Session()
"""

PLAIN_ADAPTER = """from cache import KVCache


def make_session():
    return KVCache()
"""


def test_an_adapter_that_loops_over_the_batch_is_reported_and_the_pass_is_partial(tmp_path):
    answer = write_answer(tmp_path, "cache.py", REFERENCE)
    (tmp_path / "loop.py").write_text(LOOPING_ADAPTER)
    (tmp_path / "plain.py").write_text(PLAIN_ADAPTER)
    looped = run_local("kv", answer, challenges_dir=fast_challenges(tmp_path), adapter=tmp_path / "loop.py", seed=5)
    cov = {c["id"]: c for c in looped["coverage"]}
    assert looped["verdict"] == "partial", [c for c in looped["checks"] if c["verdict"] != "pass"]
    assert cov["variable_lengths"]["status"] == "not_exercised"
    assert "calls KVCache.decode (3 calls) itself for each decode of a batch of 3" in cov["variable_lengths"]["reason"]
    reach = by_name(looped)["reach"]
    assert reach["details"]["adapter_calls_per_entry"]["decode"]["cache.py:KVCache.decode"] >= 2
    # the same answer bound as it is: its own code batches, a full pass
    plain = run_local("kv", answer, challenges_dir=fast_challenges(tmp_path), adapter=tmp_path / "plain.py", seed=5)
    assert plain["verdict"] == "pass", [c for c in plain["coverage"] if c["status"] != "pass"]
    assert {c["id"]: c["status"] for c in plain["coverage"]}["variable_lengths"] == "pass"
    assert "cache.py:KVCache.decode" in by_name(plain)["reach"]["details"]["reached"]


@pytest.mark.parametrize("seed", [1, 2])
def test_fixed_cases_catch_their_defect_whatever_the_seed(tmp_path, seed):
    leaky = MUTANTS["padding_leaks"][0]
    off_by_one = MUTANTS["mask_one_too_long"][0]
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    challenges = fast_challenges(tmp_path)
    pad = by_name(run_local("kv", write_answer(tmp_path / "a", "cache.py", leaky), challenges_dir=challenges,
                            seed=seed))["padding_isolated"]
    assert pad["verdict"] == "fail" and "in the fixed case" in pad["message"], pad["message"]
    dec = by_name(run_local("kv", write_answer(tmp_path / "b", "cache.py", off_by_one), challenges_dir=challenges,
                            seed=seed))["decode_matches_full_attention"]
    assert dec["verdict"] == "fail" and "of the fixed case" in dec["message"], dec["message"]
