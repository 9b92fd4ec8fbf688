"""top_p's p = 1 check catches the `cumsum <= p` rule on every seed: that rule
drops a row's last token only where the row's cumulative sum rounds past 1,
so a check of three rows let it through one seed in three."""
from __future__ import annotations

from pathlib import Path

import pytest
from benchtui.runner.local import run_local
from challenge_kit import fast_copy

REPO = Path(__file__).resolve().parents[2]
# what these tests are about is one fixed check: the speed scenario (most of a run's CPU) shrunk
FAST = {"speed_shape": "[2, 64]", "timing_budget_s": "0.05"}


@pytest.fixture(scope="module")
def fast_challenges(tmp_path_factory) -> Path:
    return fast_copy("top_p", tmp_path_factory.mktemp("fast"), FAST)


def by_name(result: dict) -> dict:
    return {c["name"]: c for c in result["checks"]}


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 6])
def test_the_cumsum_rule_fails_p_one_on_every_seed(seed, fast_challenges):
    r = run_local("top_p", REPO / "models" / "demo-hasty" / "top_p", challenges_dir=fast_challenges, seed=seed)
    c = by_name(r)["p_one_keeps_all"]
    assert c["verdict"] == "fail" and c["value"] > 1e-6, c


def test_a_right_sampler_keeps_every_token_at_p_one(fast_challenges):
    r = run_local("top_p", REPO / "models" / "demo-careful" / "top_p", challenges_dir=fast_challenges, seed=3)
    assert by_name(r)["p_one_keeps_all"]["verdict"] == "pass"
