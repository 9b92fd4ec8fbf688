"""fuse on a real GPU through the whole sandboxed pipeline: the answer's
library built and run in the answer's sandbox, the checker loading none of
it; timing exploits that must buy no better figure than honest work; device
faults that stay the answer's and leave the GPU usable; host code that tries
to forge a result. Skipped, with the reason, where there is no GPU."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from benchtui.records import verdicts as V
from benchtui.runner.orchestrate import run_answers, tree_digest
from benchtui.store import queries
from benchtui.store.database import Store
from benchtui.verify.cuda import build as cuda_build
from benchtui.workbench.layout import find_workbench
from benchtui.workbench.scan import scan_workbench

from tests.runner.gpu_workbench import exploit_workbench

pytestmark = [pytest.mark.gpu, pytest.mark.sandbox]

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module", autouse=True)
def needs_gpu():
    usable, reason = cuda_build.gpu_status()
    if not usable:
        pytest.skip(f"needs an NVIDIA GPU: {reason}")
    if cuda_build.find_nvcc() is None:
        pytest.skip("needs nvcc to build the answers")


def run(root: Path, pairs, **kw) -> dict:
    wb = find_workbench(str(root), None, Path.cwd())
    with Store(wb.store_path) as store:
        scan_workbench(wb, store)
    events = run_answers(wb, pairs, backend="cuda", self_check=False, **kw)
    out = {}
    with Store(wb.store_path) as store:
        for e in events:
            checks = {c["name"]: {**c, "value": queries.stored_value(c["value"])} for c in queries.run_checks(store, e.run_id)} if e.run_id else {}
            out[e.model] = (e.verdict, checks, e.message)
    return out


def test_demo_fuse_is_judged_in_the_sandbox(demo_workbench):
    before = tree_digest(demo_workbench / "models")
    got = run(demo_workbench, [("demo-careful", "fuse"), ("demo-hasty", "fuse"), ("demo-quitter", "fuse")])
    assert tree_digest(demo_workbench / "models") == before
    verdict, checks, message = got["demo-careful"]
    assert verdict == V.PASS, {n: (c["verdict"], c["message"]) for n, c in checks.items()}
    assert "in the answer's sandbox" in checks["build_library"]["message"]
    assert checks["timed_outputs"]["verdict"] == V.PASS
    assert checks["topk[V=151936,k=32]"]["verdict"] == V.PASS
    bandwidth = checks["bandwidth"]
    assert bandwidth["verdict"] == V.INFO and 0 < bandwidth["value"] < 1, bandwidth
    assert checks["roofline"]["value"] >= 1 and checks["speed"]["value"] > 0
    assert "4096 x 151936, k=32 on" in checks["speed"]["message"]
    assert got["demo-hasty"][0] == V.COMPILE_ERROR
    assert got["demo-quitter"][0] == V.COMPILE_ERROR


def details_of(check: dict) -> dict:
    d = check.get("details")
    return json.loads(d) if isinstance(d, str) else (d or {})


def test_timing_exploits_buy_no_better_figure(tmp_path):
    names = ["honest", "other_stream", "replay", "skip_after_warmup", "patched_timer", "ctor_patch"]
    root = exploit_workbench(tmp_path / "wb", names)
    got = run(root, [(f"x-{n}", "fuse") for n in names])
    honest = got["x-honest"][1]
    assert got["x-honest"][0] == V.PASS, {n: c["message"] for n, c in honest.items()}
    base = honest["roofline"]["value"]
    assert base and base >= 1
    honest_events = details_of(honest["roofline"])["events_median_s"]
    # the checker's clock and the answer's events agree for an honest kernel
    assert abs(details_of(honest["roofline"])["answer_median_s"] / honest_events - 1) < 0.1, details_of(honest["roofline"])
    for name in names[1:]:
        verdict, checks, _ = got[f"x-{name}"]
        figure = checks["roofline"]
        # flagged (never ranked), or no faster than the honest kernel beyond noise
        assert figure["value"] is None or figure["value"] >= 0.9 * base, (name, figure["message"], base)
    for name in ("replay", "skip_after_warmup"):
        verdict, checks, _ = got[f"x-{name}"]
        assert verdict == V.FAIL and checks["timed_outputs"]["verdict"] == V.FAIL, (name, checks["timed_outputs"])
        assert checks["speed"]["value"] is None
    # work left on another stream: its outputs are complete when read and its events count it
    # (both hold only while the harness syncs the whole device around the call)
    verdict, checks, _ = got["x-other_stream"]
    assert checks["timed_outputs"]["verdict"] == V.PASS, checks["timed_outputs"]["message"]
    assert details_of(checks["roofline"])["events_median_s"] >= 0.9 * honest_events, details_of(checks["roofline"])
    # a 0.6x forgery of the answer's own timer, from Python or from a C constructor: ranked by the
    # checker's clock, and said
    for name in ("patched_timer", "ctor_patch"):
        figure = got[f"x-{name}"][1]["roofline"]
        assert figure["value"] is not None and figure["value"] >= 0.9 * base, (name, figure["message"])
        assert details_of(figure)["events_disagree"] and "the answer's own CUDA events say" in figure["message"], name


def test_a_persisting_l2_window_on_an_input_that_fits_in_l2_buys_nothing(tmp_path):
    """32 MB of logits fit in an H100's 50 MB L2: pinned there through a
    persisting window, they would be read from L2 but for the persisting
    lines the harness resets before every call. Compared on the events,
    which resolve microseconds."""
    names = ["honest", "l2_persist"]
    root = exploit_workbench(tmp_path / "wb", names, timing_rows=256, timing_V=32768)
    got = run(root, [(f"x-{n}", "fuse") for n in names])
    assert got["x-honest"][0] == V.PASS and got["x-l2_persist"][0] == V.PASS, got
    honest = details_of(got["x-honest"][1]["roofline"])
    pinned = details_of(got["x-l2_persist"][1]["roofline"])
    assert honest["gpu"]["l2_bytes"] > 256 * 32768 * 4, honest["gpu"]
    assert pinned["events_median_s"] >= 0.9 * honest["events_median_s"], (pinned["events_median_s"], honest["events_median_s"])


def test_device_faults_are_the_answers_and_the_gpu_survives(tmp_path):
    names = ["endless", "out_of_bounds", "hog_memory", "forge", "honest"]
    root = exploit_workbench(tmp_path / "wb", names)
    got = run(root, [(f"x-{n}", "fuse") for n in names[:-1]], timeout_s=60, jobs=2)
    assert got["x-endless"][0] == V.TIMEOUT, got["x-endless"][2]
    verdict, checks, _ = got["x-out_of_bounds"]
    assert verdict == V.ERROR and "cudaErrorIllegalAddress" in checks["topk[V=1000,k=5]"]["message"]
    # it takes the memory during its first call; the next call's buffers cannot be had
    verdict, checks, _ = got["x-hog_memory"]
    assert verdict == V.ERROR and any("cudaErrorMemoryAllocation" in c["message"] for c in checks.values()), checks
    verdict, checks, _ = got["x-forge"]
    assert "forged" not in checks  # it found neither the results file nor the reference, so it computed
    assert verdict == V.PASS
    # the GPU still works for the next answer
    assert run(root, [("x-honest", "fuse")])["x-honest"][0] == V.PASS


PUBLISHED = next((p for p in (REPO / "shared" / "published-benchmark" / "llm_programming_tests",
                               REPO.parent / "shared" / "published-benchmark" / "llm_programming_tests") if p.is_dir()),
                 REPO.parent / "shared" / "published-benchmark" / "llm_programming_tests")


def test_published_fuse_answers_get_verdicts(tmp_path):
    if not PUBLISHED.is_dir():
        pytest.skip(f"the published benchmark is not at {PUBLISHED}")
    root = tmp_path / "pub"
    shutil.copytree(PUBLISHED, root, symlinks=True)
    models = ["glm5", "minimax-m2.7", "opus47_1m", "qwen36"]
    got = run(root, [(m, "fuse") for m in models], jobs=2)
    for model in ("glm5", "minimax-m2.7", "qwen36"):
        assert got[model][0] == V.COMPILE_ERROR, (model, got[model][2])
    verdict, checks, message = got["opus47_1m"]
    assert verdict in (V.PASS, V.FAIL), (verdict, message)
    assert checks["build_library"]["verdict"] == V.PASS and checks["fewer_than_k_finite"]["verdict"] == V.INFO
