"""Which compute backends this machine has: cuda (CuPy + a device), mlx, cpu.

Probing imports CuPy/MLX, so it is done lazily and cached; the dashboard
never calls it on its own thread.
"""
from __future__ import annotations

import functools
import re
import shutil
import subprocess
from dataclasses import dataclass, field

ORDER = ("cuda", "mlx", "cpu")


@dataclass(frozen=True)
class BackendStatus:
    name: str
    available: bool
    device: str = ""
    detail: str = ""
    versions: dict[str, str] = field(default_factory=dict)


@functools.lru_cache(maxsize=1)
def nvcc_version() -> str | None:
    exe = shutil.which("nvcc")
    if not exe:
        return None
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r"release ([\d.]+)", out)
    return match.group(1) if match else out.strip().splitlines()[-1] if out.strip() else None


def probe_cuda() -> BackendStatus:
    try:
        import cupy
    except Exception as exc:  # ImportError or a broken CUDA install
        return BackendStatus("cuda", False, detail=f"CuPy not importable: {type(exc).__name__}: {str(exc)[:120]}")
    versions = {"cupy": cupy.__version__}
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:
        # the version is in `versions`: `doctor` prints "CuPy X; <detail>", and said it twice
        return BackendStatus("cuda", False, detail=f"no usable device: {str(exc)[:120]}", versions=versions)
    if count == 0:
        return BackendStatus("cuda", False, detail="no CUDA device", versions=versions)
    names = []
    for i in range(count):
        props = cupy.cuda.runtime.getDeviceProperties(i)
        name = props["name"]
        names.append(name.decode() if isinstance(name, bytes) else str(name))
    versions["cuda_runtime"] = str(cupy.cuda.runtime.runtimeGetVersion())
    return BackendStatus("cuda", True, device=", ".join(names), detail=f"{count} device(s)", versions=versions)


def probe_mlx() -> BackendStatus:
    try:
        import mlx.core as mx
    except Exception as exc:
        return BackendStatus("mlx", False, detail=f"MLX not importable: {type(exc).__name__}: {str(exc)[:120]}")
    try:
        version = getattr(mx, "__version__", "?")
        device = str(mx.default_device())
        gpu = "gpu" in device.lower()
        return BackendStatus("mlx", True, device=device + ("" if gpu else " (MLX on the CPU)"), versions={"mlx": version})
    except Exception as exc:
        return BackendStatus("mlx", False, detail=f"MLX unusable: {exc}")


def probe_cpu() -> BackendStatus:
    import platform

    import numpy

    return BackendStatus("cpu", True, device=platform.processor() or platform.machine(), versions={"numpy": numpy.__version__})


@functools.lru_cache(maxsize=1)
def probe_all() -> dict[str, BackendStatus]:
    return {"cuda": probe_cuda(), "mlx": probe_mlx(), "cpu": probe_cpu()}


class BackendUnavailable(ValueError):
    """An explicitly requested backend this machine cannot use: the
    run is refused up front, never recorded as the answer's error."""


def require_backend(requested: str) -> None:
    """Raise :class:`BackendUnavailable` when ``requested`` (not ``auto``) is absent here."""
    if requested == "auto":
        return
    st = probe_all().get(requested)
    if st is None:
        raise BackendUnavailable(f"unknown backend {requested!r}: use auto, cpu, cuda or mlx")
    if not st.available:
        lib = ", ".join(f"{k} {v}" for k, v in st.versions.items())
        raise BackendUnavailable(f"backend {requested} is not usable on this machine ({lib + ': ' if lib else ''}{st.detail}); "
                                 "--backend auto runs what can run here and skips the checks that need it")


def choose_backend(requested: str, supported: tuple[str, ...] | list[str]) -> tuple[str, str | None]:
    """(backend, reason-if-degraded). ``auto`` picks the best present backend
    the challenge supports; an explicit backend that is absent is returned as
    is with the reason, so the checks that need it are skipped, not failed."""
    status = probe_all()
    if requested != "auto":
        st = status.get(requested)
        if st is None:
            raise ValueError(f"unknown backend {requested!r}: use auto, cpu, cuda or mlx")
        return requested, None if st.available else st.detail
    for name in ORDER:
        if name in supported and status[name].available:
            return name, None
    # Nothing the challenge wants is present: run on the CPU so the checks
    # that can run (compiles, static rules) still do; the rest skip.
    first = supported[0] if supported else "cpu"
    return "cpu", f"{first} not available: {status[first].detail if first in status else 'unknown'}"
