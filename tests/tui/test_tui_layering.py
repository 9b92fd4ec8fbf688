"""engine/ (the benchtui package less benchtui.tui) must never import textual: import every engine module in a fresh interpreter."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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


def test_engine_never_imports_textual():
    out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    count, bad = out.stdout.strip().split("\n") + [""] * (2 - len(out.stdout.strip().split("\n")))
    assert int(count) >= 10  # really walked the package (queries, grades, scan, runner...)
    assert bad == "", f"engine imported: {bad}"


def test_the_check_catches_a_textual_import():
    # The same probe must notice textual when something does import it.
    probe = SCRIPT + "\nimport textual\nprint('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.stdout.strip().endswith("True")
