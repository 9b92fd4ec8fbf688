"""paged_attention: the float64 reference against a naive formula, the nvcc
compile checks on the demo answers, the GPU-side check logic on a NumPy
stand-in for the answer's process (right and wrong kernels, the timing loop),
and, on a GPU (``-m gpu``), the demo answers themselves.

nvcc costs seconds per file, so compile results are cached by content hash
in a per-module temp dir ($BENCHTUI_NVCC_CACHE)."""
from __future__ import annotations

import math
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from benchtui.challenges.definition import BUNDLED_CHALLENGES, load_challenge
from benchtui.records import verdicts as V
from benchtui.runner.local import run_local
from benchtui.verify.binding import load_module
from benchtui.verify.cuda import build as cuda_build
from benchtui.verify.cuda import device as cuda_device
from benchtui.verify.suite import Suite

ROOT = BUNDLED_CHALLENGES.parent
CHALLENGE = BUNDLED_CHALLENGES / "paged_attention"
MODELS = ROOT / "models"
ANSWERS = {"demo-careful": "paged_attention.cu", "demo-hasty": "paged_attn.cu"}
ref = load_module(CHALLENGE / "reference.py", "benchtui_test_paged_reference")
conformance = load_module(CHALLENGE / "conformance.py", "benchtui_test_paged_conformance")

needs_nvcc = pytest.mark.skipif(cuda_build.find_nvcc() is None, reason="nvcc not installed")


@pytest.fixture(scope="module", autouse=True)
def nvcc_cache(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("BENCHTUI_NVCC_CACHE", str(tmp_path_factory.mktemp("nvcc-cache")))
        yield


def by_name(checks) -> dict:
    return {c["name"] if isinstance(c, dict) else c.name: c for c in checks}


# -- challenge files ---------------------------------------------------------------

def test_challenge_definition_prompt_copies_and_adapters():
    ch = load_challenge(CHALLENGE)
    assert (ch.id, ch.difficulty, ch.language, ch.backends) == ("paged_attention", "HARD", "cuda", ("cuda",))
    assert ch.thresholds["atol"] == 2e-3 and "Paged Attention" in ch.display_names
    prompt = ch.prompt_path.read_bytes()
    for model in ANSWERS:
        assert (MODELS / model / "paged_attention" / "PROMPT.md").read_bytes() == prompt
        assert ch.adapter_path(model).suffix == ".cu"
        assert f'#include "{ANSWERS[model]}"' in ch.adapter_path(model).read_text()
    assert not (MODELS / "demo-quitter" / "paged_attention").exists()


# -- the reference ---------------------------------------------------------------------

def naive(q, k_cache, v_cache, tables, lens, scale):
    """The prompt's formula, one scalar at a time: token t of sequence s is slot
    t % block_size of block tables[s][t // block_size]; head h reads KV head h // g."""
    num_seqs, num_heads, head_dim = q.shape
    block_size, num_kv_heads = k_cache.shape[1], k_cache.shape[2]
    g = num_heads // num_kv_heads
    out = np.zeros((num_seqs, num_heads, head_dim))
    for s in range(num_seqs):
        for h in range(num_heads):
            rows = [(int(tables[s][t // block_size]), t % block_size) for t in range(int(lens[s]))]
            scores = [scale * sum(float(q[s, h, d]) * float(k_cache[b, j, h // g, d]) for d in range(head_dim))
                      for b, j in rows]
            top = max(scores)
            w = [math.exp(x - top) for x in scores]
            for (b, j), wt in zip(rows, w):
                out[s, h] += wt / sum(w) * v_cache[b, j, h // g].astype(np.float64)
    return out


@pytest.mark.parametrize("name", ["shuffled", "reversed", "shared"])
def test_reference_matches_the_naive_formula(name):
    rng = np.random.default_rng(5)
    case = conformance.make_case(rng, [1, 16, 23, 9], (4, 2, 64, 8), order="reversed" if name == "reversed" else "shuffled",
                                 share=2 if name == "shared" else 0)
    q, k, v = case.floats()
    got = ref.paged_attention(q, k, v, case.tables, case.lens, case.scale)
    assert np.allclose(got, naive(q, k, v, case.tables, case.lens, case.scale), rtol=1e-12, atol=1e-12)
    assert np.isfinite(got).all(), "the reference never reads a NaN slot"
    # a context of one token: its output is that token's value row, exactly
    assert np.array_equal(got[0], np.repeat(v[case.tables[0][0], 0], 2, axis=0))


def test_reference_is_stable_and_the_error_measure_is_relative_to_v():
    rng = np.random.default_rng(1)
    case = conformance.fixed_case("large_scores", rng)
    q, k, v = case.floats()
    scores = np.einsum("hd,thd->ht", q[1], np.repeat(ref.gather(k, case.tables[1], case.lens[1]), 4, axis=1)) * case.scale
    assert np.abs(scores).max() > 300  # exp of these overflows float32 without the maximum
    want = ref.paged_attention(q, k, v, case.tables, case.lens, case.scale)
    assert np.isfinite(want).all()
    scale = ref.value_scale(v, case.tables, case.lens)
    assert ref.relative_error(want + 1e-3 * scale[:, None, None], want, scale).max() == pytest.approx(1e-3)
    nan = want.copy()
    nan[0, 0, 0] = np.nan
    assert ref.relative_error(nan, want, scale)[0, 0] == np.inf


def test_bytes_read_counts_each_shared_slot_once():
    tables = np.array([[3, 1, 0], [3, 1, 2]])
    # 20 and 18 tokens in blocks of 8: 16 slots shared (blocks 3 and 1), 4 + 2 slots of their own
    got = ref.bytes_read(tables, np.array([20, 18]), 8, num_heads=4, num_kv_heads=2, head_dim=64)
    assert got == 2 * (16 + 4 + 2) * 2 * 64 * 2 + 2 * 4 * 64 * 6 + 4 * (3 + 3 + 2)


def test_cases_hold_nan_wherever_no_sequence_attends():
    case = conformance.fixed_case("block_boundary", np.random.default_rng(2))
    _, k, v = case.floats()
    live = np.zeros(k.shape[:2], dtype=bool)
    for s, n in enumerate(case.lens):
        t = np.arange(n)
        live[case.tables[s][t // 16], t % 16] = True
    assert np.isnan(k[~live]).all() and np.isnan(v[~live]).all() and np.isfinite(k[live]).all()
    assert all(n % 16 == 0 for n in case.lens)
    assert np.isnan(k[case.tables[:, -1]]).all(), "table entries past the last block name an all-NaN block"


# -- compile checks on the demo answers (no GPU needed) ------------------------------------

@needs_nvcc
@pytest.mark.parametrize("model", list(ANSWERS))
def test_demo_answers_and_their_adapters_compile_and_gpu_checks_skip_with_reason(model):
    folder = MODELS / model / "paged_attention"
    out = run_local("paged_attention", folder, model=model, backend="cpu")
    checks = by_name(out["checks"])
    compiled = checks[f"nvcc_compile:{ANSWERS[model]}"]
    assert compiled["verdict"] == V.PASS, compiled["message"]
    assert checks["block_boundary"]["verdict"] == V.SKIPPED and "needs an NVIDIA GPU" in checks["block_boundary"]["message"]
    assert set(checks) >= set(conformance.gpu_check_names())
    adapter = load_challenge(CHALLENGE).adapter_path(model)
    result = cuda_build.compile_check(adapter, include_dirs=[folder], arch="sm_90")
    assert result.ok, result.output


@needs_nvcc
def test_a_kernel_that_does_not_compile_is_a_compile_error(tmp_path):
    text = (MODELS / "demo-careful" / "paged_attention" / "paged_attention.cu").read_text()
    (tmp_path / "paged_attention.cu").write_text(text.replace("#include <cuda_bf16.h>\n", ""))
    check = by_name(run_local("paged_attention", tmp_path, model="x", backend="cpu")["checks"])["nvcc_compile:paged_attention.cu"]
    assert check["verdict"] == V.COMPILE_ERROR and check["value"] >= 1


# -- the GPU-side checks on a NumPy stand-in for the answer's process ---------------------

def numpy_kernel(q, k_cache, v_cache, tables, lens, scale, *, mutate=None):
    """A float32 decode kernel over host arrays (bfloat16 as floats), with the
    defects the checks are meant for."""
    num_seqs, num_heads, head_dim = q.shape
    bs, kvh = k_cache.shape[1], k_cache.shape[2]
    g = num_heads // kvh
    out = np.zeros((num_seqs, num_heads, head_dim), dtype=np.float32)
    for s in range(num_seqs):
        n = int(lens[s])
        blocks = -(-n // bs)
        t = np.arange(n)
        table = np.asarray(tables[s])
        if mutate == "ignore_table":  # blocks assumed contiguous from the first
            table = table[0] + np.arange(len(table))
            table = np.where(table < len(k_cache), table, 0)
        if mutate == "boundary":  # the last block's length as n % bs: 0 on a block boundary
            t = t[: (blocks - 1) * bs + n % bs]
        if mutate == "whole_blocks":  # reads every slot of the last block
            t = np.arange(blocks * bs)
        k = k_cache[table[t // bs], t % bs].astype(np.float32)
        v = v_cache[table[t // bs], t % bs].astype(np.float32)
        for h in range(num_heads):
            scores = (k[:, h // g] @ q[s, h].astype(np.float32)) * np.float32(scale)
            with np.errstate(all="ignore"):
                e = np.exp(scores) if mutate == "no_max" else np.exp(scores - scores.max(initial=-np.inf))
                out[s, h] = (e @ v[:, h // g]) / e.sum()
    return out


class NumpyPagedHost:
    """cuda_device.KernelHost's interface over a NumPy kernel, so the checker's
    logic runs without a GPU; timed cycles make their inputs from the seeds
    with ``seeded_values``, as the device does."""

    def __init__(self, mutate=None, *, overrun=False, in_place=False):
        self.mutate, self.overrun, self.in_place = mutate, overrun, in_place
        self.timing, self.cycles = None, 0

    def run(self, arrays, scalars):
        q, k, v, tables, lens = arrays
        s, h, kvh, d, bs, mb, nb, scale = scalars
        f = [cuda_device.bf16_to_float32(a) for a in (q, k, v)]
        return numpy_kernel(f[0].reshape(s, h, d), f[1].reshape(nb, bs, kvh, d), f[2].reshape(nb, bs, kvh, d),
                            np.asarray(tables).reshape(s, mb), lens, scale, mutate=self.mutate)

    def call(self, args):
        arrays = [np.array(a, copy=True) for a in args[:5]]
        _, n, fill = args[5]
        out = np.full(n, fill, dtype=np.uint32).view(np.float32)
        result = self.run(arrays, args[6:]).ravel()
        out[: result.size] = result
        if self.overrun:
            out[result.size] = 0.0
        if self.in_place:
            arrays[4][0] += 1
        return {"rc": 0, "error": "", "rc_name": "", "outputs": [out], "inputs": [a.ravel() for a in arrays]}

    def timing_setup(self, inputs, outputs, scratch_bytes, launches=1):
        self.timing = (inputs, outputs, launches)

    def timing_cycle(self, seeds, trial, scalars):
        inputs, outputs, launches = self.timing
        assert len(seeds) == launches
        start, outs = time.perf_counter(), []
        for launch_seeds in seeds:
            arrays = [cuda_device.seeded_values(seed, np.arange(n), d, a, b) for (d, n, a, b), seed in zip(inputs, launch_seeds)]
            outs.append([self.run(arrays, scalars).ravel()])
        self.cycles += 1
        return {"rc": 0, "error": "", "seconds": time.perf_counter() - start, "outputs": outs}

    def timing_release(self):
        self.timing = None


class StandInDevice:
    """The checker's own view of the device (cuda_device.CheckerDevice's interface)."""

    harness = None

    def __init__(self, peak=1e12):
        self.info = {"name": "NumPy stand-in", "peak_bytes_per_s": peak, "l2_bytes": 1 << 20}
        self.launches = None

    def empty_cycles(self, inputs, outputs, scratch_bytes, seeds, launches=1):
        self.launches = launches
        return [0.0 for _ in seeds]


SMALL = {"timing_seqs": 3, "timing_heads": 4, "timing_kv_heads": 2, "timing_head_dim": 64, "timing_block_size": 8,
         "timing_max_context": 40, "timing_launches": 2, "timing_warmup": 1, "timing_trials": 3}


def fake_suite(tmp_path, **thresholds):
    return Suite(challenge_id="paged_attention", answer_dir=tmp_path, challenge_dir=CHALLENGE, model="fake", seed=11,
                 backend="cuda", thresholds={**load_challenge(CHALLENGE).thresholds, **SMALL, **thresholds})


def correctness(tmp_path, host) -> dict:
    suite = fake_suite(tmp_path)
    conformance.PagedChecks(suite, host).run_correctness()
    return by_name(suite.checks)


def test_a_correct_kernel_passes_every_check(tmp_path):
    checks = correctness(tmp_path, NumpyPagedHost())
    assert set(checks) == {conformance.shape_name(s) for s in conformance.SHAPES} | set(conformance.FIXED)
    assert {c.verdict for c in checks.values()} == {V.PASS}, {n: c.message for n, c in checks.items()}
    assert max(c.value for c in checks.values()) < 1e-5  # float32 sits far inside 2e-3
    assert checks["context_len_1"].requires == ("context_lengths", "accuracy")


@pytest.mark.parametrize("mutate, failing, passing, text", [
    # demo-hasty's defect: only contexts ending on a block boundary show it
    ("boundary", ["block_boundary"], ["context_len_1", "one_sequence", "large_scores", "attention[H=32,KVH=8,D=128,bs=16]"],
     "(context 16, block size 16)"),
    ("ignore_table", ["blocks_out_of_order", "attention[H=8,KVH=8,D=64,bs=16]"], ["context_len_1"], "outputs wrong"),
    ("no_max", ["large_scores"], ["block_boundary", "attention[H=16,KVH=1,D=128,bs=32]"], "got [nan"),
    ("whole_blocks", ["attention[H=8,KVH=2,D=256,bs=8]", "context_len_1"], ["block_boundary"], "error inf"),
])
def test_kernels_with_one_defect_fail_the_check_meant_for_it(tmp_path, mutate, failing, passing, text):
    checks = correctness(tmp_path, NumpyPagedHost(mutate))
    for name in failing:
        assert checks[name].verdict == V.FAIL, (name, checks[name].message)
    assert text in checks[failing[0]].message, checks[failing[0]].message
    for name in passing:
        assert checks[name].verdict == V.PASS, (name, checks[name].message)


def test_writes_past_the_output_and_into_an_input_fail(tmp_path):
    checks = correctness(tmp_path, NumpyPagedHost(overrun=True))
    assert checks["context_len_1"].verdict == V.FAIL and "wrote past the end" in checks["context_len_1"].message
    checks = correctness(tmp_path, NumpyPagedHost(in_place=True))
    assert checks["one_sequence"].verdict == V.FAIL and "modified an input" in checks["one_sequence"].message


def timed(tmp_path, host, peak=1e12) -> tuple[dict, StandInDevice]:
    suite = fake_suite(tmp_path)
    device = StandInDevice(peak)
    conformance.PagedChecks(suite, host, device).timing()
    return by_name(suite.checks), device


def test_timing_verifies_every_launch_and_reports_roofline_figures(tmp_path):
    host = NumpyPagedHost()
    checks, device = timed(tmp_path, host)
    assert host.cycles == 4 and device.launches == 2  # one warm-up and three timed windows of two launches
    timed_outputs = checks["timed_outputs"]
    assert timed_outputs.verdict == V.PASS and timed_outputs.details["outputs_checked"] == 8, timed_outputs.message
    bandwidth, roofline = checks["bandwidth"], checks["roofline"]
    assert {bandwidth.verdict, roofline.verdict} == {V.INFO}
    d = roofline.details
    assert d["launches_per_window"] == 2 and "checker's clock" in d["timed_by"]
    assert roofline.value == pytest.approx(d["answer_median_s"] / (d["bytes"] / 1e12), rel=1e-3)
    assert bandwidth.value == pytest.approx(d["bytes"] / d["answer_median_s"] / 1e12, rel=1e-3)
    # the bytes are one window's own least traffic: recomputed here slot by slot for one seeded launch
    p = conformance.PagedChecks(fake_suite(tmp_path), host).timing_plan()
    seeds = [1, 2, 3, 4, 5]
    tables = cuda_device.seeded_values(4, np.arange(p["seqs"] * p["max_blocks"]), "int32", 0, p["num_blocks"])
    lens = cuda_device.seeded_values(5, np.arange(p["seqs"]), "int32", 1, p["max_context"] + 1)
    slots = {(int(tables[s * p["max_blocks"] + t // 8]), t % 8) for s in range(p["seqs"]) for t in range(int(lens[s]))}
    want = (2 * len(slots) * 2 * 64 * 2 + p["seqs"] * 4 * 64 * 6
            + 4 * (sum(-(-int(n) // 8) for n in lens) + p["seqs"]))
    assert conformance.PagedChecks(fake_suite(tmp_path), host).window_bytes(p, seeds) == want


def test_timed_outputs_of_a_kernel_that_ignores_the_table_fail_and_are_not_ranked(tmp_path):
    checks, _ = timed(tmp_path, NumpyPagedHost("ignore_table"))
    assert checks["timed_outputs"].verdict == V.FAIL and "sampled (sequence, head) outputs" in checks["timed_outputs"].message
    assert checks["roofline"].value is None and "flagged, not ranked" in checks["roofline"].message


def test_a_timing_failure_is_recorded_not_raised(tmp_path):
    class Faulting(NumpyPagedHost):
        def timing_cycle(self, seeds, trial, scalars):
            return {"rc": 0, "error": "cudaErrorIllegalAddress: an illegal memory access was encountered"}

    checks, _ = timed(tmp_path, Faulting())
    assert checks["timed_outputs"].verdict == V.ERROR and "cudaErrorIllegalAddress" in checks["timed_outputs"].message
    assert checks["bandwidth"].verdict == V.INFO and checks["bandwidth"].value is None


def test_seeded_case_is_the_timed_inputs_slice(tmp_path):
    """The (sequence, head) the checker regenerates from the seeds is the one the
    answer's process computed on: the same output from the whole seeded launch."""
    checks = conformance.PagedChecks(fake_suite(tmp_path), NumpyPagedHost())
    p = checks.timing_plan()
    seeds = [101, 202, 303, 404, 505]
    arrays = [cuda_device.seeded_values(seed, np.arange(n), d, a, b)
              for (d, n, a, b), seed in zip(checks.timed_inputs(p), seeds)]
    whole = NumpyPagedHost().run(arrays, [p["seqs"], p["heads"], p["kv_heads"], p["head_dim"], p["block_size"],
                                          p["max_blocks"], p["num_blocks"], p["scale"]])
    for seq, head in [(0, 0), (2, 3)]:
        one, table = checks.seeded_case(p, seeds, seq, head)
        q, k, v = one.floats()
        want = ref.paged_attention(q, k, v, one.tables, one.lens, one.scale)[0, 0]
        assert np.allclose(whole[seq, head], want, rtol=1e-5, atol=1e-5)
        assert int(one.lens[0]) == arrays[4][seq] and np.array_equal(table, arrays[3][seq * p["max_blocks"]:][:len(table)])


# -- on a real GPU -------------------------------------------------------------------

def gpu_reason() -> str:
    usable, reason = cuda_build.gpu_status()
    return "" if usable else reason


def build_demo_hosts(tmp_path) -> tuple[object, dict]:
    """The checker's own device and each demo answer's library (adapter + answer +
    the harness object), built side by side and loaded in this test's process."""
    (tmp_path / "harness").mkdir()
    with ThreadPoolExecutor(3) as pool:
        device = pool.submit(cuda_device.CheckerDevice, tmp_path / "checker")
        harness = pool.submit(cuda_device.build_harness_object, tmp_path / "harness")
        assert harness.result().ok, harness.result().output
        libs = {m: pool.submit(cuda_device.build, [load_challenge(CHALLENGE).adapter_path(m)], tmp_path / f"{m}.so",
                               include_dirs=[MODELS / m / "paged_attention"],
                               harness_object=tmp_path / "harness" / cuda_device.HARNESS_OBJECT) for m in ANSWERS}
        for m, lib in libs.items():
            assert lib.result().ok, (m, lib.result().output)
        return device.result(), {m: cuda_device.KernelHost(tmp_path / f"{m}.so", conformance.SYMBOL, conformance.PARAMS)
                                 for m in ANSWERS}


@pytest.mark.gpu
@needs_nvcc
def test_demo_answers_on_the_gpu(tmp_path):
    """demo-careful passes every check and is timed with roofline figures;
    demo-hasty drops the last block of a context ending on a block boundary."""
    reason = gpu_reason()
    if reason:
        pytest.skip(f"needs an NVIDIA GPU: {reason}")
    (tmp_path / "checker").mkdir()
    device, hosts = build_demo_hosts(tmp_path)
    # the challenge's own timing sizes (1 GB per launch, past L2), fewer windows
    small = {**{k: v for k, v in load_challenge(CHALLENGE).thresholds.items() if k.startswith("timing_")},
             "timing_trials": 5, "timing_warmup": 1}
    results = {}
    for model, host in hosts.items():
        suite = fake_suite(tmp_path, **small)
        checks = conformance.PagedChecks(suite, host, device)
        checks.run_correctness()
        checks.timing()
        results[model] = by_name(suite.checks)
    careful = results["demo-careful"]
    assert {c.verdict for n, c in careful.items() if n not in conformance.FIGURES} == {V.PASS}, \
        {n: c.message for n, c in careful.items()}
    assert careful["roofline"].value and careful["roofline"].value >= 1.0, careful["roofline"].message
    assert 0 < careful["bandwidth"].value <= 1.0
    hasty = results["demo-hasty"]
    assert hasty["block_boundary"].verdict == V.FAIL, hasty["block_boundary"].message
    for name in ("context_len_1", "one_sequence", "large_scores", "blocks_out_of_order"):
        assert hasty[name].verdict == V.PASS, (name, hasty[name].message)


@pytest.mark.gpu
@needs_nvcc
def test_full_conformance_on_gpu_for_demo_careful():
    """The whole suite at its own sizes, the answer in its own process."""
    reason = gpu_reason()
    if reason:
        pytest.skip(f"needs an NVIDIA GPU: {reason}")
    out = run_local("paged_attention", MODELS / "demo-careful" / "paged_attention", model="demo-careful", backend="cuda")
    checks = by_name(out["checks"])
    assert out["verdict"] == V.PASS, {n: (c["verdict"], c["message"]) for n, c in checks.items()}
    assert checks["roofline"]["verdict"] == V.INFO and checks["roofline"]["value"] >= 1.0


def test_the_gpu_lock_is_taken_before_the_device_is_read(tmp_path, monkeypatch):
    """Both CUDA challenges open their GPU checks the same way
    (gpu_preamble): the run's GPU lock first, then the checker's
    own view of the device, then the answer's library."""
    from benchtui.verify.cuda import build as cuda_build
    from benchtui.verify.cuda import suite as cuda_suite

    order = []
    monkeypatch.setattr(cuda_build, "gpu_status", lambda: (True, "a stand-in"))
    monkeypatch.setattr(cuda_build, "find_nvcc", lambda: "nvcc")
    monkeypatch.setattr(cuda_suite, "checker_device", lambda: order.append("device") or "device")

    def build(*args, **kwargs):
        order.append("build")

    monkeypatch.setattr(conformance, "build_in_answer_process", build)
    suite = fake_suite(tmp_path)
    suite.adapter_path = tmp_path / "adapter.cu"
    monkeypatch.setattr(suite, "hold_gpu", lambda: order.append("lock"))
    conformance.gpu_checks(suite)
    assert order == ["lock", "device", "build"]
    # without an adapter: every GPU check unbound, naming where it looked; no lock taken
    order.clear()
    suite = fake_suite(tmp_path)
    monkeypatch.setattr(suite, "hold_gpu", lambda: order.append("lock"))
    conformance.gpu_checks(suite)
    assert order == [] and {c.verdict for c in suite.checks} == {V.UNBOUND}
    assert ".benchtui/adapters/paged_attention/fake.cu" in suite.checks[0].message
