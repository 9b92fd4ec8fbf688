"""Every bench/ script runs in its quick mode and prints its figures, so a
change that breaks one is seen the day it lands. Only that: small sizes and
no timing goal asserted (speed goals are the scripts' own business, run by
hand on a quiet machine; docs/performance.md)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench"


def _has_gpu() -> bool:
    return shutil.which("nvidia-smi") is not None and subprocess.run(
        ["nvidia-smi", "-L"], capture_output=True, check=False).returncode == 0


def _has_ray() -> bool:
    import importlib.util

    return importlib.util.find_spec("ray") is not None


# What a script needs that a machine may lack, checked at collection; the
# reason is printed with the skip. Every other script runs here.
NEEDS = {
    "gpu_check.py": (_has_gpu, "needs an NVIDIA GPU"),
    "deck_gpu_check.py": (_has_gpu, "needs an NVIDIA GPU"),
    "cluster.py": (_has_ray, "needs the cluster extra (ray)"),
    "install_size.py": (lambda: os.environ.get("BENCHTUI_NETWORK_TESTS") == "1",
                        "downloads from the package index (set BENCHTUI_NETWORK_TESTS=1)"),
}
# Scripts that start sandboxed children (runs of a demo answer).
SANDBOXED = {"audit.py", "published.py", "stability.py", "engine.py", "timing_resolution.py", "cluster.py",
             "gpu_check.py", "deck_gpu_check.py"}
# Prints text by design (a trace, chunk by chunk), not JSON.
TEXT = {"tui_trace.py"}

SCRIPTS = sorted(p.name for p in BENCH.glob("*.py"))


def _param(name: str):
    marks = [pytest.mark.sandbox] if name in SANDBOXED else []
    if name in NEEDS:
        ok, why = NEEDS[name]
        marks.append(pytest.mark.skipif(not ok(), reason=why))
    if name.startswith("gpu") or name.startswith("deck_gpu"):
        marks.append(pytest.mark.gpu)
    if name == "cluster.py":
        marks.append(pytest.mark.cluster)
    return pytest.param(name, marks=marks, id=name)


def _json_document(stdout: str):
    """The script's JSON: its whole stdout, else its last top-level document
    (some print progress lines first)."""
    try:
        return json.loads(stdout)
    except json.JSONDecodeError:
        start = stdout.rfind("\n{")
        return json.loads(stdout[start + 1:] if start >= 0 else stdout)


def _errors(doc, where: str = "") -> list[str]:
    """Every "error" a stage reported (bench/scale.py keeps going past a failed stage)."""
    found = []
    if isinstance(doc, dict):
        for key, value in doc.items():
            if key == "error" and value:
                found.append(f"{where or '.'}: {str(value)[:400]}")
            else:
                found += _errors(value, f"{where}.{key}")
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            found += _errors(value, f"{where}[{i}]")
    return found


@pytest.mark.parametrize("script", [_param(s) for s in SCRIPTS])
def test_bench_script_quick_mode_prints_its_figures(script, tmp_path):
    bindir = str(Path(sys.executable).parent)  # `benchtui` and `python3` as a person's PATH has them
    env = {**os.environ, "PATH": bindir + os.pathsep + os.environ.get("PATH", ""),
           "BENCHTUI_CONFIG": str(tmp_path / "no-keys.toml"), "PYTHONPATH": str(REPO)}
    env.pop("BENCHTUI_WORKBENCH", None)
    out = subprocess.run([sys.executable, str(BENCH / script), "--quick"], capture_output=True, text=True,
                         env=env, cwd=tmp_path, timeout=600, check=False)
    assert out.returncode == 0, f"{script} --quick exited {out.returncode}:\n{out.stderr[-3000:]}"
    if script in TEXT:
        assert "cpu" in out.stdout and "chunks" in out.stdout, out.stdout[-2000:]
        return
    doc = _json_document(out.stdout)
    assert doc, f"{script} --quick printed an empty document"
    assert not _errors(doc), f"{script} --quick reported errors: {_errors(doc)}"


def test_every_bench_script_has_a_quick_mode():
    """A new script without one would fail above with an argparse error; said here by name."""
    missing = [s for s in SCRIPTS if "--quick" not in (BENCH / s).read_text(encoding="utf-8")]
    assert not missing, f"bench scripts without --quick: {missing}"
