"""The PyTorch module harness (engine/verify/module/suite.py) on small
deck-shaped challenges, with pure-torch answers on the CPU: a right one and
the known ways to cheat, each caught with the requirement, shape, seed and
case named; GPU-only answers skipped with the reason, never failed."""
from __future__ import annotations

import os

import pytest

torch = pytest.importorskip("torch", reason="the torch extra is not installed (pip install -e '.[torch]')")

from benchtui.runner.local import run_local  # noqa: E402

from tests.challenges import module_deck_kit as K  # noqa: E402

# The module fixture below runs each answer once and several tests read the same run
# (the right answer's, the hidden forbidden op's): under xdist (-n 2) the whole module goes
# to one worker, so those runs are not made again on the other worker.
pytestmark = pytest.mark.xdist_group("module_suite")


@pytest.fixture(scope="module")
def decks(tmp_path_factory):
    root = tmp_path_factory.mktemp("module-decks")
    K.write_challenge(root / "challenges", "kbh_fp8", "hard")
    K.write_challenge(root / "challenges", "kb_gemm", "kb")
    K.write_challenge(root / "challenges", "kbh_fp8_quick", "hard", build_timeout_s=2)
    K.write_challenge(root / "challenges", "kbh_fp8_props", "hard", properties=True)
    answers = {"hard": K.write_answers(root / "hard", K.HARD_ANSWERS), "kb": K.write_answers(root / "kb", K.KB_ANSWERS)}
    results: dict = {}

    def run(kind: str, name: str, cid: str | None = None) -> dict:
        cid = cid or ("kbh_fp8" if kind == "hard" else "kb_gemm")
        if (kind, name, cid) not in results:
            os.environ.setdefault("OMP_NUM_THREADS", "1")
            results[kind, name, cid] = run_local(cid, answers[kind][name], challenges_dir=root / "challenges", seed=7)
        return results[kind, name, cid]

    return run


def by_name(result: dict) -> dict:
    return {c["name"]: c for c in result["checks"]}


def test_right_answer_passes_with_figures(decks):
    r = decks("hard", "right")
    checks = by_name(r)
    assert r["verdict"] == "pass", [(c["name"], c["verdict"], c["message"]) for c in r["checks"]]
    for name in ("deck_seeds:shape0", "secret_seeds:shape0", "timed_outputs:shape0", "deck_seeds:shape1",
                 "secret_seeds:shape1", "timed_outputs:shape1", "forbidden_ops"):
        assert checks[name]["verdict"] == "pass", name
    assert checks["forbidden_calls"]["verdict"] == "info" and "its word" in checks["forbidden_calls"]["message"]
    # its einsum is a vendor GEMM, which this deck (forbidding the FP8 one only) allows: named, not failed
    assert "which this deck does not forbid: aten::bmm" in checks["forbidden_calls"]["message"]
    assert checks["forbidden_calls"]["details"]["traced_calls"] >= 2 * 18
    assert "3 deck seeds x 3 cases: nominal, large_input, small_weight" in checks["deck_seeds:shape0"]["message"]
    assert checks["deck_rule"]["value"] == "pass"
    t = checks["time:shape1"]["details"]
    # a call of a few microseconds on a busy CPU may not stand above the empty cycle's jitter: then no figure
    assert t["trusted_ms"] is None or t["trusted_ms"] > t["resolution_ms"] > 0
    assert t["as_published_ms"] > 0 and len(t["trusted_samples_ms"]) == 3
    assert t["flops"] == 2 * 3 * 8 * 17 and t["bytes"] == 3 * 17 + 17 * 8 + 3 * 8 * 2
    p = checks["peak_fraction"]
    assert p["value"] is not None or "left out" in p["message"]
    assert {c["id"]: c["status"] for c in r["coverage"]} == {"correct": "pass", "no_forbidden_ops": "pass"}


def test_memoised_result_fails(decks):
    checks = by_name(decks("hard", "memoise"))
    c = checks["secret_seeds:shape0"]
    assert c["verdict"] == "fail" and c["message"].startswith("fresh_result: shape 0")
    assert "the checker wrote these inputs into the pages the previous call read" in c["message"]
    assert "the answer's process reports the same pointers and versions" in c["message"]
    assert c["details"]["where"]["case"] == "nominal" and "seed" in c["details"]["where"]


@pytest.mark.parametrize("answer, requirement", [
    ("mutate_input", "inputs_unchanged"), ("wrong_dtype", "output_dtype"), ("subclass", "output_type"),
])
def test_cheats_the_deck_rule_lets_through_fail(decks, answer, requirement):
    r = decks("hard", answer)
    checks = by_name(r)
    assert r["verdict"] == "fail"
    c = checks["deck_seeds:shape0"]
    assert c["verdict"] == "fail" and c["details"]["requirement"] == requirement
    assert c["message"].startswith(f"{requirement}: shape 0 {{'M': 8, 'N': 16, 'K': 32}}, seed 42, case nominal")
    assert checks["deck_rule"]["value"] == "pass"


def test_printing_pass_means_nothing(decks):
    r = decks("hard", "print_pass")
    checks = by_name(r)
    assert r["verdict"] == "fail"
    assert checks["deck_seeds:shape0"]["details"]["requirement"] == "output_values"
    assert checks["secret_seeds:shape0"]["details"]["requirement"] == "output_values"  # not blamed on memoisation
    assert checks["deck_rule"]["value"] == "fail"


def test_exiting_at_import_is_an_error_and_the_deck_would_see_exit_status(decks):
    r = decks("hard", "exit_early")
    checks = by_name(r)
    assert r["verdict"] == "error"
    assert checks["build"]["verdict"] == "error" and "SystemExit" in checks["build"]["message"]
    assert checks["deck_rule"]["value"] == "exit status"


def test_hidden_forbidden_op_is_found_in_the_code(decks):
    r = decks("hard", "hidden_forbidden")
    c = by_name(r)["forbidden_ops"]
    assert r["verdict"] == "forbidden"
    assert "solution.py:4" in c["message"] and "torch._scaled_mm" in c["message"]
    assert c["details"]["deck_rule_hits"] == []  # the deck's text search misses it


# a deck that forbids torch's sort and topk, as a top-k problem's does
_SORTING = K.HARD_RIGHT.replace("    def forward(self, x):\n", """    def forward(self, x):
        configs = [(2, "b"), (1, "a")]
        configs.sort(key=lambda c: c[0])
        timings = _times([0.3, 0.1])
""") + "\n\ndef _times(values):\n    values.sort()\n    return values\n"


@pytest.mark.parametrize("name, source, verdict", [
    # a list's .sort(): not torch's; a helper's parameter: could be, never the verdict
    ("lists", _SORTING, "pass"),
    ("tensor", _SORTING.replace("        timings = _times", "        x.sort()\n        timings = _times"), "forbidden"),
])
def test_a_method_named_like_a_forbidden_op_is_judged_by_what_it_is_called_on(tmp_path, name, source, verdict):
    K.write_challenge(tmp_path / "challenges", "kbh_sort", "hard")
    toml = tmp_path / "challenges" / "kbh_sort" / "challenge.toml"
    toml.write_text(toml.read_text().replace('forbidden = ["torch._scaled_mm", "torch.ops.aten._scaled_mm"]',
                                             'forbidden = ["torch.sort", "torch.topk"]'))
    answer = K.write_answers(tmp_path / "answers", {name: source})[name]
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    r = run_local("kbh_sort", answer, challenges_dir=tmp_path / "challenges", seed=7)
    checks = by_name(r)
    assert r["verdict"] == verdict, [(c["name"], c["verdict"], c["message"]) for c in r["checks"]]
    unresolved = checks["forbidden_unresolved"]
    assert unresolved["verdict"] == "info" and "could be torch.sort: .sort() on values" in unresolved["message"]
    assert "1 place(s) could be one, not resolved (forbidden_unresolved)" in checks["forbidden_ops"]["message"]
    if verdict == "pass":
        assert checks["forbidden_ops"]["verdict"] == "pass" and checks["forbidden_ops"]["details"]["hits"] == []
    else:
        assert checks["forbidden_ops"]["verdict"] == "forbidden"
        assert "the tensor method .sort() is torch.sort (x is a tensor)" in checks["forbidden_ops"]["message"]


def test_forbidden_text_in_a_comment_fails_only_the_decks_own_rule(decks):
    r = decks("hard", "forbidden_in_comment")
    checks = by_name(r)
    assert r["verdict"] == "pass", [(c["name"], c["verdict"], c["message"]) for c in r["checks"]]
    assert checks["forbidden_ops"]["details"]["deck_rule_hits"] == ["torch._scaled_mm"]
    assert checks["deck_rule"]["value"] == "fail"
    assert "forbidden text 'torch._scaled_mm'" in checks["deck_rule"]["message"]


def test_content_cache_flags_the_as_published_time(decks):
    r = decks("hard", "content_cache")
    t = by_name(r)["time:shape0"]
    assert r["verdict"] == "pass"
    assert t["details"]["flagged"] and "FLAGGED" in t["message"]
    assert t["details"]["trusted_ms"] > 5 > t["details"]["as_published_ms"]


@pytest.mark.parametrize("answer", ["work_in_staging", "work_in_fetch"])
def test_work_moved_out_of_the_call_is_timed(decks, answer):
    """The trusted time brackets the whole cycle: 30 ms of work hidden in the
    staging of the inputs or in the fetch of the output is counted."""
    r = decks("hard", answer)
    checks = by_name(r)
    assert r["verdict"] == "pass" and "time:shape0" in checks, [(c["name"], c["verdict"], c["message"]) for c in r["checks"]]
    t = checks["time:shape0"]["details"]
    assert t["trusted_ms"] > 20, t
    # what is subtracted holds none of it: the empty window's cycles, per call (a window on a busy
    # machine holds up to 32 of them, each a few milliseconds of waiting for a CPU)
    empty = t["empty_cycle"]
    assert empty["s"] / empty["calls"] < 0.02, empty


def test_right_answer_time_is_not_the_empty_cycle(decks):
    """The empty cycle is subtracted, not the call: a right answer's trusted
    time stays of the order of its own."""
    t = by_name(decks("hard", "right"))["time:shape1"]["details"]
    assert (t["trusted_ms"] or t["resolution_ms"]) < 20 and "whole cycles" in t["clock"]


@pytest.mark.parametrize("answer, why", [("triton", "imports Triton"), ("inline_cuda", "C++/CUDA extension")])
def test_gpu_answers_skip_on_the_cpu_with_the_reason(decks, answer, why):
    r = decks("hard", answer)
    c = by_name(r)["module"]
    assert r["verdict"] == "skipped" and c["verdict"] == "skipped"
    assert "needs an NVIDIA GPU" in c["message"] and why in c["message"]


def test_kernelbench_seeded_weights(decks):
    right = decks("kb", "right")
    assert right["verdict"] == "pass", [(c["name"], c["verdict"], c["message"]) for c in right["checks"]]
    checks = by_name(right)
    assert checks["deck_seeds:shape0"]["value"] == 5  # KernelBench's num_correct_trials, its trial seeds
    other = by_name(decks("kb", "other_weights"))
    assert other["deck_seeds:shape0"]["details"]["requirement"] == "output_values"
    assert other["deck_rule"]["value"] == "fail"


def test_weights_the_module_does_not_declare_fail_as_the_deck_fails_them(decks):
    r = decks("hard", "no_weights")
    c = by_name(r)["weights:shape0"]
    assert r["verdict"] == "fail" and c["verdict"] == "fail"
    assert c["message"].startswith("state_dict: shape 0") and "load_state_dict(strict=True)" in c["message"]
    assert by_name(r)["deck_rule"]["value"] == "fail"


def test_a_build_past_its_own_limit_is_a_timeout(decks):
    r = decks("hard", "slow_build", cid="kbh_fp8_quick")
    c = by_name(r)["build"]
    assert r["verdict"] == "timeout" and c["verdict"] == "timeout"
    assert "build limit of 2 s" in c["message"]


def test_an_answer_that_fails_to_import_is_an_error_the_deck_fails_too(decks):
    r = decks("hard", "import_error")
    checks = by_name(r)
    assert r["verdict"] == "error" and "no kernel here" in checks["build"]["message"]
    assert checks["deck_rule"]["value"] == "fail"


def test_the_decks_property_stress_runs_with_a_recorded_seed(decks):
    r = decks("hard", "right", cid="kbh_fp8_props")
    c = by_name(r)["property_stress:shape0"]
    assert r["verdict"] == "pass" and c["verdict"] == "pass", c
    # the fixed case in the warmed storage, then the fixed case again and two generated ones
    assert c["value"] == 4 and len(c["details"]["cases"]) == 3
    assert c["details"]["cases"][0] == "RowsCase(first_row=1, scale=8)"
    assert 0 <= c["details"]["hypothesis_seed"] < 2**64
    assert "property_stress:shape1" not in by_name(r)  # the deck's cases are for shape 0 only


def test_a_result_cached_on_a_probe_of_the_input_fails_the_property_stress(decks):
    """Right on every input drawn afresh; stale once only the rows after the
    first change, which only the deck's property stress does."""
    r = decks("hard", "probe_cache", cid="kbh_fp8_props")
    checks = by_name(r)
    assert checks["deck_seeds:shape0"]["verdict"] == "pass" and checks["secret_seeds:shape0"]["verdict"] == "pass"
    c = checks["property_stress:shape0"]
    assert r["verdict"] == "fail" and c["verdict"] == "fail"
    assert c["details"]["requirement"] == "output_values"  # the warm calls' output was never verified: not named stale
    assert "same storage after 11 calls: RowsCase(first_row=1, scale=8)" in c["message"]
    assert checks["deck_rule"]["value"] == "fail"  # the deck's own check.py catches it too


def test_a_problem_too_large_for_the_cpu_is_skipped_with_its_size(tmp_path):
    """Weights of 4 GiB at the deck's sizes (sized on torch's meta device, nothing
    allocated): skipped on the CPU with the size and what to do, never run."""
    folder = K.write_challenge(tmp_path / "challenges", "kb_huge", "kb")
    ref = folder / "reference.py"
    ref.write_text(ref.read_text().replace("in_features = 24", "in_features = 1 << 16").replace(
        "out_features = 12", "out_features = 1 << 14"))
    answers = K.write_answers(tmp_path / "kb", {"right": K.KB_RIGHT})
    r = run_local("kb_huge", answers["right"], challenges_dir=tmp_path / "challenges", seed=7)
    c = by_name(r)["module"]
    assert r["verdict"] == "skipped" and c["verdict"] == "skipped"
    assert "4.0 GiB of inputs and weights" in c["message"] and "--backend cuda" in c["message"]


def test_the_as_published_procedure_says_what_ran_on_this_device(decks):
    """On the CPU the deck's loop has no L2 to flush and no CUDA event: each call is
    timed by the answer's perf counter, and the figure says so."""
    t = by_name(decks("hard", "right"))["time:shape0"]["details"]
    assert "perf_counter" in t["as_published_procedure"] and "no L2 flush" in t["as_published_procedure"]
    assert "CUDA events" not in t["as_published_procedure"] and "L2 flushed" not in t["as_published_procedure"]


@pytest.mark.parametrize("answer, failed", [("wrong_at_shape1", "deck_seeds:shape1"), ("hidden_forbidden", "forbidden_ops")])
def test_a_failing_answer_gets_no_figures(decks, answer, failed):
    """Right at its first shape and wrong at its second, or right but forbidden: no
    time and no peak_fraction, not even the first shape's."""
    r = decks("hard", answer)
    checks = by_name(r)
    assert r["verdict"] in ("fail", "forbidden") and checks[failed]["verdict"] in ("fail", "forbidden")
    assert not [name for name in checks if name.startswith("time:")]
    p = checks["peak_fraction"]
    assert p["verdict"] == "info" and p["value"] is None
    assert p["message"].startswith(f"not computed: the answer fails ({failed}:")


def test_an_output_equal_to_an_earlier_one_is_named_by_what_was_seen(decks):
    """A buffer filled once and returned again holds the first call's values: the check
    says the output equals an earlier call's, not that the answer memoises."""
    c = by_name(decks("hard", "stale_buffer"))["deck_seeds:shape0"]
    assert c["verdict"] == "fail" and c["details"]["requirement"] == "fresh_result"
    assert "the output equals an earlier call's right output, for other inputs (on new input pages)" in c["message"]
    assert "memoi" not in c["message"]
