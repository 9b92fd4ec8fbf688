"""The timer: paired trials on fresh inputs, medians, speedup direction, and
lazy MLX work forced inside the timed region."""
from __future__ import annotations

import math
import time

import pytest
from benchtui.verify.timing.clock import Clock, MlxClock, median_iqr, time_pair


def test_speedup_direction_and_fresh_inputs():
    seen = []

    def make(trial):
        seen.append(trial)
        return trial

    # sleeps long enough that a loaded machine's scheduling delay (~1-2 ms) stays small beside them
    fast = lambda x: time.sleep(0.01)  # noqa: E731
    slow = lambda x: time.sleep(0.03)  # noqa: E731
    t = time_pair(fast, slow, make, budget_s=0.3, warmup=1)
    assert t.trials % 4 == 0 and t.trials >= 8
    assert seen[:1] == [-1] and seen[1:] == list(range(t.trials))  # warm-up, then one fresh input per trial
    assert 2.0 < t.speedup < 4.0  # the reference is ~3x slower than the answer
    assert t.reference_median_s > t.answer_median_s
    assert "speedup" in t.as_dict() and "trials" in t.describe()


def test_order_alternates_within_pairs():
    order = []
    time_pair(lambda x: order.append("a"), lambda x: order.append("r"), lambda i: i, budget_s=0, warmup=0, min_trials=4)
    assert order == ["a", "r", "r", "a", "r", "a", "a", "r"]


def test_trials_leave_the_heap_alive_before_them_out_of_each_collection():
    """The collection before each trial walks only what the trials made: a checker
    holding torch's objects (or a test worker's) would otherwise walk them all each
    trial. What was frozen is handed back to the collector afterwards."""
    import gc

    assert gc.get_freeze_count() == 0
    held = [[i] for i in range(10_000)]  # alive before the trials: out of the collector's sight during them
    frozen = []
    time_pair(lambda x: None, lambda x: frozen.append(gc.get_freeze_count()), lambda i: i, budget_s=0, warmup=1)
    assert len(frozen) >= 3 and frozen[0] == 0  # the warm-up runs before the freeze
    assert all(n >= len(held) for n in frozen[1:]), frozen
    assert gc.get_freeze_count() == 0


def test_median_iqr():
    assert median_iqr([1.0, 2.0, 3.0, 4.0, 100.0]) == (3.0, 2.0)
    med, iqr = median_iqr([5.0])
    assert med == 5.0 and math.isnan(iqr)  # one sample measures no spread


def test_mlx_clock_forces_lazy_work():
    mx = pytest.importorskip("mlx.core")
    a = mx.random.normal((300, 300))

    def lazy():
        out = a
        for _ in range(20):
            out = out @ a
        return out  # nothing computed until evaluated

    plain = min(Clock().measure(lazy) for _ in range(3))
    forced = MlxClock().measure(lazy)
    assert forced > 5 * plain


def test_an_answer_far_slower_than_the_budget_gets_one_balanced_pair():
    order = []

    def answer(x):
        order.append("a")
        time.sleep(0.05)

    t = time_pair(answer, lambda x: order.append("r"), lambda i: i, budget_s=0.01, warmup=1, min_trials=4)
    assert t.trials == 2 and order == ["a", "r", "a", "r", "r", "a"]  # warm-up, then AR and RA


def test_an_answer_within_the_budget_keeps_whole_quads():
    t = time_pair(lambda x: time.sleep(0.002), lambda x: None, lambda i: i, budget_s=0.05, warmup=1, min_trials=4)
    assert t.trials >= 4 and t.trials % 4 == 0


def test_the_hosts_timing_ceiling_caps_the_budget_a_job_carries(monkeypatch):
    from benchtui.records.job import host_thresholds

    shipped = {"timing_budget_s": 1.5, "atol": 1e-5}
    monkeypatch.delenv("BENCHTUI_TIMING_BUDGET_S", raising=False)
    assert host_thresholds(shipped) == shipped  # unset: as shipped
    monkeypatch.setenv("BENCHTUI_TIMING_BUDGET_S", "0.05")
    assert host_thresholds(shipped) == {"timing_budget_s": 0.05, "atol": 1e-5}
    assert host_thresholds({"timing_budget_s": 0.01}) == {"timing_budget_s": 0.01}  # a ceiling, never a raise
    assert host_thresholds({}) == {"timing_budget_s": 0.05}  # Suite.time's own default is above it
    assert shipped["timing_budget_s"] == 1.5
    monkeypatch.setenv("BENCHTUI_TIMING_BUDGET_S", "fast")
    with pytest.raises(ValueError, match="BENCHTUI_TIMING_BUDGET_S='fast' is not a number of seconds"):
        host_thresholds(shipped)
