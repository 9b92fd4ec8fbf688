"""mypy finds no error beyond the counted baseline (.ci/typecheck.py, settings
in pyproject.toml's [tool.mypy]), and the baseline only shrinks."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CHECK = REPO / ".ci" / "typecheck.py"


def typecheck(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(CHECK), *map(str, args)], cwd=REPO, capture_output=True, text=True,
                          timeout=300)


def test_type_check_holds_to_its_shrinking_baseline(tmp_path):
    if importlib.util.find_spec("mypy") is None:
        if os.environ.get("CI"):  # CI installs the test extra: a skip there would hide the check
            pytest.fail("mypy is not installed, and CI installs it with the [test] extra")
        pytest.skip("mypy is not installed (it comes with the [test] extra)")
    cache = tmp_path / "cache"
    got = typecheck("--cache-dir", cache)
    assert got.returncode == 0, got.stdout[-4000:] + got.stderr[-2000:]

    # One error fewer allowed in one file: the same tree now fails, naming that file and code.
    baseline = json.loads((REPO / ".ci" / "mypy-baseline.json").read_text())
    path, codes = next(iter(baseline.items()))
    code = next(iter(codes))
    codes[code] -= 1
    tighter = tmp_path / "tighter.json"
    tighter.write_text(json.dumps(baseline))
    got = typecheck("--cache-dir", cache, "--baseline", tighter)
    assert got.returncode == 1, got.stdout[-4000:] + got.stderr[-2000:]
    assert f"{path}: {codes[code] + 1} [{code}] errors, the baseline allows {codes[code]}" in got.stdout

    # --update never raises a count on its own.
    before = tighter.read_text()
    got = typecheck("--cache-dir", cache, "--baseline", tighter, "--update")
    assert got.returncode == 1 and "not updated" in got.stdout, got.stdout[-4000:]
    assert tighter.read_text() == before
