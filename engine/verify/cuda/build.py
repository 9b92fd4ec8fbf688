"""Compile CUDA answers with nvcc and probe the GPU, for CUDA challenges.

Three jobs: a compile-only check of one translation unit (runs without a
GPU), building a reviewer's shim plus the answer into a shared library that
ctypes can load, and saying whether a CUDA device is usable (and why not).

Compile results may be cached by content hash in ``$BENCHTUI_NVCC_CACHE``
(tests set it; nvcc costs seconds per file). The key covers the nvcc
version, the flags and every C/C++/CUDA source in the include folders, so an
edit to an included header is never served a stale result.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

SOURCE_SUFFIXES = (".cu", ".cuh", ".h", ".hpp", ".hh", ".cpp", ".cc", ".inl")
# nvcc is often outside a sandbox's minimal PATH: look in the usual places too.
NVCC_CANDIDATES = ("/usr/local/cuda/bin/nvcc", "/usr/local/bin/nvcc", "/opt/cuda/bin/nvcc")
_ERROR_LINE = re.compile(r"(\berror\b\s*:|\bfatal error\b|^nvcc fatal|\berror\s+[A-Z]?\d+:)", re.IGNORECASE)
_ERROR_TOTAL = re.compile(r"(\d+) errors? detected in the compilation")
OUTPUT_KEEP = 8000


@dataclass
class CompileResult:
    ok: bool
    returncode: int | None
    seconds: float
    command: list[str]
    output: str = ""
    errors: list[str] = field(default_factory=list)
    error_count: int = 0
    timed_out: bool = False
    cached: bool = False

    def summary(self, n: int = 3) -> str:
        """The first error lines, for a check's one-line message."""
        if self.timed_out:
            return f"nvcc ran past its time limit ({self.seconds:.0f} s)"
        if self.ok:
            return f"compiled in {self.seconds:.2f} s"
        lines = self.errors[:n] or [ln for ln in self.output.splitlines() if ln.strip()][:n]
        more = f" (+{self.error_count - len(lines)} more)" if self.error_count > len(lines) else ""
        return " | ".join(lines) + more if lines else f"nvcc exited with {self.returncode}"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def find_nvcc() -> str | None:
    """Path of nvcc: $NVCC, then PATH, then $CUDA_HOME/$CUDA_PATH, then usual places.
    NVCC=none (or empty) means none, as on a machine without the CUDA toolkit."""
    explicit = os.environ.get("NVCC")
    if explicit is not None and explicit.strip().lower() in ("", "none"):
        return None
    if explicit and Path(explicit).is_file():
        return explicit
    found = shutil.which("nvcc")
    if found:
        return found
    homes = [os.environ.get(v) for v in ("CUDA_HOME", "CUDA_PATH")]
    for candidate in [str(Path(h) / "bin" / "nvcc") for h in homes if h] + list(NVCC_CANDIDATES):
        if Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


@functools.lru_cache(maxsize=8)
def nvcc_version(nvcc: str) -> str:
    try:
        out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.strip().splitlines()[-1] if out.strip() else "unknown"


def first_errors(output: str) -> tuple[list[str], int]:
    """(error lines in order, total error count) from nvcc/host-compiler output."""
    lines = [line.strip() for line in output.splitlines() if _ERROR_LINE.search(line)]
    totals = [int(m.group(1)) for m in _ERROR_TOTAL.finditer(output)]
    return lines, max(sum(totals), len(lines))


def _cache_key(nvcc: str, args: list[str], source: Path, include_dirs: Sequence[Path]) -> str:
    h = hashlib.sha256()
    h.update(nvcc_version(nvcc).encode())
    h.update("\0".join(args).encode())
    h.update(source.name.encode() + b"\0" + source.read_bytes())
    for folder in sorted({d.resolve() for d in include_dirs}):
        for path in sorted(p for p in folder.rglob("*") if p.suffix in SOURCE_SUFFIXES and p.is_file()):
            h.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def _run_nvcc(nvcc: str, args: list[str], timeout_s: float, strip: tuple[str, ...],
              cwd: Path | None = None) -> CompileResult:
    command = [nvcc, *args]
    start = time.perf_counter()
    try:
        proc = subprocess.run(command, capture_output=True, text=True, errors="replace", timeout=timeout_s,
                              stdin=subprocess.DEVNULL, cwd=cwd)
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or b"").decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        return CompileResult(False, None, time.perf_counter() - start, command, out[-OUTPUT_KEEP:], timed_out=True)
    seconds = time.perf_counter() - start
    output = (proc.stdout + proc.stderr)
    for prefix in strip:
        output = output.replace(prefix.rstrip("/") + "/", "")
    errors, count = first_errors(output)
    ok = proc.returncode == 0
    return CompileResult(ok, proc.returncode, seconds, command, output[-OUTPUT_KEEP:], errors,
                         0 if ok else max(count, 1))


def compile_check(source: Path, *, include_dirs: Sequence[Path] = (), arch: str | None = None,
                  timeout_s: float = 120.0, nvcc: str | None = None, cache: bool = True) -> CompileResult:
    """Host and device compile of one whole translation unit (``nvcc -c``).

    The object file goes to a throwaway folder. Headers (.cuh) are compiled
    as CUDA with ``-x cu``. Paths in the output are shown relative to the
    source's folder.
    """
    nvcc = nvcc or find_nvcc()
    if nvcc is None:
        raise FileNotFoundError("nvcc not found (PATH, $CUDA_HOME, /usr/local/cuda/bin)")
    source = Path(source).resolve()
    dirs = [source.parent, *[Path(d).resolve() for d in include_dirs]]
    with tempfile.TemporaryDirectory(prefix="benchtui-nvcc-") as tmp:
        args = ["-std=c++17", *(["-arch", arch] if arch else [])]
        args += [f"-I{d}" for d in dict.fromkeys(str(d) for d in dirs)]
        args += (["-x", "cu"] if source.suffix != ".cu" else []) + ["-c", str(source), "-o", str(Path(tmp) / "out.o")]
        strip = (str(source.parent), tmp)
        cache_dir = os.environ.get("BENCHTUI_NVCC_CACHE") if cache else None
        if not cache_dir:
            return _run_nvcc(nvcc, args, timeout_s, strip)
        # Paths change per call (temp dir, scratch copy): keep them out of the key.
        key_args = [a.replace(tmp, "<tmp>").replace(str(source.parent), "<src>") for a in args]
        path = Path(cache_dir) / f"{_cache_key(nvcc, key_args, source, dirs)}.json"
        if path.is_file():
            return CompileResult(**{**json.loads(path.read_text()), "cached": True})
        result = _run_nvcc(nvcc, args, timeout_s, strip)
        if not result.timed_out:  # a slow machine must not poison the cache
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(result.as_dict()))
        return result


def build_shared_library(sources: list[Path], output: Path, *, include_dirs: Sequence[Path] = (),
                         arch: str | None = None, timeout_s: float = 300.0, nvcc: str | None = None,
                         extra_flags: tuple[str, ...] = (), cwd: Path | None = None,
                         link: str = "-shared") -> CompileResult:
    """``nvcc -shared -Xcompiler -fPIC`` the sources into ``output`` (a .so), run in ``cwd``;
    ``link="-c"`` compiles one source into a position-independent object instead."""
    nvcc = nvcc or find_nvcc()
    if nvcc is None:
        raise FileNotFoundError("nvcc not found (PATH, $CUDA_HOME, /usr/local/cuda/bin)")
    dirs = [Path(d).resolve() for d in include_dirs]
    args = ["-std=c++17", "-O3", link, "-Xcompiler", "-fPIC", *(["-arch", arch] if arch else []), *extra_flags]
    args += [f"-I{d}" for d in dict.fromkeys(str(d) for d in dirs)]
    args += [str(Path(s).resolve()) for s in sources] + ["-o", str(output)]
    strip = tuple(str(d) for d in dirs) + tuple(str(Path(s).resolve().parent) for s in sources)
    return _run_nvcc(nvcc, args, timeout_s, strip, cwd=cwd)


# -- the device -------------------------------------------------------------------

def gpu_status() -> tuple[bool, str]:
    """(usable, reason): whether CuPy sees a CUDA device it can use."""
    try:
        import cupy
        from cupy.cuda import runtime
    except Exception as exc:  # ImportError, or a broken CUDA install
        return False, f"CuPy is not importable ({type(exc).__name__}: {str(exc)[:120]})"
    try:
        count = runtime.getDeviceCount()
    except Exception as exc:  # CUDARuntimeError when there is no driver
        return False, f"no usable CUDA driver ({str(exc)[:160]})"
    if count < 1:
        return False, "no CUDA device found"
    try:
        cupy.zeros(1, dtype=cupy.float32).sum().item()
    except Exception as exc:
        return False, f"CUDA device present but unusable ({str(exc)[:160]})"
    return True, f"{count} CUDA device(s)"


def device_arch() -> str:
    """``sm_XY`` of the current device, for building code that runs on it."""
    import cupy

    return f"sm_{cupy.cuda.Device().compute_capability}"


def device_info() -> dict[str, Any]:
    """Name, compute capability and theoretical memory bandwidth of the device."""
    import cupy
    from cupy.cuda import runtime

    dev = cupy.cuda.Device().id
    props = runtime.getDeviceProperties(dev)
    name = props.get("name", b"")
    name = name.decode(errors="replace") if isinstance(name, bytes) else str(name)
    try:
        clock_khz = runtime.deviceGetAttribute(runtime.cudaDevAttrMemoryClockRate, dev)
        bus_bits = runtime.deviceGetAttribute(runtime.cudaDevAttrGlobalMemoryBusWidth, dev)
    except Exception:
        clock_khz, bus_bits = props.get("memoryClockRate", 0), props.get("memoryBusWidth", 0)
    # Double data rate: two transfers per memory clock.
    peak = 2.0 * clock_khz * 1e3 * bus_bits / 8.0
    return {"name": name, "compute_capability": f"{props.get('major')}.{props.get('minor')}",
            "memory_clock_khz": clock_khz, "memory_bus_bits": bus_bits, "peak_bytes_per_s": peak}
