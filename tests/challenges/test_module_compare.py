"""Each deck's comparison as the deck defines it, on small challenges run by the
module harness on the CPU: a top-k's index output judged by the input's values at
the returned indices (any tie-break right, wrong indices caught), and the deck's
default tolerances read from the challenge, not from the harness's own table."""
from __future__ import annotations

import os

import pytest

torch = pytest.importorskip("torch", reason="the torch extra is not installed (pip install -e '.[torch]')")

from benchtui.runner.local import run_local  # noqa: E402

from tests.challenges import module_deck_kit as K  # noqa: E402


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("module-compare")
    K.write_challenge(root / "challenges", "kbh_topk", "topk")
    loose = K.write_challenge(root / "challenges", "kbh_fp8_defaults", "hard")
    toml = (loose / "challenge.toml").read_text()
    # no per-problem override and no stress case: the deck's defaults decide, here loose for bfloat16
    toml = toml.replace("[module.tolerance]\nbfloat16 = 0.05\n", "")
    toml = toml[:toml.index("[[module.stress]]")]
    toml += "\n[module.default_tolerance]\nbfloat16 = { atol = 0.5, rtol = 0.5 }\nfloat32 = { atol = 1e-4, rtol = 1e-4 }\n"
    (loose / "challenge.toml").write_text(toml)
    off = K.HARD_RIGHT.replace("return (y * self.weight_scale[None, :]).to(torch.bfloat16)",
                               "return (y * self.weight_scale[None, :] + 0.1).to(torch.bfloat16)")
    answers = {**K.write_answers(root / "topk", K.TOPK_ANSWERS), **K.write_answers(root / "hard", {"off": off})}
    results: dict = {}

    def go(cid: str, name: str) -> dict:
        if (cid, name) not in results:
            os.environ.setdefault("OMP_NUM_THREADS", "1")
            results[cid, name] = run_local(cid, answers[name], challenges_dir=root / "challenges", seed=7)
        return results[cid, name]

    return go


def by_name(result: dict) -> dict:
    return {c["name"]: c for c in result["checks"]}


def test_the_inputs_have_ties_the_answers_break_another_way():
    """What the tie test rests on: on the deck's first seed, the other tie-break returns
    other indices than the reference, with the same values."""
    ns: dict = {}
    exec(K.TOPK_REFERENCE, ns)
    torch.manual_seed(42)
    x = ns["get_inputs"]()[0]
    ref_values, ref_indices = ns["Model"](5)(x)
    other: dict = {}
    exec(K.TOPK_ANSWERS["other_ties"], other)
    values, indices = other["Model"](5)(x)
    assert torch.equal(values, ref_values) and not torch.equal(indices, ref_indices)


def test_another_tie_break_passes_as_in_the_deck(run):
    r = run("kbh_topk", "other_ties")
    checks = by_name(r)
    assert r["verdict"] == "pass", [(c["name"], c["verdict"], c["message"]) for c in r["checks"]]
    assert checks["deck_rule"]["value"] == "pass"
    for name in ("deck_seeds:shape0", "secret_seeds:shape0", "timed_outputs:shape0", "deck_seeds:shape1"):
        assert checks[name]["verdict"] == "pass", name


def test_the_references_own_tie_break_passes(run):
    assert run("kbh_topk", "right")["verdict"] == "pass"


def test_wrong_indices_fail_by_the_values_they_gather(run):
    r = run("kbh_topk", "wrong_indices")
    checks = by_name(r)
    c = checks["deck_seeds:shape0"]
    assert r["verdict"] == "fail" and c["verdict"] == "fail" and c["details"]["requirement"] == "output_values"
    assert "output 1 (indices): the input's values at the returned indices:" in c["message"]
    assert checks["deck_rule"]["value"] == "fail" and "returned indices" in checks["deck_rule"]["message"]


def test_the_decks_default_tolerance_is_read_from_the_challenge(run):
    """An output 0.1 off passes under the challenge's [module.default_tolerance] (0.5 for
    bfloat16), as the deck's correctness.py would judge it; the harness's own table
    (1e-2) would fail it."""
    r = run("kbh_fp8_defaults", "off")
    checks = by_name(r)
    assert r["verdict"] == "pass", [(c["name"], c["verdict"], c["message"]) for c in r["checks"]]
    assert checks["deck_rule"]["value"] == "pass"
