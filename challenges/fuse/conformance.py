"""Hidden checks for fuse (fused softmax + top-k in CUDA).

Without a GPU: every .cu file of the answer is compiled on its own with
nvcc (host and device code, ``-std=c++17 -c``); prose or pseudocode saved as
.cu fails here honestly. With a GPU (backend "cuda"): the reviewer's shim
``adapters/<model>.cu`` is built with the answer into a shared library,
loaded with ctypes and called on CuPy arrays, then checked against the
float64 reference, timed against a CuPy baseline and its bandwidth reported.
"""
from __future__ import annotations

import ctypes
import tempfile
from pathlib import Path

import numpy as np

from engine.verify import cuda_build
from engine.verify import verdicts as V
from engine.verify.suite import CheckFailed, InputMutated

SYMBOL = "benchtui_softmax_topk"
SIGNATURE = (f"extern \"C\" int {SYMBOL}(const float* logits, int rows, int V, int k, "
             "float* top_probs, int* top_idx)")
GUARD = 64  # sentinel slots after each output buffer, to catch writes past the end


def run(suite) -> None:
    compile_answer(suite)
    gpu_checks(suite)


# -- without a GPU: does each file compile? --------------------------------------

def answer_sources(folder: Path) -> list[Path]:
    """Every .cu file (or, when there is none, every .cuh) outside hidden folders."""
    def visible(p: Path) -> bool:
        return not any(part.startswith(".") for part in p.relative_to(folder).parts)

    for pattern in ("*.cu", "*.cuh"):
        found = sorted(p for p in folder.rglob(pattern) if p.is_file() and visible(p))
        if found:
            return found
    return []


def compile_answer(suite) -> None:
    folder = suite.answer_dir
    sources = answer_sources(folder)
    if not sources:
        suite.record("nvcc_compile", V.UNBOUND, message="no .cu or .cuh file in the answer (looked for *.cu, *.cuh)",
                     requires=("compiles",))
        return
    nvcc = cuda_build.find_nvcc()
    if nvcc is None:
        suite.skip("nvcc_compile", "nvcc not found (PATH, $CUDA_HOME, /usr/local/cuda/bin): cannot compile",
                   requires=("compiles",))
        return
    arch = suite.threshold("nvcc_arch", "sm_90")
    limit = float(suite.threshold("compile_timeout_s", 120.0))
    for source in sources:
        rel = source.relative_to(folder).as_posix()
        name = f"nvcc_compile:{rel}"
        result = cuda_build.compile_check(source, include_dirs=[folder], arch=arch, timeout_s=limit, nvcc=nvcc)
        details = {"command": " ".join(result.command[1:]), "output": result.output, "cached": result.cached}
        if result.timed_out:
            suite.record(name, V.TIMEOUT, value=round(result.seconds, 3), threshold=limit,
                         message=result.summary(), details=details, requires=("compiles",))
        elif result.ok:
            suite.record(name, V.PASS, value=round(result.seconds, 3), threshold="0 errors",
                         message=f"nvcc -std=c++17 -c: {result.summary()}", details=details, requires=("compiles",))
        else:
            suite.record(name, V.COMPILE_ERROR, value=result.error_count, threshold="0 errors", requires=("compiles",),
                         message=result.summary(), details={**details, "errors": result.errors[:20]})


# -- with a GPU: bind through the shim, then check ---------------------------------

# the prompt's requirements (challenge.toml) each check tests; no check yet
# watches the kernel's global writes, so no_full_softmax is never exercised
REQUIRES = {"build_library": ("compiles",), "ties": ("accuracy", "topk_softmax"),
            "neg_inf": ("numerically_stable",), "magnitude_1e4": ("numerically_stable",)}


def requires_of(name: str) -> tuple:
    if name.startswith("nvcc_compile"):
        return ("compiles",)
    if name.startswith("topk["):
        big = int(name.split("V=")[1].split(",")[0]) >= 50_000
        return ("topk_softmax", "many_rows", "accuracy") + (("large_vocab",) if big else ())
    return REQUIRES.get(name, ())


def gpu_check_names(th: dict) -> list[str]:
    cases = [f"topk[V={v},k={k}]" for v in th.get("V", [1000, 50257, 151936]) for k in th.get("k", [1, 5, 32])]
    return ["build_library", *cases, "ties", "neg_inf", "magnitude_1e4", "speed", "bandwidth"]


def skip_gpu(suite, names: list[str], reason: str) -> None:
    for name in names:
        suite.skip(name, reason, requires=requires_of(name))


def gpu_checks(suite) -> None:
    names = gpu_check_names(suite.thresholds)
    if suite.backend != "cuda":
        skip_gpu(suite, names, f"needs an NVIDIA GPU: this run's backend is {suite.backend}, not cuda")
        return
    usable, reason = cuda_build.gpu_status()
    if not usable:
        skip_gpu(suite, names, f"needs an NVIDIA GPU: {reason}")
        return
    adapter = suite.adapter_path
    if adapter is None or Path(adapter).suffix != ".cu":
        looked = (f".benchtui/adapters/fuse/{suite.model}.cu, else challenges/fuse/adapters/{suite.model}.cu, "
                  f"exposing {SIGNATURE}")
        for name in names:
            suite.record(name, V.UNBOUND, message=f"no adapter: looked for {looked}",
                         details={"looked_for": [looked]}, requires=requires_of(name))
        return
    if cuda_build.find_nvcc() is None:
        skip_gpu(suite, names, "nvcc not found: cannot build the answer")
        return
    with tempfile.TemporaryDirectory(prefix="benchtui-fuse-") as tmp:
        fn = build_and_load(suite, Path(adapter), Path(tmp))
        if fn is None:
            skip_gpu(suite, names[1:], "not run: the answer's library did not build")
            return
        # Not yet split across the trust boundary: the answer's library is loaded
        # here, in the checker's process (no GPU has been lent to move it yet).
        suite.info("trust_boundary", message="the answer's CUDA library ran inside the checker's process: "
                   "these GPU verdicts are not protected from the answer's host code")
        FuseChecks(suite, fn).run_all()


def build_and_load(suite, adapter: Path, tmp: Path):
    output = tmp / "libbenchtui_fuse.so"
    result = cuda_build.build_shared_library(
        [adapter], output, include_dirs=[suite.answer_dir, adapter.parent], arch=cuda_build.device_arch(),
        timeout_s=float(suite.threshold("build_timeout_s", 300.0)))
    details = {"command": " ".join(result.command[1:]), "output": result.output}
    if not result.ok:
        verdict = V.TIMEOUT if result.timed_out else V.COMPILE_ERROR
        suite.record("build_library", verdict, value=result.error_count, threshold="0 errors",
                     message=result.summary(), details=details, requires=("compiles",))
        return None
    try:
        lib = ctypes.CDLL(str(output))
        fn = getattr(lib, SYMBOL)
    except (OSError, AttributeError) as exc:
        suite.record("build_library", V.UNBOUND, message=f"built, but {SYMBOL} not loadable: {exc}", details=details,
                     requires=("compiles",))
        return None
    fn.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
    fn.restype = ctypes.c_int
    suite.record("build_library", V.PASS, value=round(result.seconds, 3), message=f"built in {result.seconds:.1f} s",
                 details=details, requires=("compiles",))
    return fn


class FuseChecks:
    """The GPU checks, sharing the loaded entry point."""

    def __init__(self, suite, fn, xp=None):
        if xp is None:
            import cupy as xp
        # ``xp`` is CuPy; tests pass a NumPy stand-in to run this logic on a CPU.
        self.suite, self.fn, self.cp = suite, fn, xp
        self.ref = suite.reference()
        self.rtol = float(suite.threshold("rtol", 1e-5))
        self.rows = int(suite.threshold("rows", 67))

    def launch(self, x, k: int, probs, idx) -> None:
        """Call the shim; outputs are caller-owned device buffers."""
        rows, vocab = x.shape
        rc = self.fn(x.data.ptr, rows, vocab, k, probs.data.ptr, idx.data.ptr)
        if rc != 0:
            raise RuntimeError(f"{SYMBOL} returned CUDA error {rc} ({cuda_error_name(rc)})")

    def call(self, logits: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Run on a device copy of ``logits``; fail on a mutated input or a
        write past the end of an output buffer."""
        cp = self.cp
        x = cp.asarray(logits)
        before = x.copy()
        n = x.shape[0] * k
        probs = cp.full(n + GUARD, cp.nan, dtype=cp.float32)
        idx = cp.full(n + GUARD, -7, dtype=cp.int32)
        self.launch(x, k, probs, idx)
        cp.cuda.runtime.deviceSynchronize()  # surfaces asynchronous kernel faults here
        if not bool(cp.array_equal(x, before)):
            raise InputMutated("the kernel modified the logits in place")
        if not (bool(cp.isnan(probs[n:]).all()) and bool((idx[n:] == -7).all())):
            raise CheckFailed("wrote past the end of the [rows, k] output buffers")
        return cp.asnumpy(probs[:n]).reshape(-1, k), cp.asnumpy(idx[:n]).reshape(-1, k)

    def compare(self, c, logits: np.ndarray, k: int) -> None:
        probs, idx = self.call(logits, k)
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
        with s.check("neg_inf", threshold=self.rtol, requires=requires_of("neg_inf")) as c:
            self.compare(c, neg_inf_logits(s.rng("neg_inf"), self.rows, vocab, 32), 32)
        with s.check("magnitude_1e4", threshold=self.rtol, requires=requires_of("magnitude_1e4")) as c:
            self.compare(c, huge_logits(s.rng("huge"), self.rows, vocab), 5)

    def speed_and_bandwidth(self) -> None:
        s, cp = self.suite, self.cp
        rows, vocab, k = (int(s.threshold(n, d)) for n, d in (("timing_rows", 512), ("timing_V", 50257), ("timing_k", 5)))
        probs = cp.empty(rows * k, dtype=cp.float32)
        idx = cp.empty(rows * k, dtype=cp.int32)

        def make_inputs(trial: int):
            gen = cp.random.default_rng(abs(hash((s.seed, trial))) % (2**63))
            return gen.standard_normal((rows, vocab), dtype=cp.float32)

        timing = s.time("speed", lambda x: self.launch(x, k, probs, idx),
                        lambda x: self.ref.cupy_softmax_topk(x, k), make_inputs,
                        budget_s=float(s.threshold("timing_budget_s", 2.0)))
        if timing is None or not timing.answer_median_s > 0:
            s.skip("bandwidth", "no timing to derive bandwidth from")
            return
        info = cuda_build.device_info()
        moved = rows * vocab * 4 + rows * k * 8  # read logits once, write k (prob, index) pairs
        achieved = moved / timing.answer_median_s
        peak = info["peak_bytes_per_s"]
        fraction = achieved / peak if peak > 0 else float("nan")
        s.info("bandwidth", value=round(fraction, 4),
               message=f"{achieved / 1e9:.0f} GB/s of {peak / 1e9:.0f} GB/s peak on {info['name']}",
               details={**info, "bytes": moved, "achieved_bytes_per_s": achieved, "rows": rows, "V": vocab, "k": k})


def cuda_error_name(rc: int) -> str:
    """'cudaErrorInsufficientDriver: ...' for a cudaError_t value, via CuPy's runtime."""
    try:
        from cupy.cuda import runtime

        return str(runtime.CUDARuntimeError(rc))
    except Exception:
        return "unknown error code"


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
