"""`benchtui doctor`: what this machine offers benchtui."""
from __future__ import annotations

import importlib.metadata as md
import os
import platform
import shlex
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from benchtui import __version__
from benchtui.host import resources
from benchtui.host.backends import nvcc_version, probe_all
from benchtui.host.config import default_cluster
from benchtui.runner import sandbox
from benchtui.workbench.layout import WorkbenchError, find_workbench


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


# CuPy ships one distribution per CUDA major version (and ``cupy``, built from source).
CUPY_FOR_CUDA = {11: "cupy-cuda11x", 12: "cupy-cuda12x", 13: "cupy-cuda13x"}
# The extras that install each (pyproject.toml); CUDA 11 has none: CuPy 14 dropped it.
CUDA_EXTRA = {12: "cuda12", 13: "cuda13"}


def cupy_distributions() -> dict[str, str]:
    """Every installed CuPy distribution: name -> version."""
    found = {}
    for dist in md.distributions():
        name = (dist.metadata["Name"] or "").lower()
        if name == "cupy" or name.startswith("cupy-cuda"):
            found[name] = dist.version
    return dict(sorted(found.items()))


def driver_cuda_version() -> tuple[int, int] | None:
    """The CUDA version the installed driver supports (libcuda's cuDriverGetVersion), without CuPy."""
    import ctypes

    try:
        lib = ctypes.CDLL("libcuda.so.1")
        value = ctypes.c_int()
        if lib.cuDriverGetVersion(ctypes.byref(value)) != 0 or value.value <= 0:
            return None
    except (OSError, AttributeError):
        return None
    return value.value // 1000, (value.value % 1000) // 10


def cupy_fit(dists: dict[str, str], driver: tuple[int, int] | None) -> dict[str, Any]:
    """Which CuPy distribution fits the driver, and whether the installed ones do."""
    out: dict[str, Any] = {"driver_cuda": f"{driver[0]}.{driver[1]}" if driver else None, "fits": None, "extra": None, "problems": []}
    if driver is None:
        return out
    major = min(driver[0], max(CUPY_FOR_CUDA))
    out["fits"], out["extra"] = CUPY_FOR_CUDA.get(major), CUDA_EXTRA.get(major)
    if len(dists) > 1:
        out["problems"].append(f"{len(dists)} CuPy distributions installed ({', '.join(dists)}): they share the "
                               f"module 'cupy' and overwrite each other; keep only {out['fits']}")
    for name in dists:
        wants = next((m for m, d in CUPY_FOR_CUDA.items() if d == name), None)
        if wants is not None and wants > driver[0]:
            out["problems"].append(f"{name} needs a CUDA {wants} driver; this one supports CUDA {out['driver_cuda']}: "
                                   f"install {out['fits']} instead")
    return out


def recommend_extras(*, nvidia_gpu: bool, cupy: str | None, mlx_lm: str | None, platform_ok_for_mlx_lm: bool,
                     from_clone: bool, cluster: str | None = None, ray: str | None = None,
                     cuda_extra: str | None = None, torch_missing: bool = False, module_challenges: int = 0) -> list[dict[str, str]]:
    """The optional extras worth installing on this machine, each with why
    and the command. ``cluster``: the default cluster address configured here
    (engine/host/config.py), which needs Ray. ``cuda_extra``: the CuPy extra that
    fits this machine's driver (``cuda12``/``cuda13``), else ``cuda``. ``torch_missing``:
    PyTorch is not importable; ``module_challenges``: the workbench's kernel-deck
    challenges (a ``[module]`` table), which need it."""
    out = []
    if nvidia_gpu and not cupy:
        out.append({"extra": cuda_extra or "cuda",
                    "why": "an NVIDIA GPU is present but CuPy is not installed: CUDA answers would be skipped"})
    if platform_ok_for_mlx_lm and not mlx_lm:
        out.append({"extra": "ternary", "why": "mlx-lm is not installed: ternary_training answers importing mlx_lm get missing_dependency"})
    if torch_missing and (module_challenges or nvidia_gpu):
        why = (f"PyTorch is not installed: this workbench's {module_challenges} kernel-deck challenge(s) "
               "(KernelBench, KernelBench-Hard) would be skipped" if module_challenges
               else "PyTorch is not installed: kernel-deck challenges (KernelBench, KernelBench-Hard) would be skipped")
        out.append({"extra": "torch", "why": why})
    if cluster and not ray:
        out.append({"extra": "cluster", "why": f"runs default to the cluster {cluster!r} but Ray is not installed"})
    for r in out:
        r["command"] = install_command(r["extra"], from_clone)
    return out


def install_command(extra: str, from_clone: bool) -> str:
    """The command that installs ``extra`` into this benchtui (a clone's editable install, or the wheel's)."""
    return (f'python3 -m pip install -e ".[{extra}]"' if from_clone
            else install_beside(extra_packages(extra)) or f'python3 -m pip install "benchtui[{extra}]"')


def extra_packages(extra: str) -> list[str]:
    """The requirements the installed benchtui lists for ``extra`` (its metadata's
    Requires-Dist), without their markers: the doctor recommends an extra only where
    this platform takes it."""
    try:
        requires = md.requires("benchtui") or []
    except md.PackageNotFoundError:
        return []
    out = []
    for line in requires:
        requirement, _, marker = line.partition(";")
        if f'extra == "{extra}"' in marker.replace("'", '"'):
            out.append(requirement.strip())
    return out


def install_beside(packages: list[str]) -> str | None:
    """A command that adds ``packages`` to the environment benchtui is installed in,
    from an index: never ``benchtui[extra]``, which would fetch benchtui itself from
    the index (another version, or none) in place of the wheel installed."""
    if not packages:
        return None
    quoted = " ".join(f'"{p}"' for p in packages)
    return f"{shlex.quote(sys.executable)} -m pip install {quoted}  (pipx: pipx inject benchtui {quoted})"


def paths(workbench_arg: str | None, store_arg: str | None) -> dict[str, Any]:
    """Where benchtui reads its own files and where it writes."""
    out: dict[str, Any] = {"installed": resources.is_installed(), "engine": str(resources.ENGINE_DIR),
           "challenges": str(resources.bundled_challenges()), "demo": str(resources.bundled_demo_models()),
           "user_data": str(resources.user_data_dir())}
    try:
        wb = find_workbench(workbench_arg, os.environ.get("BENCHTUI_WORKBENCH"), Path.cwd(), store=store_arg)
        out.update(workbench=str(wb.root), store=str(wb.store_path), workbench_error=None)
    except WorkbenchError as exc:
        out.update(workbench=None, store=None, workbench_error=str(exc))
    return out


def gather(workbench_arg: str | None = None, store_arg: str | None = None) -> dict[str, Any]:
    backends = probe_all()
    report: dict[str, Any] = {
        "version": __version__,
        "python": {"version": platform.python_version(), "executable": sys.executable},
        "numpy": _version("numpy"),
        "textual": _version("textual"),  # metadata only: the engine never imports textual
        "sqlite": sqlite3.sqlite_version,
        "sqlite_utils": _version("sqlite-utils"),
        "git": _git_version(),
        "pytest": _version("pytest"),  # runs answers' own tests (their self-check)
        "cuda": {"cupy": None, "cupy_distributions": cupy_distributions(), "available": backends["cuda"].available,
                 "devices": backends["cuda"].device, "detail": backends["cuda"].detail, "nvcc": nvcc_version()},
        "mlx": {"version": _version("mlx"), "available": backends["mlx"].available, "device": backends["mlx"].device,
                "detail": backends["mlx"].detail},
        "sandbox": _sandbox(),
        "paths": paths(workbench_arg, store_arg),
        "cluster": {"ray": _version("ray"), "default": default_cluster()},  # run --cluster
        "torch": _version("torch"),  # kernel-deck challenges ([module]: engine/verify/module/suite.py)
        "judge": judge_models(),  # benchtui judge: the llm library and the models it can use here
    }
    report["module_challenges"] = module_challenges(report["paths"].get("workbench"))
    report["memory"] = answer_memory()
    # said on the torch line even where no extra is recommended (the lean install stays lean)
    report["torch_command"] = None if report["torch"] else install_command("torch", not resources.is_installed())
    dists = report["cuda"]["cupy_distributions"]
    report["cuda"]["cupy"] = ", ".join(f"{n} {v}" for n, v in dists.items()) or None
    report["cuda"]["fit"] = cupy_fit(dists, driver_cuda_version() if _nvidia_gpu() else None)
    report["extras"] = recommend_extras(
        nvidia_gpu=_nvidia_gpu(), cupy=report["cuda"]["cupy"], mlx_lm=_version("mlx-lm"),
        cuda_extra=report["cuda"]["fit"]["extra"],
        platform_ok_for_mlx_lm=sys.platform == "linux" or (sys.platform == "darwin" and platform.machine() == "arm64"),
        from_clone=not resources.is_installed(), cluster=report["cluster"]["default"], ray=report["cluster"]["ray"],
        torch_missing=report["torch"] is None, module_challenges=report["module_challenges"])
    return report


def answer_memory() -> dict[str, Any]:
    """The memory limits an answer's process runs under here (engine/runner/bundle.py)."""
    from benchtui.decks.challenge import LIMITS
    from benchtui.runner.bundle import ANSWER_OOM_SCORE_ADJ, machine_memory_mb

    machine = machine_memory_mb()
    deck = int(LIMITS["memory_mb"])
    return {"machine_mb": machine, "deck_limit_mb": deck, "deck_limit_in_force_mb": min(deck, machine or deck),
            "oom_score_adj": ANSWER_OOM_SCORE_ADJ}


def judge_models() -> dict[str, Any]:
    from benchtui.judge.calls import usable_models

    return usable_models()


def _judge_line(judge: dict[str, Any] | None) -> str:
    if not judge:
        return "-- judge    not checked"
    if not judge.get("llm"):
        return ("-- judge    llm not installed: `benchtui judge` needs it; "
                + install_command("judge", not resources.is_installed()))
    if judge.get("problem"):
        return f"-- judge    llm {judge['llm']}: its models could not be listed ({judge['problem']})"
    usable = [m["id"] for m in judge["models"] if m["usable"]]
    keys = sorted({m["needs_key"] for m in judge["models"] if not m["usable"] and m["needs_key"]})
    chosen = judge.get("configured") or judge.get("default")
    said = f"; default {chosen}" + ("" if chosen in usable else " (not usable here)")
    if not usable:
        return (f"-- judge    llm {judge['llm']}: no judge model usable, none has its key "
                f"(llm keys set {' / '.join(keys) or 'NAME'}, or a local model: llm install llm-ollama){said}")
    shown = ", ".join(usable[:6]) + (f" and {len(usable) - 6} more" if len(usable) > 6 else "")
    return f"ok judge    llm {judge['llm']}: usable: {shown}{said}" + (
        f"; without a key: {', '.join(keys)} (llm keys set NAME)" if keys else "")


def module_challenges(workbench: str | None) -> int:
    """How many of the workbench's challenges are kernel-deck problems (a [module] table)."""
    import tomllib

    if not workbench:
        return 0
    count = 0
    for toml in sorted((Path(workbench) / "challenges").glob("*/challenge.toml")):
        try:
            count += isinstance(tomllib.loads(toml.read_text(encoding="utf-8")).get("module"), dict)
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue
    return count


def _sandbox() -> dict[str, Any]:
    layers = sandbox.describe_layers()
    active = next((layer["name"] for layer in layers if layer.get("active")), None)
    return {"active": active, "layers": layers, "answer_sees": answer_sees(_nvidia_gpu())}


def answer_sees(gpu: bool) -> list[dict]:
    """What an answer's process sees of the filesystem under bwrap or unshare,
    besides its scratch copy, its adapter and the sandbox's own /tmp, /dev and
    /proc: the view engine/runner/bundle.py asks for (benchtui's engine bound,
    its other files hidden), one row per entry in mount order."""
    rows = []
    for b in sandbox.view(None, [resources.ENGINE_DIR], hide_paths=resources.install_folders(), gpu=gpu):
        if b.link is not None:
            rows.append({"path": str(b.path), "access": "link", "to": b.link, "why": "a link on the way to a bound path"})
        elif b.mask:
            rows.append({"path": str(b.path), "access": "hidden", "why": "benchtui's own files: an empty folder"})
        else:
            why = "benchtui's engine" if b.path == resources.ENGINE_DIR else b.why
            rows.append({"path": str(b.path), "access": "read-write" if b.writable else "read-only", "why": why})
    return rows


def _answer_sees_lines(rows: list[dict]) -> list[str]:
    mark = {"read-only": "ro", "read-write": "rw", "hidden": "--", "link": "->"}
    lines = ["   an answer's process sees only (bwrap, unshare; rlimits hides nothing): its scratch copy "
             "(read-write), a private /tmp holding $HOME, /dev basics, its own /proc, and:"]
    for r in rows:
        target = f" -> {r['to']}" if r["access"] == "link" else ""
        lines.append(f"     {mark[r['access']]} {r['path']}{target}: {r['why']}")
    return lines


def _fit_text(fit: dict[str, Any] | None) -> str:
    if not fit or not fit.get("driver_cuda"):
        return ""
    text = f"; the driver supports CUDA {fit['driver_cuda']}: {fit['fits']} fits"
    return text + "".join(f"\n   ! {p}" for p in fit["problems"])


def render(report: dict[str, Any]) -> str:
    cuda, mlx, sb = report["cuda"], report["mlx"], report["sandbox"]
    cluster = report.get("cluster") or {}  # Ray and the default cluster

    def ok(flag: object) -> str:
        return "ok " if flag else "-- "

    lines = [
        f"{ok(True)}python   {report['python']['version']} ({report['python']['executable']})",
        f"{ok(report['numpy'])}numpy    {report['numpy']}",
        f"{ok(report['textual'])}textual  {report['textual']}",
        f"{ok(True)}sqlite   {report['sqlite']} (sqlite-utils {report['sqlite_utils']})",
        f"{ok(report['git'])}git      {report['git'] or 'not found'}",
        f"{ok(report.get('pytest'))}pytest   " + (report.get("pytest") or "not installed: answers' own tests are not run "
                                                  "(self-check missing_dependency); python3 -m pip install pytest"),
        f"{ok(cuda['available'])}cuda     CuPy {cuda['cupy'] or 'not installed'}; "
        + (f"devices: {cuda['devices']}" if cuda["available"] else cuda["detail"]) + f"; nvcc {cuda['nvcc'] or 'not found'}"
        + _fit_text(cuda.get("fit")),
        f"{ok(mlx['available'])}mlx      {mlx['version'] or 'not installed'}; " + (mlx["device"] if mlx["available"] else mlx["detail"]),
        f"{ok(report.get('torch'))}torch    " + (report.get("torch") or "not installed: kernel-deck challenges "
                                                "(KernelBench, KernelBench-Hard) are skipped"
                                                + (f"; {report['torch_command']}" if report.get("torch_command") else ""))
        + (f"; {report['module_challenges']} in this workbench" if report.get("module_challenges") else ""),
        _judge_line(report.get("judge")),
        _memory_line(report.get("memory")),
        f"{ok(True)}cluster  Ray {cluster.get('ray') or 'not installed'}; default "
        + (repr(cluster["default"]) if cluster.get("default") else "none (runs stay on this machine)"),
        f"{ok(sb['active'])}sandbox  active layer: {sb['active'] or 'none (runs refused without --unsafe-no-isolation)'}",
    ]
    for layer in sb["layers"]:
        mark = "*" if layer.get("active") else " "
        net = "blocks network" if layer.get("blocks_network") else "network open"
        lines.append(f"   {mark} {layer['name']:<8} {'works' if layer['works'] else 'unavailable'}, {net}: {layer.get('detail', '')}")
    lines += _answer_sees_lines(sb.get("answer_sees") or [])
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


def _memory_line(memory: dict[str, Any] | None) -> str:
    if not memory:
        return "-- memory   unknown"
    machine = memory.get("machine_mb")
    if machine is None:
        return ("-- memory   this machine does not say how much it has: an answer's address-space limit is its "
                f"challenge's memory_mb; its processes' oom_score_adj {memory['oom_score_adj']}")
    return (f"ok memory   {machine} MiB here: an answer's address-space limit is its challenge's memory_mb, at most that "
            f"(the decks' {memory['deck_limit_mb']} MiB: {memory['deck_limit_in_force_mb']} MiB in force; none on a GPU); "
            f"its processes' oom_score_adj {memory['oom_score_adj']}, the OOM killer's first choice")
