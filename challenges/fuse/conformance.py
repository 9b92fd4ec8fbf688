"""Hidden checks for fuse (fused softmax + top-k in CUDA).

Without a GPU: every .cu file of the answer is compiled on its own with
nvcc (host and device code, ``-std=c++17 -c``); prose or pseudocode saved as
.cu fails here honestly. With a GPU (backend "cuda"): the reviewer's shim
``adapters/<model>.cu`` is built with the answer by nvcc inside the answer's
sandbox and called there (engine/verify/cuda/device.py); host arrays come
back over the wire and are checked here against the float64 reference.
Timing runs at 4,096 x 151,936 on inputs the answer's process makes from
this side's seeds, against the best library baseline present, and is
reported as a fraction of the device's peak bandwidth and of the roofline.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from benchtui.api import (
    CheckFailed,
    CudaFault,
    InputMutated,
    V,
    compile_cuda_answer,
    cuda_sources,
    derive_seed,
    device_info,
    error_text,
    gpu_preamble,
    load_module,
    median_iqr,
    roofline_figures,
    seeded_rows,
    timed_cycles,
    timing_details,
)
from benchtui.api import build_in_answer_process as build_library_in_answer_process

SYMBOL = "benchtui_softmax_topk"
SIGNATURE = (f"extern \"C\" int {SYMBOL}(const float* logits, int rows, int V, int k, "
             "float* top_probs, int* top_idx)")
GUARD = 64  # sentinel slots after each output buffer, to catch writes past the end
# The run's GPU lock is taken after nvcc's compile checks (CPU only), not before them.
GPU_LOCK_LATE = True


def run(suite) -> None:
    compile_answer(suite)
    gpu_checks(suite)


# -- without a GPU: does each file compile? --------------------------------------

# every .cu file compiled on its own, one check each (engine/verify/cuda/suite.py)
answer_sources = cuda_sources


def compile_answer(suite) -> None:
    compile_cuda_answer(suite, requires=("compiles",))


# -- with a GPU: the answer's library, built and run in the answer's process ---------

# the prompt's requirements (challenge.toml) each check tests; no_full_softmax
# is a grader's (no check can watch the kernel's global writes)
REQUIRES = {"build_library": ("compiles",), "ties": ("accuracy", "topk_softmax"),
            "neg_inf": ("numerically_stable",), "magnitude_1e4": ("numerically_stable",),
            "timed_outputs": ("topk_softmax", "large_vocab", "many_rows")}
# The entry point's arguments, as cuda_device.KernelHost passes them.
PARAMS = ["in", "int", "int", "int", "out", "out"]
NAN_BITS = 0x7FC00000  # the sentinel in unwritten probability slots
IDX_FILL = -7  # the sentinel in unwritten index slots
FIGURES = ("speed", "bandwidth", "roofline")
# The answer's events' median below this fraction of the checker's is said beside the figures.
EVENTS_AGREE = 0.8




def requires_of(name: str) -> tuple:
    if name.startswith("nvcc_compile"):
        return ("compiles",)
    if name.startswith("topk["):
        big = int(name.split("V=")[1].split(",")[0]) >= 50_000
        return ("topk_softmax", "many_rows", "accuracy") + (("large_vocab",) if big else ())
    return REQUIRES.get(name, ())


def gpu_check_names(th: dict) -> list[str]:
    cases = [f"topk[V={v},k={k}]" for v in th.get("V", [1000, 50257, 151936]) for k in th.get("k", [1, 5, 32])]
    return ["build_library", *cases, "ties", "neg_inf", "fewer_than_k_finite", "magnitude_1e4", "timed_outputs", *FIGURES]


def skip_gpu(suite, names: list[str], reason: str) -> None:
    for name in names:
        suite.skip(name, reason, requires=requires_of(name))


def gpu_checks(suite) -> None:
    names = gpu_check_names(suite.thresholds)
    device = gpu_preamble(suite, names, SIGNATURE, requires_of)
    if device is None:
        return
    # the library baseline is timed before the answer's library is built or loaded anywhere
    checks = FuseChecks(suite, None, device=device)
    checks.measure_baseline()
    host = build_in_answer_process(suite)
    if host is None:
        skip_gpu(suite, names[1:], "not run: the answer's library did not build")
        return
    checks.host = host
    checks.run_all()




def build_in_answer_process(suite):
    """nvcc builds the adapter and the answer inside the answer's sandbox, which
    loads the library; this process gets a proxy and never loads it."""
    return build_library_in_answer_process(suite, SYMBOL, PARAMS, requires=("compiles",))


class FuseChecks:
    """The GPU checks. ``host`` serves the answer's entry point (a proxy for a
    cuda_device.KernelHost in the answer's process; tests pass a NumPy
    stand-in); every value it returns is verified here. ``device`` is this
    process's own view of the GPU (cuda_device.CheckerDevice: its ``info``
    and its harness); the answer's process is never asked what the device is."""

    def __init__(self, suite, host, baseline=None, device=None):
        self.suite, self.host, self.device = suite, host, device
        self.baseline_run: dict | None = None
        self.ref = suite.reference()
        self.rtol = float(suite.threshold("rtol", 1e-5))
        self.rows = int(suite.threshold("rows", 67))
        # (rows, V, k, seeds) -> (name, [seconds]) for the library baseline; built lazily here
        self.baseline = baseline

    def call(self, logits: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """One call on ``logits``; fail on a mutated input or a write past the
        end of an output buffer; a device fault is an error with its name."""
        rows, vocab = logits.shape
        n = rows * k
        got = self.host.call([logits, rows, vocab, k, ("float32", n + GUARD, NAN_BITS), ("int32", n + GUARD, IDX_FILL)])
        if got.get("error"):
            raise CudaFault(f"the kernel failed on the device: {got['error']}")
        if got.get("rc"):
            raise CudaFault(f"{SYMBOL} returned {got['rc']} ({got.get('rc_name') or 'not a CUDA error code'})")
        probs, idx = (np.asarray(a) for a in got["outputs"])
        after = np.asarray(got["inputs"][0])
        if probs.shape != (n + GUARD,) or idx.shape != (n + GUARD,) or after.size != logits.size:
            raise CheckFailed("the answer's process returned buffers of the wrong size")
        if not np.array_equal(after.reshape(logits.shape), logits, equal_nan=True):
            raise InputMutated("the kernel modified the logits in place")
        if not ((probs[n:].view(np.uint32) == NAN_BITS).all() and (idx[n:] == IDX_FILL).all()):
            raise CheckFailed("wrote past the end of the [rows, k] output buffers")
        return probs[:n].reshape(-1, k), idx[:n].reshape(-1, k)

    def compare(self, c, logits: np.ndarray, k: int, judged: np.ndarray | None = None) -> None:
        """Verdict on the rows in ``judged`` (all by default)."""
        probs, idx = self.call(logits, k)
        if judged is None:
            judged = np.arange(len(logits))
        logits, probs, idx = logits[judged], probs[judged], idx[judged]
        c.value = round(self.ref.max_relative_error(logits, idx, probs), 9)
        wrong, why = self.ref.check_topk(logits, idx, probs, k, self.rtol)
        c.details.update(rows=len(logits), V=logits.shape[1], k=k, wrong_rows=wrong)
        if wrong:
            c.fail(f"{wrong}/{len(logits)} rows wrong; {why}")
        c.message = f"{len(logits)} rows, max relative error {c.value:.2e}"

    # -- the checks ------------------------------------------------------------
    def run_all(self) -> None:
        self.run_correctness()
        self.speed_and_bandwidth()

    def run_correctness(self) -> None:
        s = self.suite
        for vocab in s.threshold("V", [1000, 50257, 151936]):
            for k in s.threshold("k", [1, 5, 32]):
                name = f"topk[V={vocab},k={k}]"
                with s.check(name, threshold=self.rtol, requires=requires_of(name)) as c:
                    rng = s.rng(f"topk-{vocab}-{k}")
                    logits = (rng.standard_normal((self.rows, vocab)) * 2.0).astype(np.float32)
                    self.compare(c, logits, k)
        vocab = int(s.threshold("adversarial_V", 50257))
        with s.check("ties", threshold=self.rtol, requires=requires_of("ties")) as c:
            self.compare(c, tie_logits(s.rng("ties"), self.rows, vocab), 32)
        x = neg_inf_logits(s.rng("neg_inf"), self.rows, vocab, 32)
        enough = np.flatnonzero(np.isfinite(x).sum(axis=1) >= 32)
        with s.check("neg_inf", threshold=self.rtol, requires=requires_of("neg_inf")) as c:
            self.compare(c, x, 32, judged=enough)
        self.fewer_than_k_finite(x, 32)
        with s.check("magnitude_1e4", threshold=self.rtol, requires=requires_of("magnitude_1e4")) as c:
            self.compare(c, huge_logits(s.rng("huge"), self.rows, vocab), 5)

    def fewer_than_k_finite(self, x: np.ndarray, k: int) -> None:
        """Neither prompt says what fills a row with fewer than k finite logits:
        what the answer does there is a figure, never a verdict."""
        rows = np.flatnonzero(np.isfinite(x).sum(axis=1) < k)
        try:
            probs, idx = self.call(x, k)
        except Exception as exc:  # a fault here was already judged by the neg_inf check on the same call
            self.suite.info("fewer_than_k_finite", message=f"not described: {exc}")
            return
        r = int(rows[0])
        finite = int(np.isfinite(x[r]).sum())
        tail = idx[r, finite:]
        if (tail < 0).any() or (tail >= x.shape[1]).any():
            how = f"pads with out-of-range indices {sorted(set(tail.tolist()))[:3]}"
        elif np.isneginf(x[r, tail]).all():
            how = "fills with -inf entries"
        else:
            how = "repeats or reorders finite entries"
        self.suite.info("fewer_than_k_finite", value=finite,
                        message=f"row {r} has {finite} finite logits for k={k}: the answer {how} "
                                f"(probabilities {np.round(probs[r, finite:finite + 3], 6).tolist()}); "
                                "the prompt leaves this open",
                        details={"row": r, "finite": finite, "indices": idx[r].tolist()})

    # -- timing at a size that means something ------------------------------------
    def timing_plan(self) -> tuple[int, int, int, int, list[int]]:
        """(rows, V, k, warm-up calls, the seed of every call)."""
        s = self.suite
        rows, vocab, k = (int(s.threshold(n, d)) for n, d in (("timing_rows", 4096), ("timing_V", 151936), ("timing_k", 32)))
        warmup, trials = int(s.threshold("timing_warmup", 3)), int(s.threshold("timing_trials", 30))
        # 128-bit seeds, one per call, derived one-way from the run's secret seed
        return rows, vocab, k, warmup, [derive_seed(s.seed, f"fuse-timing-{t}") for t in range(warmup + trials)]

    def measure_baseline(self) -> None:
        """Time the library baseline now (gpu_checks: before the answer's library exists)."""
        rows, vocab, k, warmup, seeds = self.timing_plan()
        self.baseline_run = self.time_baseline(rows, vocab, k, seeds[warmup:])

    def speed_and_bandwidth(self) -> None:
        s = self.suite
        rows, vocab, k, warmup, seeds = self.timing_plan()
        try:
            info = self.device_info()
            run = self.time_answer(rows, vocab, k, seeds, warmup, info)
        except Exception as exc:
            for name in ("timed_outputs", *FIGURES):
                s.record(name, V.ERROR if name == "timed_outputs" else V.INFO,
                         message=f"timing at {rows} x {vocab}, k={k} failed: {error_text(exc)}", requires=requires_of(name))
            return
        with s.check("timed_outputs", requires=requires_of("timed_outputs")) as c:
            c.value, c.threshold = run["rows_wrong"], 0
            c.details.update(trials=len(seeds), rows_checked=run["rows_checked"], rows=rows, V=vocab, k=k)
            if run["rows_wrong"]:
                c.fail(f"{run['rows_wrong']}/{run['rows_checked']} sampled rows of the timed calls wrong; {run['why']}")
            c.message = f"{run['rows_checked']} sampled rows of {len(seeds)} timed calls ({rows} x {vocab}, k={k}) verified"
        if self.baseline_run is None:
            self.measure_baseline()
        self.record_figures(rows, vocab, k, run, self.baseline_run, info)

    def time_answer(self, rows: int, vocab: int, k: int, seeds: list[int], warmup: int, info: dict) -> dict:
        """Timed cycles on fresh inputs made in the answer's process from this
        side's seeds, timed by this side's clock around each whole cycle
        (engine/verify/cuda/suite.py's ``timed_cycles``). Every call's
        outputs are checked on rows drawn here afterwards."""
        n = rows * k
        scratch = max(4 * int(info.get("l2_bytes") or 0), 256 * 2**20)
        inputs, outputs = [("float32", rows * vocab, 0, 0)], [("float32", n, NAN_BITS), ("int32", n, IDX_FILL)]
        pick = self.suite.rng("timing-rows")

        def verify(trial, cycle_seeds, got):
            (seed,), = cycle_seeds
            probs, idx = (np.asarray(a).reshape(rows, k) for a in got[0])
            sample = np.sort(pick.choice(rows, size=min(2, rows), replace=False))
            x = seeded_rows(seed, sample.tolist(), vocab)
            bad, first = self.ref.check_topk(x, idx[sample], probs[sample], k, self.rtol)
            return len(sample), bad, first

        return timed_cycles(self.suite, self.host, self.device, inputs, outputs, scratch,
                                       [[[seed]] for seed in seeds], warmup, [rows, vocab, k], verify)

    def device_info(self) -> dict:
        """The device's facts as this process read them (never the answer's process)."""
        return device_info(self.device)

    def time_baseline(self, rows: int, vocab: int, k: int, seeds: list[int]) -> dict | None:
        """The best library baseline present, timed here the same way."""
        try:
            if self.baseline is not None:
                name, times = self.baseline(rows, vocab, k, seeds)
            else:
                self.device_info()
                name, times = library_baseline(rows, vocab, k, seeds, self.device.harness)
            return {"name": name, "times": times}
        except Exception as exc:
            return {"name": None, "error": error_text(exc)}

    def record_figures(self, rows: int, vocab: int, k: int, run: dict, baseline: dict | None, info: dict) -> None:
        s = self.suite
        moved = rows * vocab * 4 + rows * k * 8  # logits read once, k (probability, index) pairs written
        common, flags, said = timing_details(run, info, moved, EVENTS_AGREE)
        common.update(rows=rows, V=vocab, k=k)
        med = common["answer_median_s"]
        base = baseline or {}
        base_med = median_iqr(base["times"])[0] if base.get("times") else None
        where = f"{rows} x {vocab}, k={k} on {info.get('name', 'the GPU')}"
        figures = {
            "speed": (base_med / med if base_med and med > 0 else None,
                      f"{base_med / med:.2f}x {base['name']} ({med * 1e3:.3f} ms against {base_med * 1e3:.3f} ms), {where}"
                      if base_med and med > 0 else f"no library baseline: {base.get('error', 'none present')}"),
            **roofline_figures(common, where),
        }
        figures = {name: (value, message + said) for name, (value, message) in figures.items()}
        for name, (value, message) in figures.items():
            details = {**common, "baseline": {"name": base.get("name"), "median_s": base_med,
                                              "iqr_s": median_iqr(base["times"])[1] if base.get("times") else None,
                                              "error": base.get("error")}}
            if flags:  # shown, never ranked
                details["would_be"] = value
                value, message = None, "flagged, not ranked: " + "; ".join(flags) + f" ({message})"
            s.info(name, value=None if value is None else float(f"{value:.5g}"), message=message, details=details)




def library_baseline(rows: int, vocab: int, k: int, seeds: list[int], harness) -> tuple[str, list[float]]:
    """PyTorch's softmax + topk where torch is installed, else CuPy's softmax +
    argpartition, on the same generated inputs, L2 flushed, timed between the
    device-wide syncs of ``harness`` (this process's own, never the answer's)."""
    info = harness.device_info()
    scratch_bytes = max(4 * info["l2_bytes"], 256 * 2**20)
    scratch = harness.malloc(scratch_bytes)
    try:
        try:
            import torch

            x = torch.empty((rows, vocab), dtype=torch.float32, device="cuda")
            ptr, name = x.data_ptr(), "torch softmax + topk"

            def run():
                return torch.topk(torch.softmax(x, dim=-1), k, dim=-1)
        except ImportError:
            import cupy

            x = cupy.empty((rows, vocab), dtype=cupy.float32)
            ptr, name = x.data.ptr, "CuPy softmax + argpartition"
            ref = load_reference()

            def run():
                return ref.cupy_softmax_topk(x, k)
        times = []
        for trial, seed in enumerate([seeds[0], seeds[0], *seeds]):
            harness.generate(ptr, rows * vocab, seed)
            harness.flush_l2(scratch, scratch_bytes, trial)
            harness.timer_start()
            out = run()
            seconds = harness.timer_stop()
            del out
            if trial >= 2:  # two warm-ups
                times.append(seconds)
        return name, times
    finally:
        harness.free(scratch)


def load_reference():
    return load_module(Path(__file__).with_name("reference.py"), "benchtui_reference_fuse_baseline")


# -- adversarial inputs ----------------------------------------------------------------

def tie_logits(rng: np.random.Generator, rows: int, vocab: int) -> np.ndarray:
    """Few distinct values (huge tie groups); row 0 constant (every index tied)."""
    x = rng.integers(0, 6, size=(rows, vocab)).astype(np.float32)
    x[0] = 1.5
    return x


def neg_inf_logits(rng: np.random.Generator, rows: int, vocab: int, k: int) -> np.ndarray:
    """About half the entries -inf, always index 0; row 1 has fewer than k finite."""
    x = rng.standard_normal((rows, vocab)).astype(np.float32)
    x[rng.random((rows, vocab)) < 0.5] = -np.inf
    x[:, 0] = -np.inf
    x[1] = -np.inf
    x[1, rng.choice(np.arange(1, vocab), size=max(1, k // 4), replace=False)] = 1.0
    x[2, -1] = 50.0  # the winner is the very last entry
    return x


def huge_logits(rng: np.random.Generator, rows: int, vocab: int) -> np.ndarray:
    """Magnitudes of 1e4: naive exp overflows; even rows sit near +1e4."""
    x = rng.uniform(-1e4, 1e4, size=(rows, vocab)).astype(np.float32)
    x[::2] = (1e4 + rng.standard_normal((len(x[::2]), vocab)) * 4.0).astype(np.float32)
    return x
