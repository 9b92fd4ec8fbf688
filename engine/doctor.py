"""`benchtui doctor`: what this machine offers benchtui."""
from __future__ import annotations

import importlib.metadata as md
import platform
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

from engine.config import default_cluster
from engine import __version__, resources
from engine.backends import nvcc_version, probe_all


def _version(dist: str) -> str | None:
    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return None


def _git_version() -> str | None:
    exe = shutil.which("git")
    if not exe:
        return None
    try:
        return subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=10).stdout.strip().removeprefix("git version ")
    except (OSError, subprocess.SubprocessError):
        return None


def _nvidia_gpu() -> bool:
    """An NVIDIA GPU is present (driver loaded), whether or not CuPy is installed."""
    return Path("/dev/nvidia0").exists() or shutil.which("nvidia-smi") is not None


def recommend_extras(*, nvidia_gpu: bool, cupy: str | None, mlx_lm: str | None, platform_ok_for_mlx_lm: bool,
                     from_clone: bool, cluster: str | None = None, ray: str | None = None) -> list[dict]:
    """The optional extras worth installing on this machine, each with why
    and the command. ``cluster``: the default cluster address configured here
    (engine/config.py), which needs Ray."""
    out = []
    if nvidia_gpu and not cupy:
        out.append({"extra": "cuda", "why": "an NVIDIA GPU is present but CuPy is not installed: CUDA answers would be skipped"})
    if platform_ok_for_mlx_lm and not mlx_lm:
        out.append({"extra": "ternary", "why": "mlx-lm is not installed: ternary_training answers importing mlx_lm get missing_dependency"})
    if cluster and not ray:
        out.append({"extra": "cluster", "why": f"runs default to the cluster {cluster!r} but Ray is not installed"})
    for r in out:
        r["command"] = (f'python3 -m pip install -e ".[{r["extra"]}]"' if from_clone
                        else f'python3 -m pip install "benchtui[{r["extra"]}]"  (pipx: pipx install --force "benchtui[{r["extra"]}]")')
    return out


def paths(workbench_arg: str | None, store_arg: str | None) -> dict:
    """Where benchtui reads its own files and where it writes."""
    import os

    from engine.workbench import WorkbenchError, find_workbench

    out = {"installed": resources.is_installed(), "engine": str(resources.ENGINE_DIR),
           "challenges": str(resources.bundled_challenges()), "demo": str(resources.bundled_demo_models()),
           "user_data": str(resources.user_data_dir())}
    try:
        wb = find_workbench(workbench_arg, os.environ.get("BENCHTUI_WORKBENCH"), Path.cwd(), store=store_arg)
        out.update(workbench=str(wb.root), store=str(wb.store_path), workbench_error=None)
    except WorkbenchError as exc:
        out.update(workbench=None, store=None, workbench_error=str(exc))
    return out


def gather(workbench_arg: str | None = None, store_arg: str | None = None) -> dict:
    backends = probe_all()
    report = {
        "version": __version__,
        "python": {"version": platform.python_version(), "executable": sys.executable},
        "numpy": _version("numpy"),
        "textual": _version("textual"),  # metadata only: the engine never imports textual
        "sqlite": sqlite3.sqlite_version,
        "sqlite_utils": _version("sqlite-utils"),
        "git": _git_version(),
        "cuda": {"cupy": _version("cupy-cuda12x") or _version("cupy"), "available": backends["cuda"].available,
                 "devices": backends["cuda"].device, "detail": backends["cuda"].detail, "nvcc": nvcc_version()},
        "mlx": {"version": _version("mlx"), "available": backends["mlx"].available, "device": backends["mlx"].device,
                "detail": backends["mlx"].detail},
        "sandbox": _sandbox(),
        "paths": paths(workbench_arg, store_arg),
        "cluster": {"ray": _version("ray"), "default": default_cluster()},  # run --cluster
    }
    report["extras"] = recommend_extras(
        nvidia_gpu=_nvidia_gpu(), cupy=report["cuda"]["cupy"], mlx_lm=_version("mlx-lm"),
        platform_ok_for_mlx_lm=sys.platform == "linux" or (sys.platform == "darwin" and platform.machine() == "arm64"),
        from_clone=not resources.is_installed(), cluster=report["cluster"]["default"], ray=report["cluster"]["ray"])
    return report


def _sandbox() -> dict:
    from engine.runner import sandbox

    layers = sandbox.describe_layers()
    active = next((layer["name"] for layer in layers if layer.get("active")), None)
    return {"active": active, "layers": layers}


def render(report: dict) -> str:
    cuda, mlx, sb = report["cuda"], report["mlx"], report["sandbox"]
    cluster = report.get("cluster") or {}  # Ray and the default cluster
    ok = lambda flag: "ok " if flag else "-- "  # noqa: E731
    lines = [
        f"{ok(True)}python   {report['python']['version']} ({report['python']['executable']})",
        f"{ok(report['numpy'])}numpy    {report['numpy']}",
        f"{ok(report['textual'])}textual  {report['textual']}",
        f"{ok(True)}sqlite   {report['sqlite']} (sqlite-utils {report['sqlite_utils']})",
        f"{ok(report['git'])}git      {report['git'] or 'not found'}",
        f"{ok(cuda['available'])}cuda     CuPy {cuda['cupy'] or 'not installed'}; "
        + (f"devices: {cuda['devices']}" if cuda["available"] else cuda["detail"]) + f"; nvcc {cuda['nvcc'] or 'not found'}",
        f"{ok(mlx['available'])}mlx      {mlx['version'] or 'not installed'}; " + (mlx["device"] if mlx["available"] else mlx["detail"]),
        f"{ok(True)}cluster  Ray {cluster.get('ray') or 'not installed'}; default "
        + (repr(cluster["default"]) if cluster.get("default") else "none (runs stay on this machine)"),
        f"{ok(sb['active'])}sandbox  active layer: {sb['active'] or 'none (runs refused without --unsafe-no-isolation)'}",
    ]
    for layer in sb["layers"]:
        mark = "*" if layer.get("active") else " "
        net = "blocks network" if layer.get("blocks_network") else "network open"
        lines.append(f"   {mark} {layer['name']:<8} {'works' if layer['works'] else 'unavailable'}, {net}: {layer.get('detail', '')}")
    where = report["paths"]
    lines += [f"{ok(True)}benchtui {report.get('version', '')} {'installed' if where['installed'] else 'from a clone'}: {where['engine']}",
              f"   challenges {where['challenges']} (never written by benchtui)",
              f"   demo       {where['demo']} (`benchtui demo` copies it)",
              f"   user data  {where['user_data']} (stores of read-only workbenches, the demo)"]
    if where["workbench"]:
        lines += [f"   workbench  {where['workbench']}", f"   store      {where['store']}"]
    else:
        lines.append(f"   workbench  none here: {where['workbench_error']}")
    for r in report["extras"]:
        lines.append(f"-- extra    {r['extra']}: {r['why']}; {r['command']}")
    return "\n".join(lines)
