"""`benchtui doctor`: what this machine offers benchtui."""
from __future__ import annotations

import importlib.metadata as md
import platform
import shutil
import sqlite3
import subprocess
import sys

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


def gather() -> dict:
    backends = probe_all()
    report = {
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
    }
    return report


def _sandbox() -> dict:
    from engine.runner import sandbox

    layers = sandbox.describe_layers()
    active = next((layer["name"] for layer in layers if layer.get("active")), None)
    return {"active": active, "layers": layers}


def render(report: dict) -> str:
    cuda, mlx, sb = report["cuda"], report["mlx"], report["sandbox"]
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
        f"{ok(sb['active'])}sandbox  active layer: {sb['active'] or 'none (runs refused without --unsafe-no-isolation)'}",
    ]
    for layer in sb["layers"]:
        mark = "*" if layer.get("active") else " "
        net = "blocks network" if layer.get("blocks_network") else "network open"
        lines.append(f"   {mark} {layer['name']:<8} {'works' if layer['works'] else 'unavailable'}, {net}: {layer.get('detail', '')}")
    return "\n".join(lines)
