"""Whatever a deck's result files hold, reading it gives report lines, never an exception."""
from __future__ import annotations

import json
from pathlib import Path

from benchtui.decks import kernelbench, kernelbench_hard
from benchtui.decks.model import Deck, Run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

scalars = st.none() | st.booleans() | st.integers(-5, 50) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                      max_leaves=12)
entry = st.fixed_dictionaries({}, optional={"sample_id": values, "compiled": values, "correctness": values,
                                            "metadata": values, "runtime": values, "runtime_stats": values,
                                            "ref_runtime": values})
results = st.dictionaries(st.sampled_from(["1", "2", "x", ""]) | st.text(max_size=3),
                          st.lists(entry | values, max_size=3) | entry | values, max_size=4)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=results)
def test_eval_results_of_any_shape(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("r") / "eval_results.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    deck = Deck("kernelbench", "KernelBench", "", "")
    run = Run(run_id="r/level_1_problem_1_sample_0", problem="level_1_problem_1", model="r", base_model="r",
              harness="r", deck_model="r", data=b"x", source="")
    kernelbench.read_eval_results(deck, "r", path, {(1, 1, 0): run})
    if run.result is not None:
        json.dumps(run.result, default=str)
        assert isinstance(run.result["correct"], bool)


detail = st.fixed_dictionaries({"problem": st.just("01_fp8_gemm"), "harness": st.just("h"), "model": st.just("m"),
                                "correct": values},
                               optional={"peak_fraction": values, "shapes": values, "stats": values,
                                         "failure_reason": values, "gpu_lock": values})
board_entry = st.fixed_dictionaries({"run_id": st.just("20260101_000000_h_m_01_fp8_gemm")},
                                    optional={"correct": values, "peak_fraction": values, "has_solution": values})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(d=detail, b=board_entry)
def test_published_results_of_any_shape(tmp_path_factory, d, b):
    run_id = "20260101_000000_h_m_01_fp8_gemm"
    deck = Deck("kernelbench-hard", "KernelBench-Hard (H100)", "", "", gpu="h100")
    deck.problems["01_fp8_gemm"] = object()  # only its name is looked at here
    folder = tmp_path_factory.mktemp("runs")
    (folder / f"{run_id}_solution.py.txt").write_text("class Model: pass\n", encoding="utf-8")
    board = {run_id: {**b, "problem": "01_fp8_gemm", "label": "h/m", "harness": "h", "model": "m", "effort": None}}
    kernelbench_hard.read_runs(deck, folder, {run_id: d}, board)
    kernelbench_hard.check_leaderboard(deck, board, {run_id: d}, Path(folder))
    assert [r.run_id for r in deck.runs] == [run_id]
    json.dumps(deck.runs[0].result, default=str)
