"""The code stays free of unused imports, undefined names and syntax errors
(ruff's pyflakes rules; configuration in pyproject.toml)."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def test_ruff_finds_nothing():
    if shutil.which("ruff") is None:
        pytest.skip("ruff is not installed (it comes with the [test] extra)")
    out = subprocess.run([sys.executable, "-m", "ruff", "check", "engine", "tui", "bench", "tests", "challenges"],
                         cwd=REPO, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-3000:]
