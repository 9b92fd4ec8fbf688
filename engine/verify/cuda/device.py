"""CUDA answers on the device through ctypes, without CuPy in the answer's process.

- ``Harness``: the helpers of ``harness.cu`` (device buffers, seeded
  inputs made on the device, an L2 flush, event timing between device-wide
  syncs, the device's own figures), always built in a compile step of its
  own: no answer source and no answer include path is ever on its command.
- ``CheckerDevice``: the checker's own harness, built and loaded in the
  checker's process before any answer library exists: the device's facts
  (name, peak bandwidth, L2, clocks) come from here, never from the answer.
- ``KernelHost``: an answer's C entry point, built by nvcc *inside the
  answer's sandbox* and linked with the harness's object (compiled first, in
  its own step) into one shared library served from the answer's process;
  the checker drives it through a wire proxy and only ever sees host arrays,
  which it verifies itself. What runs in that process (the harness included:
  the answer can patch its memory) is the answer's word, never a trusted
  figure.
- ``seeded_rows``: the host twin of the device generator, bit for bit, so the
  checker can verify sampled rows of inputs it never had to send.
"""
from __future__ import annotations

import ctypes
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from benchtui.verify import seeds
from benchtui.verify.cuda import build as cuda_build

HARNESS_SOURCE = Path(__file__).with_name("harness.cu")
LIBRARY_NAME = "libbenchtui_answer.so"
# An entry point's arguments: a device copy of a host array ("in"), a device
# buffer the call fills ("out"), and scalars: int32 ("int"), int64, float32.
PARAM_KINDS = ("in", "out", "int", "int64", "float")
_SCALARS = {"int": ctypes.c_int, "int64": ctypes.c_longlong, "float": ctypes.c_float}
# Element types of buffers and seeded inputs: (the harness's code, how the host holds them).
# bfloat16 has no NumPy type: its host arrays are the raw 16-bit patterns (uint16).
DTYPES = {"float32": (0, np.float32), "float16": (1, np.float16), "bfloat16": (2, np.uint16),
          "int32": (3, np.int32), "int64": (4, np.int64), "uint8": (5, np.uint8)}
_DTYPES = {name: host for name, (_, host) in DTYPES.items()}


class CudaError(RuntimeError):
    """A CUDA runtime error, named (``cudaErrorIllegalAddress: ...``)."""

    def __init__(self, code: int, name: str, where: str):
        super().__init__(f"{name} (CUDA error {code}) in {where}")
        self.code, self.name, self.where = code, name, where


# -- inputs both sides can make ----------------------------------------------------------

_U64 = np.uint64


def _mix(z: Any) -> Any:
    """splitmix64's finaliser, as in harness.cu (uint64 arithmetic wraps)."""
    z = z + _U64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> _U64(30))) * _U64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> _U64(27))) * _U64(0x94D049BB133111EB)
    return z ^ (z >> _U64(31))


def seeded_rows(seed: int, rows: Sequence[int], cols: int) -> np.ndarray[Any, Any]:
    """Rows ``rows`` of the [*, cols] float32 matrix the device generator writes
    for ``seed`` (128 bits: both words pick the values)."""
    lo, hi = seeds.split(seed)
    with np.errstate(over="ignore"):
        flat = np.asarray(rows, dtype=_U64)[:, None] * _U64(cols) + np.arange(cols, dtype=_U64)[None, :]
        h = _mix(_U64(lo) ^ _mix(flat ^ _mix(np.array([hi], dtype=_U64))[0]))
    return np.asarray((h >> _U64(40)).astype(np.float32) * np.float32(2.0 ** -20) - np.float32(8.0))


def bf16_bits(x: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 bit patterns, rounding to nearest even (as the harness)."""
    b = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_to_float32(bits: np.ndarray) -> np.ndarray:
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def seeded_values(seed: int, index: Any, dtype: str = "float32", a: int = 0, b: int = 0) -> np.ndarray[Any, Any]:
    """Elements ``index`` (flat positions) of the input the harness generates for
    ``seed`` as ``dtype``: floating types are the float32 values of
    ``seeded_rows`` times 2**a (rounded to nearest even for float16 and
    bfloat16, whose host form is its bits); integer types are a + (hash mod
    (b - a)), the whole 64-bit hash when b == a. Bit for bit the device's."""
    code, host = DTYPES[dtype]
    lo, hi = seeds.split(seed)
    idx = np.asarray(index, dtype=_U64)
    with np.errstate(over="ignore"):
        h = _mix(_U64(lo) ^ _mix(idx ^ _mix(np.array([hi], dtype=_U64))[0]))
        if code <= 2:
            v = ((h >> _U64(40)).astype(np.float32) * np.float32(2.0 ** -20) - np.float32(8.0)) * np.float32(2.0 ** int(a))
            return np.asarray(v if code == 0 else v.astype(np.float16) if code == 1 else bf16_bits(v))
        span = _U64((int(b) - int(a)) % 2**64)
        value = (h % span if span else h) + _U64(int(a) % 2**64)
    return np.asarray(value.view(np.int64).astype(host) if code == 4 else value.astype(host))


def element_size(dtype: str) -> int:
    return np.dtype(_DTYPES[dtype]).itemsize


# -- the harness ------------------------------------------------------------------------

class Harness:
    """ctypes bindings of harness.cu in ``lib`` (alone, or built with an answer)."""

    def __init__(self, lib: ctypes.CDLL):
        self.lib = lib
        vp, ll, i = ctypes.c_void_p, ctypes.c_longlong, ctypes.c_int
        sigs = {"malloc": [ctypes.POINTER(vp), ll], "free": [vp], "to_device": [vp, vp, ll], "to_host": [vp, vp, ll],
                "sync": [], "last_error": [], "fill32": [vp, ll, ctypes.c_uint], "generate": [vp, ll, ctypes.c_ulonglong, ctypes.c_ulonglong],
                "generate_typed": [vp, ll, i, ll, ll, ctypes.c_ulonglong, ctypes.c_ulonglong],
                "flush_l2": [vp, ll, i], "timer_start": [], "timer_stop": [ctypes.POINTER(ctypes.c_float)],
                "device_info": [ctypes.c_char_p, i, *[ctypes.POINTER(i)] * 5, ctypes.POINTER(ll)]}
        for name, args in sigs.items():
            fn = getattr(lib, f"benchtui_h_{name}")
            fn.argtypes, fn.restype = args, i
        for name in ("error_name", "error_string"):
            fn = getattr(lib, f"benchtui_h_{name}")
            fn.argtypes, fn.restype = [i], ctypes.c_char_p

    def error_name(self, code: int) -> str:
        name = (self.lib.benchtui_h_error_name(code) or b"").decode(errors="replace")
        text = (self.lib.benchtui_h_error_string(code) or b"").decode(errors="replace")
        return f"{name}: {text}" if text else name or f"CUDA error {code}"

    def ok(self, code: int, where: str) -> None:
        if code:
            raise CudaError(code, self.error_name(code), where)

    def malloc(self, nbytes: int) -> int:
        ptr = ctypes.c_void_p()
        self.ok(self.lib.benchtui_h_malloc(ctypes.byref(ptr), max(1, int(nbytes))), f"cudaMalloc({nbytes})")
        if ptr.value is None:
            raise RuntimeError(f"cudaMalloc({nbytes}) succeeded with a null pointer")
        return ptr.value

    def free(self, ptr: int) -> None:
        self.lib.benchtui_h_free(ptr)

    def upload(self, ptr: int, array: np.ndarray) -> None:
        array = np.ascontiguousarray(array)
        self.ok(self.lib.benchtui_h_to_device(ptr, array.ctypes.data, array.nbytes), "cudaMemcpy to the device")

    def download(self, ptr: int, dtype: Any, count: int) -> np.ndarray[Any, Any]:
        out = np.empty(int(count), dtype=dtype)
        self.ok(self.lib.benchtui_h_to_host(out.ctypes.data, ptr, out.nbytes), "cudaMemcpy to the host")
        return out

    def fill32(self, ptr: int, count: int, value: int) -> None:
        self.ok(self.lib.benchtui_h_fill32(ptr, int(count), value & 0xFFFFFFFF), "filling a buffer")

    def generate(self, ptr: int, count: int, seed: int) -> None:
        self.ok(self.lib.benchtui_h_generate(ptr, int(count), *seeds.split(seed)), "generating inputs")

    def generate_typed(self, ptr: int, count: int, dtype: str, a: int, b: int, seed: int) -> None:
        self.ok(self.lib.benchtui_h_generate_typed(ptr, int(count), DTYPES[dtype][0], int(a), int(b), *seeds.split(seed)),
                "generating inputs")

    def fill(self, ptr: int, dtype: str, count: int, bits: int) -> None:
        """Every element of a ``dtype`` buffer set to the bit pattern ``bits``."""
        size = element_size(dtype)
        if size == 4:
            self.fill32(ptr, count, bits)
        else:
            self.upload(ptr, np.full(int(count), bits & ((1 << 8 * size) - 1), dtype=f"<u{size}"))

    def flush_l2(self, scratch: int, nbytes: int, value: int) -> None:
        self.ok(self.lib.benchtui_h_flush_l2(scratch, int(nbytes), value), "flushing L2")

    def sync(self) -> int:
        return int(self.lib.benchtui_h_sync())

    def timer_start(self) -> None:
        self.ok(self.lib.benchtui_h_timer_start(), "starting the timer")

    def timer_stop(self) -> float:
        ms = ctypes.c_float()
        self.ok(self.lib.benchtui_h_timer_stop(ctypes.byref(ms)), "stopping the timer")
        return ms.value / 1e3

    def device_info(self) -> dict[str, Any]:
        name = ctypes.create_string_buffer(256)
        ints = [ctypes.c_int() for _ in range(5)]
        total = ctypes.c_longlong()
        self.ok(self.lib.benchtui_h_device_info(name, 256, *[ctypes.byref(v) for v in ints], ctypes.byref(total)),
                "reading the device's properties")
        major, minor, clock_khz, bus_bits, l2 = (v.value for v in ints)
        # Double data rate: two transfers per memory clock.
        peak = 2.0 * clock_khz * 1e3 * bus_bits / 8.0
        return {"name": name.value.decode(errors="replace"), "compute_capability": f"{major}.{minor}",
                "memory_clock_khz": clock_khz, "memory_bus_bits": bus_bits, "peak_bytes_per_s": peak,
                "l2_bytes": l2, "total_bytes": total.value}


def device_arch() -> str:
    """``sm_XY`` of the device when CuPy can say, else nvcc's ``native``."""
    try:
        return cuda_build.device_arch()
    except Exception:  # no CuPy here: nvcc asks the driver itself
        return "native"


HARNESS_LIBRARY = "libbenchtui_harness.so"
HARNESS_OBJECT = "benchtui_harness.o"


def build_harness_object(folder: Path, timeout_s: float = 300.0, arch: str | None = None) -> cuda_build.CompileResult:
    """The harness compiled alone into ``folder/benchtui_harness.o``: its own
    nvcc command, run in ``folder``, with no include path but the toolkit's,
    so no header of an answer can stand in for ``cuda_runtime.h``."""
    folder = Path(folder).resolve()
    return cuda_build.build_shared_library([HARNESS_SOURCE], folder / HARNESS_OBJECT, include_dirs=[],
                                           arch=arch or device_arch(), timeout_s=timeout_s, cwd=folder,
                                           link="-c")


def build(sources: Sequence[Path], output: Path, include_dirs: Sequence[Path] = (), timeout_s: float = 300.0,
          arch: str | None = None, harness_object: Path | None = None) -> cuda_build.CompileResult:
    """nvcc the (answer's) sources, and ``harness_object`` when given (already
    compiled on its own), into a shared library at ``output`` (for this
    machine's device unless ``arch`` names another)."""
    extra = [harness_object] if harness_object is not None else []
    return cuda_build.build_shared_library([*sources, *extra], output, include_dirs=list(include_dirs),
                                           arch=arch or device_arch(), timeout_s=timeout_s)


def build_harness_library(folder: Path, timeout_s: float = 300.0, arch: str | None = None) -> cuda_build.CompileResult:
    """The harness alone into ``folder/libbenchtui_harness.so`` (the checker's
    own), in its own nvcc command with no include path but the toolkit's."""
    folder = Path(folder).resolve()
    return cuda_build.build_shared_library([HARNESS_SOURCE], folder / HARNESS_LIBRARY, include_dirs=[],
                                           arch=arch or device_arch(), timeout_s=timeout_s, cwd=folder)


def build_harness(folder: Path, timeout_s: float = 300.0) -> tuple[Harness | None, cuda_build.CompileResult]:
    """The harness alone, loaded here: (Harness or None, CompileResult)."""
    result = build_harness_library(folder, timeout_s=timeout_s)
    if not result.ok:
        return None, result
    return Harness(ctypes.CDLL(str(Path(folder).resolve() / HARNESS_LIBRARY))), result


class TimedBuffers:
    """The device buffers of timed cycles, made with harness ``h``: ``launches``
    sets of the seeded inputs (dtype, count, a, b) and of the outputs (dtype,
    count, fill bits), and an L2 flush buffer. The same code serves the
    answer's timed cycles and the checker's empty ones."""

    def __init__(self, h: Harness, inputs: list[Sequence[Any]], outputs: list[Sequence[Any]], scratch_bytes: int,
                 launches: int = 1):
        self.h = h
        self.owned: list[int] = []
        self.inputs = [[(self._malloc(int(n) * element_size(d)), str(d), int(n), int(a), int(b)) for d, n, a, b in inputs]
                       for _ in range(max(1, int(launches)))]
        self.outputs = [[(self._malloc(int(n) * element_size(d)), str(d), int(n), int(fill)) for d, n, fill in outputs]
                        for _ in range(max(1, int(launches)))]
        self.scratch, self.scratch_bytes = self._malloc(int(scratch_bytes)), int(scratch_bytes)

    def _malloc(self, nbytes: int) -> int:
        self.owned.append(self.h.malloc(nbytes))
        return self.owned[-1]

    def prepare(self, seeds: Sequence[Sequence[int]], trial: int) -> None:
        """Fresh inputs (``seeds[launch][input]``), outputs reset, L2 flushed."""
        for launch, row in zip(self.inputs, seeds, strict=True):
            for (ptr, dtype, count, a, b), seed in zip(launch, row, strict=True):
                if dtype == "float32" and a == 0:
                    self.h.generate(ptr, count, seed)
                else:
                    self.h.generate_typed(ptr, count, dtype, a, b, seed)
        for launch_outputs in self.outputs:
            for ptr, dtype, count, fill in launch_outputs:
                self.h.fill(ptr, dtype, count, fill)
        self.h.flush_l2(self.scratch, self.scratch_bytes, trial)

    def download(self) -> list[list[np.ndarray]]:
        return [[self.h.download(ptr, _DTYPES[dtype], count) for ptr, dtype, count, _ in launch] for launch in self.outputs]

    def release(self) -> None:
        for ptr in self.owned:
            self.h.free(ptr)
        self.owned = []


class CheckerDevice:
    """The checker's view of the GPU, from its own harness in its own process
    (built and read before the answer's library is built or loaded)."""

    def __init__(self, folder: Path, timeout_s: float = 300.0):
        harness, result = build_harness(folder, timeout_s=timeout_s)
        if harness is None:
            raise RuntimeError(f"the checker's timing harness did not build: {result.summary()}")
        self.harness = harness
        self.info = harness.device_info()

    def empty_cycles(self, inputs: list[Sequence[Any]], outputs: list[Sequence[Any]], scratch_bytes: int,
                     seeds: Sequence[Sequence[Sequence[int]]],
                     launches: int = 1) -> list[float]:
        """``KernelHost.timing_cycle`` without the entry point, run by this
        process's own harness, once per entry of ``seeds``: the seconds of
        each (what the checker's clock subtracts from the answer's cycles,
        with the wire's own cost)."""
        bufs = TimedBuffers(self.harness, inputs, outputs, scratch_bytes, launches)
        try:
            times = []
            for trial, cycle_seeds in enumerate(seeds):
                start = time.perf_counter()
                bufs.prepare(cycle_seeds, trial)
                self.harness.timer_start()
                self.harness.timer_stop()
                bufs.download()
                times.append(time.perf_counter() - start)
            return times
        finally:
            bufs.release()


# -- the answer's entry point, served in the answer's process ----------------------------------

class KernelHost:
    """An answer's ``extern "C" int f(...)`` with the harness beside it.

    ``params`` names each argument (PARAM_KINDS): ``"in"`` (a device copy of
    a host array of any dtype in DTYPES; bfloat16 as its uint16 bits),
    ``"out"`` (a device buffer the call fills), and the scalars ``"int"``,
    ``"int64"``, ``"float"``. Everything that comes back is host data for
    the checker to verify; nothing here decides a verdict."""

    def __init__(self, lib_path: Path, symbol: str, params: Sequence[str]):
        unknown = [p for p in params if p not in PARAM_KINDS]
        if unknown:
            raise ValueError(f"unknown parameter kinds {unknown}")
        self.lib = ctypes.CDLL(str(lib_path))
        self.h = Harness(self.lib)
        self.params = list(params)
        self.fn = getattr(self.lib, symbol)
        self.fn.argtypes = [_SCALARS.get(p, ctypes.c_void_p) for p in self.params]
        self.fn.restype = ctypes.c_int
        self.timing: TimedBuffers | None = None

    def device_info(self) -> dict[str, Any]:
        """What the answer's process says the device is (its word; the checker reads its own)."""
        return self.h.device_info()

    def _argv(self, ins: Iterator[int], outs: Iterator[int], scalars: Iterator[Any]) -> list[int | float]:
        return [next(ins) if p == "in" else next(outs) if p == "out" else float(next(scalars)) if p == "float"
                else int(next(scalars)) for p in self.params]

    def call(self, args: Sequence[Any]) -> dict[str, Any]:
        """One call: ``args`` follow ``params`` (an array, a (dtype, count, fill
        bits) triple for an output, a number). Returns the return code, the
        sync's error, the outputs and the inputs as they were afterwards."""
        owned: list[int] = []
        inputs: list[tuple[int, Any, int]] = []
        outputs: list[tuple[int, Any, int]] = []
        argv: list[int | float] = []
        try:
            for kind, value in zip(self.params, args, strict=True):
                if kind == "in":
                    array = np.ascontiguousarray(value)
                    ptr = self.h.malloc(array.nbytes)
                    owned.append(ptr)
                    self.h.upload(ptr, array)
                    inputs.append((ptr, array.dtype, array.size))
                    argv.append(ptr)
                elif kind == "out":
                    dtype, count, fill = value
                    ptr = self.h.malloc(int(count) * element_size(dtype))
                    owned.append(ptr)
                    self.h.fill(ptr, dtype, count, int(fill))
                    outputs.append((ptr, _DTYPES[dtype], int(count)))
                    argv.append(ptr)
                else:
                    argv.append(float(value) if kind == "float" else int(value))
            rc = int(self.fn(*argv))
            synced = self.h.sync()
            fault = synced or int(self.lib.benchtui_h_last_error())
            out: dict[str, Any] = {"rc": rc, "error": self.h.error_name(fault) if fault else "",
                   "rc_name": self.h.error_name(rc) if rc else ""}
            if not fault:
                out["outputs"] = [self.h.download(p, d, n) for p, d, n in outputs]
                out["inputs"] = [self.h.download(p, d, n) for p, d, n in inputs]
            return out
        except CudaError as exc:
            return {"rc": -1, "error": str(exc), "rc_name": ""}
        finally:
            for ptr in owned:
                self.h.free(ptr)

    # -- timing at scale: inputs made here from the checker's seeds --------------------------
    def timing_setup(self, inputs: list[Sequence[Any]], outputs: list[Sequence[Any]], scratch_bytes: int,
                     launches: int = 1) -> None:
        """Buffers for timed cycles: each "in" parameter made on the device from
        seeds as (dtype, count, a, b) (``seeded_values``), each "out" as
        (dtype, count, fill bits), ``launches`` sets of both, and an L2 flush buffer."""
        self.timing_release()
        self.timing = TimedBuffers(self.h, inputs, outputs, scratch_bytes, launches)

    def timing_cycle(self, seeds: Sequence[Sequence[int]], trial: int, scalars: Sequence[Any]) -> dict[str, Any]:
        """One whole cycle in one round trip, all of it inside the checker's
        clock: fresh inputs (``seeds[launch][input]``), outputs reset, L2
        flushed, then every launch of the entry point, each on its own set of
        buffers (``scalars`` in order), between the harness's device-wide
        syncs, and all the outputs copied back (``outputs[launch]``).
        ``seconds`` is what this process's CUDA events say: the answer's own
        figure, shown beside the checker's."""
        t = self.timing
        if t is None:
            raise RuntimeError("timing_cycle before timing_setup")
        t.prepare(seeds, trial)
        argvs = [self._argv(iter([p for p, *_ in ins]), iter([p for p, *_ in outs]), iter(scalars))
                 for ins, outs in zip(t.inputs, t.outputs)]
        self.h.timer_start()
        rc = 0
        for argv in argvs:
            rc = rc or int(self.fn(*argv))
        try:
            seconds = self.h.timer_stop()
        except CudaError as exc:
            return {"rc": rc, "error": str(exc), "seconds": None}
        if rc:
            return {"rc": rc, "error": self.h.error_name(rc), "seconds": seconds}
        return {"rc": 0, "error": "", "seconds": seconds, "outputs": t.download()}

    def timing_release(self) -> None:
        if self.timing:
            self.timing.release()
        self.timing = None


def serve_library(answer_dir: Path, adapter: Path | None,
                  spec: dict[str, Any]) -> tuple[dict[str, Any], KernelHost | None, str]:
    """The answer-side op: compile the harness alone (first, in a folder of its
    own, before any answer source is read), then build ``adapter`` with the
    answer's folder on the include path and link the harness's object in;
    load it; return (build facts, KernelHost or None, why it could not be
    loaded)."""
    if adapter is None or adapter.suffix != ".cu":
        raise ImportError("no .cu adapter was given for this run")
    folder = Path(tempfile.mkdtemp(prefix="benchtui-cuda-"))
    timeout_s = float(spec.get("timeout_s", 300.0))
    harness_dir = folder / "harness"
    harness_dir.mkdir()
    harness = build_harness_object(harness_dir, timeout_s=timeout_s)
    if not harness.ok:  # benchtui's own code: said as such, never blamed on the answer
        raise RuntimeError(f"benchtui's timing harness did not compile: {harness.summary()}")
    output = folder / LIBRARY_NAME
    result = build([adapter], output, include_dirs=[answer_dir, adapter.parent], timeout_s=timeout_s,
                   harness_object=harness_dir / HARNESS_OBJECT)
    facts_harness = {"harness_command": " ".join(harness.command[1:])}
    facts = {"ok": result.ok, "timed_out": result.timed_out, "seconds": round(result.seconds, 3),
             "command": " ".join(result.command[1:]), "output": result.output, "errors": result.errors[:20],
             "error_count": result.error_count, "summary": result.summary(), **facts_harness}
    if not result.ok:
        return facts, None, ""
    try:
        return facts, KernelHost(output, str(spec["symbol"]), spec["params"]), ""
    except (OSError, AttributeError) as exc:
        return facts, None, f"built, but {spec['symbol']} not loadable: {exc}"
