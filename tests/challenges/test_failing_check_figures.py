"""A failing check's row shows the figures that failed: a check that fails for
something other than its figure (a dtype, a crash) while the figure sits within
its threshold keeps no value or threshold on its row (they would read as a
pass); the figure moves to its message."""
from __future__ import annotations

import pytest
from benchtui.challenges.definition import BUNDLED_CHALLENGES
from benchtui.records import verdicts as V
from benchtui.runner.local import run_local
from benchtui.verify.suite import Suite

MODELS = BUNDLED_CHALLENGES.parent / "models"


@pytest.fixture
def suite(tmp_path):
    return Suite(challenge_id="backwards", answer_dir=tmp_path, challenge_dir=BUNDLED_CHALLENGES / "backwards",
                 model="fake", seed=1)


def recorded(suite, name):
    return next(c.as_dict() for c in suite.checks if c.name == name)


def test_a_check_failed_by_its_dtype_does_not_show_its_passing_error(suite):
    with suite.check("float32", threshold=1e-4) as c:
        c.value = 1.02e-07
        c.fail("float32 inputs must give float32 outputs, got y=float64")
    row = recorded(suite, "float32")
    assert row["verdict"] == "fail" and row["value"] is None and row["threshold"] is None
    assert row["message"].startswith("float32 inputs must give float32 outputs, got y=float64")
    assert "1.02e-07" in row["message"] and "0.0001" in row["message"]
    assert row["details"]["within_threshold"] == {"value": 1.02e-07, "threshold": 1e-4}


def test_a_crash_after_the_figure_was_measured_keeps_no_passing_figure(suite):
    with suite.check("crashes", threshold=0.5) as c:
        c.value = 0.1
        raise ValueError("boom")
    row = recorded(suite, "crashes")
    assert row["verdict"] == "error" and row["value"] is None and row["threshold"] is None


def test_a_figure_over_its_threshold_or_named_by_fail_stays_on_the_row(suite):
    with suite.check("off", threshold=1e-4) as c:
        c.value = 3e-2
        c.fail("results off")
    with suite.check("named", threshold=10) as c:
        c.fail("too few rows accepted", value=3)  # a floor: the figure named as the one that failed
    with suite.check("passes", threshold=1e-4) as c:
        c.value = 1e-7
    with suite.check("at_its_bound", threshold=64 * 64) as c:  # fails at the bound itself (size >= N*N)
        c.value = 64 * 64
        c.expect(c.value < c.threshold, "cache holds N x N sized data")
    assert (recorded(suite, "at_its_bound")["value"], recorded(suite, "at_its_bound")["threshold"]) == (4096, 4096)
    assert (recorded(suite, "off")["value"], recorded(suite, "off")["threshold"]) == (3e-2, 1e-4)
    assert (recorded(suite, "named")["value"], recorded(suite, "named")["threshold"]) == (3, 10)
    assert (recorded(suite, "passes")["value"], recorded(suite, "passes")["threshold"]) == (1e-7, 1e-4)


def test_demo_hasty_float32_row_shows_no_figure_that_passed(tmp_path):
    from challenge_kit import fast_copy

    challenges = fast_copy("backwards", tmp_path, {"speed_shape": "[2, 16, 64]", "timing_budget_s": "0.05"})
    result = run_local("backwards", MODELS / "demo-hasty" / "backwards", model="demo-hasty",
                       challenges_dir=challenges, seed=5)
    rows = {c["name"]: c for c in result["checks"]}
    assert rows["float32"]["verdict"] == "fail" and "float64" in rows["float32"]["message"]
    for c in result["checks"]:
        if c["verdict"] not in ("pass", "info", "skipped"):
            numbers = [x for x in (c["value"], c["threshold"]) if isinstance(x, (int, float))]
            assert len(numbers) < 2 or numbers[0] > numbers[1], c  # no row that reads like a pass
    assert not V.figure_within("fail", None, 1e-4) and V.figure_within("fail", "1.02e-07", "0.0001")
