"""engine/ (the benchtui package less benchtui.tui) must never import textual: import every engine module in a fresh interpreter."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

SCRIPT = r"""
import importlib, pkgutil, sys
import benchtui
names = []
for info in pkgutil.walk_packages(benchtui.__path__, "benchtui."):
    if info.name == "benchtui.tui" or info.name.startswith("benchtui.tui."):
        continue  # the dashboard: the one part of the package that imports textual
    names.append(info.name)
    importlib.import_module(info.name)
bad = sorted(m for m in sys.modules if m == "textual" or m.startswith("textual.") or m.startswith("benchtui.tui"))
print(len(names))
print(",".join(bad))
"""


@pytest.fixture(scope="module")
def probe_lines() -> list[str]:
    """One fresh interpreter for both tests: the probe's two lines, then whether the
    same probe sees textual once something does import it."""
    probe = SCRIPT + "\nimport textual\nprint('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.split("\n")


def test_engine_never_imports_textual(probe_lines):
    count, bad = probe_lines[:2]
    assert int(count) >= 10  # really walked the package (queries, grades, scan, runner...)
    assert bad == "", f"engine imported: {bad}"


def test_the_check_catches_a_textual_import(probe_lines):
    # The same probe must notice textual when something does import it.
    assert probe_lines[2] == "True", probe_lines
