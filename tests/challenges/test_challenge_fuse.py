"""fuse: the nvcc compile check, the shim build, the tie-aware reference and
the GPU-side check logic (run here on a NumPy stand-in for CuPy).

nvcc costs seconds per file, so compile results are cached by content hash
in a per-module temp dir ($BENCHTUI_NVCC_CACHE)."""
from __future__ import annotations

import ctypes
import itertools
import shutil
import subprocess
import time

import numpy as np
import pytest
from benchtui.challenges.definition import BUNDLED_CHALLENGES, load_challenge
from benchtui.records import verdicts as V
from benchtui.runner.local import run_local
from benchtui.verify.binding import load_module
from benchtui.verify.cuda import build as cuda_build
from benchtui.verify.cuda import device as cuda_device
from benchtui.verify.cuda import suite as cuda_suite
from benchtui.verify.suite import Suite
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = BUNDLED_CHALLENGES.parent
CHALLENGE = BUNDLED_CHALLENGES / "fuse"
MODELS = ROOT / "models"
ref = load_module(CHALLENGE / "reference.py", "benchtui_test_fuse_reference")
conformance = load_module(CHALLENGE / "conformance.py", "benchtui_test_fuse_conformance")

needs_nvcc = pytest.mark.skipif(cuda_build.find_nvcc() is None, reason="nvcc not installed")


@pytest.fixture(scope="module", autouse=True)
def nvcc_cache(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("BENCHTUI_NVCC_CACHE", str(tmp_path_factory.mktemp("nvcc-cache")))
        yield


def by_name(out: dict) -> dict:
    return {c["name"]: c for c in out["checks"]}


# -- challenge files ---------------------------------------------------------------

def test_challenge_definition_and_prompt_copies():
    ch = load_challenge(CHALLENGE)
    assert (ch.id, ch.difficulty, ch.language, ch.position, ch.backends) == ("fuse", "MEDIUM", "cuda", 2, ("cuda",))
    assert {"Fused Softmax+TopK", "Fused Softmax + Top-K", "Softmax TopK"} <= set(ch.display_names)
    assert ch.thresholds["V"] == [1000, 50257, 151936] and ch.thresholds["k"] == [1, 5, 32]
    assert ch.thresholds["rtol"] == 1e-5
    prompt = ch.prompt_path.read_bytes()
    for model in ("demo-careful", "demo-hasty", "demo-quitter"):
        assert (MODELS / model / "fuse" / "PROMPT.md").read_bytes() == prompt
        assert not list((MODELS / model / "fuse").glob("*.jsonl")), "no transcripts in answer folders"
    assert ch.adapter_path("demo-careful").suffix == ".cu"


# -- compile check (no GPU needed) -----------------------------------------------------

@needs_nvcc
def test_careful_compiles_and_gpu_checks_skip_with_reason():
    out = run_local("fuse", MODELS / "demo-careful" / "fuse", model="demo-careful", backend="cpu")
    checks = by_name(out)
    for name in ("nvcc_compile:softmax_topk.cu", "nvcc_compile:main.cu"):
        assert checks[name]["verdict"] == V.PASS, checks[name]
        assert checks[name]["value"] >= 0
    gpu = [c for c in out["checks"] if not c["name"].startswith("nvcc_compile")]
    assert {c["name"] for c in gpu} >= {"build_library", "topk[V=151936,k=32]", "ties", "neg_inf", "speed"}
    assert all(c["verdict"] == V.SKIPPED and c["message"].startswith("needs an NVIDIA GPU") for c in gpu)
    assert out["verdict"] == V.SKIPPED  # never "pass" while the GPU checks did not run


@needs_nvcc
def test_hasty_fails_for_missing_cfloat():
    out = run_local("fuse", MODELS / "demo-hasty" / "fuse", model="demo-hasty", backend="cpu")
    check = by_name(out)["nvcc_compile:fused_softmax_topk.cu"]
    assert out["verdict"] == V.COMPILE_ERROR
    assert check["verdict"] == V.COMPILE_ERROR and check["value"] >= 1
    assert 'fused_softmax_topk.cu(33): error: identifier "FLT_MAX" is undefined' in check["message"]
    assert "/tmp" not in check["message"]  # paths shown relative to the answer


@needs_nvcc
def test_quitter_prose_saved_as_cu_fails_honestly():
    out = run_local("fuse", MODELS / "demo-quitter" / "fuse", model="demo-quitter", backend="cpu")
    check = by_name(out)["nvcc_compile:kernel.cu"]
    assert check["verdict"] == V.COMPILE_ERROR
    assert "invalid preprocessing directive #Fused" in check["message"]


@needs_nvcc
@pytest.mark.parametrize("text, expected", [
    ("__global__ void k(float* x) {\n  x[0] = 1.f\n}\n", 'expected a ";"'),
    ("Here is the fused kernel you asked for:\n\n__global__ void k(float* x) { x[0] = 1.f; }\n",
     'identifier "Here" is undefined'),
    ("#include <cfloat>\n/* outer /* nested */ still a comment? */\n__global__ void k(float* x) { x[0] = FLT_MAX; }\n",
     'identifier "still" is undefined'),
])
def test_mutant_sources_are_compile_errors(tmp_path, text, expected):
    (tmp_path / "kernel.cu").write_text(text)
    out = run_local("fuse", tmp_path, model="mutant", backend="cpu")
    check = by_name(out)["nvcc_compile:kernel.cu"]
    assert check["verdict"] == V.COMPILE_ERROR and expected in check["message"]


@needs_nvcc
def test_every_cu_file_is_compiled_and_broken_header_is_caught(tmp_path):
    answer = tmp_path / "answer"
    shutil.copytree(MODELS / "demo-careful" / "fuse", answer)
    src = (answer / "softmax_topk.cu").read_text()
    (answer / "softmax_topk.cu").write_text(src.replace("constexpr int kMaxK = 32;", "constexpr int kMaxK = 32"))
    checks = by_name(run_local("fuse", answer, model="mutant", backend="cpu"))
    # main.cu includes the kernel: both translation units fail.
    assert checks["nvcc_compile:softmax_topk.cu"]["verdict"] == V.COMPILE_ERROR
    assert checks["nvcc_compile:main.cu"]["verdict"] == V.COMPILE_ERROR


def test_no_cuda_source_is_unbound(tmp_path):
    (tmp_path / "answer.md").write_text("I would write a kernel that...")
    check = by_name(run_local("fuse", tmp_path, model="x", backend="cpu"))["nvcc_compile"]
    assert check["verdict"] == V.UNBOUND and "*.cu" in check["message"]


def test_missing_nvcc_is_skipped_with_reason(tmp_path, monkeypatch):
    (tmp_path / "kernel.cu").write_text("__global__ void k() {}\n")
    monkeypatch.setattr(cuda_build, "find_nvcc", lambda: None)
    check = by_name(run_local("fuse", tmp_path, model="x", backend="cpu"))["nvcc_compile"]
    assert check["verdict"] == V.SKIPPED and "nvcc not found" in check["message"]


@needs_nvcc
def test_compile_cache_is_keyed_on_included_headers(tmp_path):
    (tmp_path / "k.cuh").write_text("#define SCALE 2.0f\n")
    (tmp_path / "k.cu").write_text('#include "k.cuh"\n__global__ void k(float* x) { x[0] *= SCALE; }\n')
    first = cuda_build.compile_check(tmp_path / "k.cu")
    again = cuda_build.compile_check(tmp_path / "k.cu")
    assert first.ok and not first.cached and again.ok and again.cached
    (tmp_path / "k.cuh").write_text("#define SCALE\n")  # the header breaks the .cu
    broken = cuda_build.compile_check(tmp_path / "k.cu")
    assert not broken.cached and not broken.ok and broken.error_count >= 1


def test_first_errors_reads_nvcc_and_gcc_formats():
    output = ('k.cu(3): error: expected a ";"\n  }\n  ^\n\nk.cu(9): warning #177-D: unused\n'
              'k.cu:1:3: error: invalid preprocessing directive #Fused\n'
              "2 errors detected in the compilation of \"k.cu\".\n")
    lines, count = cuda_build.first_errors(output)
    assert lines == ['k.cu(3): error: expected a ";"', "k.cu:1:3: error: invalid preprocessing directive #Fused"]
    assert count == 2


# -- the shim build -------------------------------------------------------------------

@needs_nvcc
def test_shim_builds_a_loadable_shared_library(tmp_path):
    answer = MODELS / "demo-careful" / "fuse"
    out = tmp_path / "libfuse.so"
    result = cuda_build.build_shared_library([CHALLENGE / "adapters" / "demo-careful.cu"], out,
                                             include_dirs=[answer], arch="sm_90")
    assert result.ok, result.output
    fn = getattr(ctypes.CDLL(str(out)), conformance.SYMBOL)  # loads without a driver; never called here
    assert fn is not None


@needs_nvcc
def test_shim_build_of_hasty_reports_the_compile_error(tmp_path):
    result = cuda_build.build_shared_library([CHALLENGE / "adapters" / "demo-hasty.cu"], tmp_path / "lib.so",
                                             include_dirs=[MODELS / "demo-hasty" / "fuse"], arch="sm_90")
    assert not result.ok and not (tmp_path / "lib.so").exists()
    assert 'identifier "FLT_MAX" is undefined' in result.summary()


# -- the reference -------------------------------------------------------------------

def test_softmax64_is_stable_for_huge_and_neg_inf_logits():
    x = np.array([[1e4, 1e4 - 1, -1e4, -np.inf], [-1e4, -1e4, -1e4, -1e4]], dtype=np.float32)
    p = ref.softmax64(x)
    assert np.all(np.isfinite(p)) and np.allclose(p.sum(axis=1), 1.0)
    assert p[0, 3] == 0.0 and p[0, 2] == 0.0
    assert np.isclose(p[0, 0] / p[0, 1], np.e)
    assert np.allclose(p[1], 0.25)


def test_topk_reference_orders_by_probability_then_index():
    x = np.array([[0.5, 3.0, 3.0, -np.inf, 1.0]], dtype=np.float32)
    probs, idx = ref.topk_reference(x, 3)
    assert idx.tolist() == [[1, 2, 4]]
    assert np.all(np.diff(probs[0]) <= 0)


def test_tie_sets_describe_every_valid_choice():
    row = np.array([5, 3, 3, 3, 1], dtype=np.float32)
    t = ref.tie_sets(row, 2)
    assert t.required == {0} and t.tied == {1, 2, 3} and t.n_choose == 1 and t.count() == 3
    assert t.contains([0, 3]) and t.contains([2, 0])
    assert not t.contains([0, 4]) and not t.contains([1, 2])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([-np.inf, 0.0, 1.0, 2.0]), min_size=1, max_size=6).filter(lambda r: max(r) > -np.inf),
       st.data())
def test_tie_sets_match_brute_force(values, data):
    row = np.array(values, dtype=np.float32)
    k = data.draw(st.integers(1, len(values)))
    best = sorted(row, reverse=True)[:k]
    t = ref.tie_sets(row, k)
    for subset in itertools.combinations(range(len(row)), k):
        assert t.contains(subset) == (sorted(row[list(subset)], reverse=True) == best)


def answer_for(x: np.ndarray, k: int):
    probs, idx = ref.topk_reference(x, k)
    return probs.astype(np.float32), idx.astype(np.int32)


def test_check_topk_accepts_any_tied_choice_and_rejects_wrong_answers():
    x = np.array([[2.0, 7.0, 7.0, 7.0, -np.inf, 1.0]], dtype=np.float32)
    probs, idx = answer_for(x, 2)
    p = ref.softmax64(x)[0]
    ok = lambda i, q: ref.check_topk_row(x[0], p, np.array(i), np.array(q, dtype=np.float32), 2, 1e-5)
    assert ok([1, 2], probs[0]) is None and ok([3, 1], probs[0]) is None  # any two of the tied 7s
    assert "not a top-2 set" in ok([1, 0], [p[1], p[0]])
    assert "repeated index" in ok([1, 1], probs[0])
    assert "out of range" in ok([1, 6], probs[0])
    assert "relative error" in ok([1, 2], probs[0] * (1 + 1e-4))
    assert ok([1, 2], probs[0] * (1 + 2e-6)) is None
    assert "non-finite" in ok([1, 2], [np.nan, probs[0][1]])
    y = np.array([[1.0, 2.0, 3.0]], dtype=np.float32)
    py = ref.softmax64(y)[0]
    assert "not sorted" in ref.check_topk_row(y[0], py, np.array([1, 2]), py[[1, 2]].astype(np.float32), 2, 1e-5)


def test_check_topk_on_adversarial_inputs():
    rng = np.random.default_rng(0)
    for x, k in ((conformance.tie_logits(rng, 5, 300), 32), (conformance.neg_inf_logits(rng, 5, 300, 32), 32),
                 (conformance.huge_logits(rng, 5, 300), 5)):
        probs, idx = answer_for(x, k)
        assert ref.check_topk(x, idx, probs, k, 1e-5) == (0, None)
        # Probabilities normalised over the k survivors only: wrong.
        bad = (probs / probs.sum(axis=1, keepdims=True)).astype(np.float32)
        assert ref.check_topk(x, idx, bad, k, 1e-5)[0] > 0
    x = conformance.neg_inf_logits(rng, 4, 300, 32)
    assert np.isfinite(x[1]).sum() < 32 and np.isneginf(x[:, 0]).all()


# -- GPU-side check logic on a NumPy stand-in for the answer's process -------------------

class NumpyKernelHost:
    """cuda_device.KernelHost's interface over a Python kernel, so the checker's
    logic runs without a GPU. ``clock(trial, wall)`` says what the answer's
    side reports as a timed call's seconds (an honest host reports ``wall``);
    ``work_in`` says where in a cycle the kernel's work happens (``call``,
    inside the answer's events; ``prepare`` or ``outputs``, outside them);
    ``stall(trial)`` adds seconds outside the events (a loaded machine)."""

    def __init__(self, kernel, *, peak=1e12, clock=None, work_in="call", stall=None):
        self.kernel, self.peak, self.clock, self.work_in, self.stall = kernel, peak, clock, work_in, stall
        self.calls = 0
        self.timing = None
        self.seeds = []
        self.work_s = []  # how long each call's work really took

    def device_info(self):
        return {"name": "NumPy stand-in", "peak_bytes_per_s": self.peak, "l2_bytes": 1 << 20}

    def call(self, args):
        x, rows, vocab, k, (_, n_probs, fill_probs), (_, n_idx, fill_idx) = args
        x = np.array(x, copy=True)
        probs = np.full(n_probs, fill_probs, dtype=np.uint32).view(np.float32)
        idx = np.full(n_idx, fill_idx, dtype=np.int32)
        self.kernel(x, k, probs, idx)
        return {"rc": 0, "error": "", "rc_name": "", "outputs": [probs, idx], "inputs": [x.ravel()]}

    def timing_setup(self, inputs, outputs, scratch_bytes, launches=1):
        assert inputs == [("float32", SMALL["timing_rows"] * SMALL["timing_V"], 0, 0)] and launches == 1
        self.timing = {"outputs": outputs}

    def work(self):
        t = self.timing
        start = time.perf_counter()
        self.kernel(t["x"], t["k"], *t["out"])
        self.work_s.append(time.perf_counter() - start)
        self.calls += 1

    # the cycle in parts (an older checker timed only the call) and whole
    def timing_prepare(self, seed, trial):
        rows, vocab = SMALL["timing_rows"], SMALL["timing_V"]  # inputs made before the call, as on a GPU
        (_, n, fill_probs), (_, _, fill_idx) = self.timing["outputs"]
        out = [np.full(n, fill_probs, dtype=np.uint32).view(np.float32), np.full(n, fill_idx, dtype=np.int32)]
        self.timing.update(seed=seed, trial=trial, x=cuda_device.seeded_rows(seed, range(rows), vocab), out=out,
                           k=SMALL["timing_k"])
        self.seeds.append(seed)
        if self.work_in == "prepare":
            self.work()

    def timing_call(self, ints):
        rows, vocab, k = ints
        assert self.timing["x"].shape == (rows, vocab)
        start = time.perf_counter()
        if self.work_in == "call":
            self.work()
        wall = time.perf_counter() - start
        if self.stall:  # after the events stopped, before the reply
            time.sleep(self.stall(self.timing["trial"]))
        seconds = self.clock(self.timing["trial"], wall) if self.clock else wall
        return {"rc": 0, "error": "", "seconds": seconds}

    def timing_outputs(self):
        if self.work_in == "outputs":
            self.work()
        return self.timing["out"]

    def timing_cycle(self, seeds, trial, ints):
        (seed,), = seeds
        self.timing_prepare(seed, trial)
        got = self.timing_call(ints)
        return {**got, "outputs": [self.timing_outputs()]}

    def timing_release(self):
        self.timing = None


def python_kernel(x, k, probs, idx, *, mutate=None):
    """A correct top-k softmax written into the flat output buffers; ties go
    to the highest index (unlike the reference) to exercise tie-awareness."""
    rows = x.shape[0]
    flipped = x[:, ::-1]
    p, order = ref.topk_reference(flipped, k)
    order = x.shape[1] - 1 - order
    if mutate == "naive_exp":
        with np.errstate(all="ignore"):
            e = np.exp(x.astype(np.float32))
            p = np.take_along_axis(e / e.sum(axis=1, keepdims=True), order, axis=1)
    if mutate == "renormalise":
        p = p / p.sum(axis=1, keepdims=True)
    if mutate == "few_blocks":  # a grid sized for at most 64 rows
        rows = min(rows, 64)
    if mutate == "pad_minus_one":  # rows with fewer than k finite logits padded with index -1
        finite = np.isfinite(x).sum(axis=1)
        for r in np.flatnonzero(finite < k):
            order[r, finite[r]:] = -1
            p[r, finite[r]:] = 0.0
    probs[: rows * k] = p[:rows].astype(np.float32).ravel()
    idx[: rows * k] = order[:rows].astype(np.int32).ravel()
    if mutate == "overrun":
        idx[rows * k] = 0
    if mutate == "in_place":
        x[:, 0] = 0.0


SMALL = {"V": [1000, 4099], "adversarial_V": 4099, "timing_rows": 48, "timing_V": 3000, "timing_k": 5,
         "timing_trials": 6, "timing_warmup": 1}


def fake_suite(tmp_path, **thresholds):
    return Suite(challenge_id="fuse", answer_dir=tmp_path, challenge_dir=CHALLENGE, model="fake", seed=7,
                 backend="cuda", thresholds={**load_challenge(CHALLENGE).thresholds, **SMALL, **thresholds})


def run_fake(tmp_path, mutate=None) -> dict:
    suite = fake_suite(tmp_path)
    conformance.FuseChecks(suite, NumpyKernelHost(lambda x, k, p, i: python_kernel(x, k, p, i, mutate=mutate))).run_correctness()
    return {c.name: c for c in suite.checks}


def test_gpu_checks_pass_a_correct_kernel_with_other_tie_choices(tmp_path):
    checks = run_fake(tmp_path)
    assert set(checks) == {"topk[V=1000,k=1]", "topk[V=1000,k=5]", "topk[V=1000,k=32]", "topk[V=4099,k=1]",
                           "topk[V=4099,k=5]", "topk[V=4099,k=32]", "ties", "neg_inf", "fewer_than_k_finite",
                           "magnitude_1e4"}
    verdicts = {n: c.verdict for n, c in checks.items()}
    assert verdicts.pop("fewer_than_k_finite") == V.INFO
    assert set(verdicts.values()) == {V.PASS}, {n: c.message for n, c in checks.items()}
    assert checks["topk[V=4099,k=32]"].value < 1e-6


@pytest.mark.parametrize("mutate, failing, text", [
    ("naive_exp", "magnitude_1e4", "non-finite"),
    ("renormalise", "topk[V=1000,k=5]", "relative error"),
    ("few_blocks", "topk[V=1000,k=1]", "3/67 rows wrong"),
    ("overrun", "ties", "wrote past the end"),
    ("in_place", "neg_inf", "modified the logits"),
])
def test_gpu_checks_catch_mutant_kernels(tmp_path, mutate, failing, text):
    check = run_fake(tmp_path, mutate)[failing]
    assert check.verdict == V.FAIL and text in check.message, check.message


def test_fewer_than_k_finite_is_a_figure_not_a_verdict(tmp_path):
    """Neither prompt says what fills a row with fewer than k finite logits:
    padding with -1 is described, and neg_inf still judges every other row."""
    checks = run_fake(tmp_path, "pad_minus_one")
    assert checks["neg_inf"].verdict == V.PASS, checks["neg_inf"].message
    info = checks["fewer_than_k_finite"]
    assert info.verdict == V.INFO and "out-of-range indices [-1]" in info.message
    assert "fills with -inf entries" in run_fake(tmp_path)["fewer_than_k_finite"].message


def test_device_fault_is_an_error_naming_the_cuda_error(tmp_path):
    class Faulting(NumpyKernelHost):
        def call(self, args):
            return {"rc": 0, "error": "cudaErrorIllegalAddress: an illegal memory access was encountered", "rc_name": ""}

    suite = fake_suite(tmp_path)
    conformance.FuseChecks(suite, Faulting(python_kernel)).run_correctness()
    check = {c.name: c for c in suite.checks}["topk[V=1000,k=1]"]
    assert check.verdict == V.ERROR and "cudaErrorIllegalAddress" in check.message


# -- timing: figures, and the exploits that must not buy a better one ---------------------

class StandInDevice:
    """The checker's own view of the device (cuda_device.CheckerDevice's interface)."""

    harness = None  # the library baseline is a stand-in too

    def __init__(self, peak=1e12):
        self.info = {"name": "NumPy stand-in", "peak_bytes_per_s": peak, "l2_bytes": 1 << 20}

    def empty_cycles(self, inputs, outputs, scratch_bytes, seeds, launches=1):
        rows, vocab = SMALL["timing_rows"], SMALL["timing_V"]
        assert inputs == [("float32", rows * vocab, 0, 0)]
        times = []
        for (seed,), in seeds:
            start = time.perf_counter()
            cuda_device.seeded_rows(seed, range(rows), vocab)
            [np.full(n, fill, dtype=np.int64).astype(np.int32) for _, n, fill in outputs]
            times.append(time.perf_counter() - start)
        return times


def timed(tmp_path, host, baseline_s=0.02, peak=None):
    """The timing checks; the checker's device has ``peak`` (by default the
    one the answer's stand-in says, which an honest one says truly)."""
    suite = fake_suite(tmp_path)
    device = StandInDevice(host.peak if peak is None else peak)
    checks = conformance.FuseChecks(suite, host, baseline=lambda rows, vocab, k, seeds: ("fake baseline", [baseline_s] * len(seeds)),
                                    device=device)
    checks.speed_and_bandwidth()
    return {c.name: c for c in suite.checks}


def test_timing_reports_bandwidth_roofline_and_speed_for_an_honest_kernel(tmp_path):
    host = NumpyKernelHost(python_kernel, peak=1e15)
    got = timed(tmp_path, host)
    assert host.calls == 7  # one warm-up and six timed calls, each on fresh inputs
    assert got["timed_outputs"].verdict == V.PASS and got["timed_outputs"].details["rows_checked"] == 14
    speed, bandwidth, roofline = got["speed"], got["bandwidth"], got["roofline"]
    assert {speed.verdict, bandwidth.verdict, roofline.verdict} == {V.INFO}
    med = speed.details["answer_median_s"]
    moved = 48 * 3000 * 4 + 48 * 5 * 8
    assert speed.value == pytest.approx(0.02 / med, rel=1e-3)
    assert bandwidth.value == pytest.approx(moved / med / 1e15, rel=1e-3)
    assert roofline.value == pytest.approx(med / (moved / 1e15), rel=1e-3)
    assert "flagged" not in speed.details and "fake baseline" in speed.message and "NumPy stand-in" in speed.message


def ranked_median_s(checks) -> float:
    """The median time the figures rank, recovered from the roofline ratio."""
    return checks["roofline"].value * checks["roofline"].details["roofline_s"]


def slow_kernel(x, k, probs, idx):
    # Long beside the few milliseconds by which the stand-in device's empty cycle
    # (its own harness: inputs made, a 256 MiB flush) can exceed the stand-in
    # host's cycle around the call, so that over-subtraction stays within the
    # tests' 15% bound on a cold or busy machine.
    time.sleep(0.05)
    python_kernel(x, k, probs, idx)


def test_a_timer_forged_at_0_6x_buys_nothing_and_is_said(tmp_path):
    """The answer's process reports 0.6x of its real time: what ranks is this
    side's clock, and the answer's word is shown as its own beside it."""
    host = NumpyKernelHost(slow_kernel, peak=1e15, clock=lambda trial, wall: 0.6 * wall)
    got = timed(tmp_path, host)
    assert got["timed_outputs"].verdict == V.PASS
    assert ranked_median_s(got) >= 0.85 * np.median(host.work_s), (ranked_median_s(got), np.median(host.work_s))
    for name in ("speed", "bandwidth", "roofline"):
        details = got[name].details
        assert details["events_disagree"] and details["events_median_s"] < 0.7 * details["answer_median_s"]
        assert "the answer's own CUDA events say" in got[name].message


@pytest.mark.parametrize("work_in", ["prepare", "outputs"])
def test_work_moved_out_of_the_call_is_still_timed(tmp_path, work_in):
    """The kernel's work done while the inputs are made, or while the outputs
    are fetched, with the events saying the call took 1 us: this side's clock
    spans the whole cycle, so the time is still counted."""
    host = NumpyKernelHost(slow_kernel, peak=1e15, work_in=work_in, clock=lambda trial, wall: 1e-6)
    got = timed(tmp_path, host)
    assert got["timed_outputs"].verdict == V.PASS
    assert ranked_median_s(got) >= 0.85 * np.median(host.work_s), (ranked_median_s(got), np.median(host.work_s))


def test_one_noisy_call_does_not_flag_an_honest_kernel(tmp_path):
    """A loaded machine stalls one call by 60 ms outside the kernel: the
    medians agree, nothing is flagged and every figure ranks."""
    host = NumpyKernelHost(slow_kernel, peak=1e15, stall=lambda trial: 0.06 if trial == 3 else 0.0)
    got = timed(tmp_path, host)
    for name in ("speed", "bandwidth", "roofline"):
        assert got[name].value is not None and "flagged" not in got[name].details, got[name].message


def test_timed_calls_get_128_bit_seeds(tmp_path):
    host = NumpyKernelHost(python_kernel, peak=1e15)
    timed(tmp_path, host)
    assert len(set(host.seeds)) == len(host.seeds) == 7 and max(s.bit_length() for s in host.seeds) > 100


def test_a_leftover_thread_of_the_answer_cannot_slow_the_baseline(tmp_path, monkeypatch):
    """The answer's first call leaves a thread behind that would slow
    anything timed after it: the library baseline is timed before the
    answer's library is built, so its figure is the baseline's own."""
    import threading

    leftover = threading.Event()

    def kernel(x, k, probs, idx):
        if not leftover.is_set():
            threading.Thread(target=leftover.wait, daemon=True).start()
            leftover.set()
        python_kernel(x, k, probs, idx)

    def baseline(rows, vocab, k, seeds, *harness):
        return "fake baseline", [0.06 if leftover.is_set() else 0.02] * len(seeds)

    host = NumpyKernelHost(kernel, peak=1e15)
    monkeypatch.setattr(cuda_build, "gpu_status", lambda: (True, "a stand-in"))
    monkeypatch.setattr(cuda_build, "find_nvcc", lambda: "nvcc")
    monkeypatch.setattr(conformance, "build_in_answer_process", lambda suite: host)
    monkeypatch.setattr(cuda_suite, "checker_device", lambda: StandInDevice(1e15))
    monkeypatch.setattr(conformance, "library_baseline", baseline)
    suite = fake_suite(tmp_path)
    suite.adapter_path = tmp_path / "adapter.cu"
    conformance.gpu_checks(suite)
    speed = {c.name: c for c in suite.checks}["speed"]
    assert leftover.is_set() and speed.value is not None
    assert speed.details["baseline"]["median_s"] == pytest.approx(0.02), speed.message


def test_replaying_a_warm_up_result_fails_and_is_not_ranked(tmp_path):
    kept = {}

    def replay(x, k, probs, idx):
        if not kept:
            python_kernel(x, k, probs, idx)
            kept["out"] = (probs.copy(), idx.copy())
        probs[:], idx[:] = kept["out"]

    got = timed(tmp_path, NumpyKernelHost(replay, peak=1e15))
    assert got["timed_outputs"].verdict == V.FAIL and "sampled rows of the timed calls wrong" in got["timed_outputs"].message
    assert got["speed"].value is None and "outputs are wrong" in got["speed"].message


def test_skipping_work_after_warm_up_fails(tmp_path):
    host = NumpyKernelHost(None, peak=1e15)
    host.kernel = lambda x, k, probs, idx: python_kernel(x, k, probs, idx) if host.calls < 1 else None
    got = timed(tmp_path, host)
    assert got["timed_outputs"].verdict == V.FAIL


def test_a_forged_peak_from_the_answer_s_process_moves_no_figure(tmp_path):
    """The device's peak bandwidth is read by the checker: an answer's process
    that says its GPU is 0.64x as fast as it is changes no figure."""
    # each figure is checked against its own run's measured time and the checker's peak (two
    # separately timed runs would make the test rest on the machine's noise)
    forged = timed(tmp_path, NumpyKernelHost(python_kernel, peak=0.64e12), peak=1e12)
    for name in ("bandwidth", "roofline"):
        assert forged[name].details["peak_bytes_per_s"] == 1e12
    bandwidth = forged["bandwidth"].details
    assert forged["bandwidth"].value == pytest.approx(bandwidth["bytes"] / bandwidth["answer_median_s"] / 1e12, rel=1e-3)
    roofline = forged["roofline"].details
    assert roofline["roofline_s"] == pytest.approx(bandwidth["bytes"] / 1e12, rel=1e-3)
    assert forged["roofline"].value == pytest.approx(roofline["answer_median_s"] / roofline["roofline_s"], rel=1e-2)


def test_a_time_below_the_roofline_is_flagged(tmp_path):
    # a peak of 1 MB/s puts the roofline at ~0.6 s: an honest 1 ms is impossible there
    got = timed(tmp_path, NumpyKernelHost(python_kernel, peak=1e6))
    assert got["roofline"].value is None and "below the roofline" in got["roofline"].message


def test_timing_failure_is_recorded_not_raised(tmp_path):
    class Broken(NumpyKernelHost):
        def timing_cycle(self, seeds, trial, ints):
            return {"rc": 0, "error": "cudaErrorLaunchTimeout: the launch timed out", "seconds": None}

    got = timed(tmp_path, Broken(python_kernel))
    assert got["timed_outputs"].verdict == V.ERROR and "cudaErrorLaunchTimeout" in got["timed_outputs"].message
    assert got["speed"].verdict == V.INFO and got["speed"].value is None


@needs_nvcc
def test_seeded_rows_match_the_device_generator_bit_for_bit(tmp_path):
    """The checker regenerates sampled rows on the host: the harness's hash,
    compiled by nvcc and run on the host, must give the same floats, for a
    128-bit seed whose high word matters."""
    seed = 0x0FEDCBA987654321_0123456789ABCDEF
    lo, hi = seed & (2**64 - 1), seed >> 64
    main = tmp_path / "gen.cu"
    main.write_text(f'#include "{cuda_device.HARNESS_SOURCE}"\n#include <cstdio>\n'
                    "int main() { long long cols = 1000;\n"
                    "  for (long long i = 2 * cols; i < 3 * cols; ++i)\n"
                    f"    printf(\"%a\\n\", benchtui_seeded_value((uint64_t)i, {lo}ULL, {hi}ULL)); }}\n")
    exe = tmp_path / "gen"
    proc = subprocess.run([cuda_build.find_nvcc(), "-std=c++17", str(main), "-o", str(exe)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    device = [float.fromhex(v) for v in subprocess.run([str(exe)], capture_output=True, text=True).stdout.split()]
    host = cuda_device.seeded_rows(seed, [2], 1000)[0]
    assert host.dtype == np.float32 and host.tolist() == device
    assert host.min() >= -8.0 and host.max() < 8.0 and len(set(host.tolist())) > 990
    # every bit of the seed picks the values: the high word alone changes them
    assert not np.array_equal(host, cuda_device.seeded_rows(seed ^ (1 << 100), [2], 1000)[0])


# -- on a real GPU -------------------------------------------------------------------

def gpu_reason() -> str:
    usable, reason = cuda_build.gpu_status()
    return "" if usable else reason


@pytest.mark.gpu
@needs_nvcc
def test_full_conformance_on_gpu_for_demo_careful():
    reason = gpu_reason()
    if reason:
        pytest.skip(f"needs an NVIDIA GPU: {reason}")
    out = run_local("fuse", MODELS / "demo-careful" / "fuse", model="demo-careful", backend="cuda")
    checks = by_name(out)
    assert out["verdict"] == V.PASS, {n: (c["verdict"], c["message"]) for n, c in checks.items()}
    assert checks["speed"]["verdict"] == V.INFO and checks["bandwidth"]["verdict"] == V.INFO


@pytest.mark.gpu
@needs_nvcc
def test_gpu_without_adapter_is_unbound(tmp_path):
    reason = gpu_reason()
    if reason:
        pytest.skip(f"needs an NVIDIA GPU: {reason}")
    shutil.copytree(MODELS / "demo-careful" / "fuse", tmp_path / "a")
    checks = by_name(run_local("fuse", tmp_path / "a", model="nobody-wrote-an-adapter", backend="cuda"))
    assert checks["topk[V=1000,k=1]"]["verdict"] == V.UNBOUND
    assert "adapters/nobody-wrote-an-adapter.cu" in checks["topk[V=1000,k=1]"]["message"]


PUBLISHED_OPUS = ROOT.parent / "shared" / "published-benchmark" / "llm_programming_tests" / "opus47_1m" / "fuse"


@needs_nvcc
@pytest.mark.skipif(not PUBLISHED_OPUS.is_dir(), reason=f"no published benchmark at {PUBLISHED_OPUS}")
def test_opus_adapter_is_keyed_to_its_answer_and_builds(tmp_path):
    from benchtui.challenges.adapters import compare_key, read_key

    adapter = CHALLENGE / "adapters" / "opus47_1m.cu"
    changed, missing = compare_key(read_key(adapter), PUBLISHED_OPUS)
    assert not changed and not missing
    harness = cuda_device.build_harness_object(tmp_path, arch="sm_90")
    assert harness.ok, harness.output
    result = cuda_device.build([adapter], tmp_path / "lib.so", include_dirs=[PUBLISHED_OPUS], timeout_s=300,
                               arch="sm_90", harness_object=tmp_path / cuda_device.HARNESS_OBJECT)
    assert result.ok, result.output
    lib = ctypes.CDLL(str(tmp_path / "lib.so"))  # loads without a driver; never called here
    assert getattr(lib, conformance.SYMBOL) and lib.benchtui_h_timer_stop
