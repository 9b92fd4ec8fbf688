"""mypy finds no error beyond the counted baseline (.ci/typecheck.py, settings
in pyproject.toml's [tool.mypy]), and the baseline only shrinks."""
from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CHECK = REPO / ".ci" / "typecheck.py"


def load_check():
    """The script as a module: its baseline logic runs here, mypy in its own process."""
    spec = importlib.util.spec_from_file_location("ci_typecheck", CHECK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_type_check_holds_to_its_shrinking_baseline(tmp_path, monkeypatch, capsys, request):
    if importlib.util.find_spec("mypy") is None:
        if os.environ.get("CI"):  # CI installs the test extra: a skip there would hide the check
            pytest.fail("mypy is not installed, and CI installs it with the [test] extra")
        pytest.skip("mypy is not installed (it comes with the [test] extra)")
    check = load_check()
    # mypy reads the same tree three times below: its errors are the same each time,
    # so it runs once (a whole-package run is the dearest part of the check).
    real_run, seen = check.run_mypy, {}

    def run_once(cache):
        if cache not in seen:
            seen[cache] = real_run(cache)
        return seen[cache]

    monkeypatch.setattr(check, "run_mypy", run_once)
    # mypy's own cache, kept between runs of the suite in pytest's cache folder: a cold
    # run reads NumPy's and Textual's stubs whole, a warm one only what changed
    pytest_cache = getattr(request.config, "cache", None)  # None under -p no:cacheprovider
    cache = pytest_cache.mkdir("typecheck") if pytest_cache else tmp_path / "cache"
    code = check.main(["--cache-dir", str(cache)])
    out = capsys.readouterr().out
    assert code == 0, out[-4000:]

    # One error fewer allowed in one file: the same tree now fails, naming that file and code.
    baseline = json.loads((REPO / ".ci" / "mypy-baseline.json").read_text())
    path, codes = next(iter(baseline.items()))
    code = next(iter(codes))
    codes[code] -= 1
    tighter = tmp_path / "tighter.json"
    tighter.write_text(json.dumps(baseline))
    got = check.main(["--cache-dir", str(cache), "--baseline", str(tighter)])
    out = capsys.readouterr().out
    assert got == 1, out[-4000:]
    assert f"{path}: {codes[code] + 1} [{code}] errors, the baseline allows {codes[code]}" in out

    # --update never raises a count on its own.
    before = tighter.read_text()
    got = check.main(["--cache-dir", str(cache), "--baseline", str(tighter), "--update"])
    out = capsys.readouterr().out
    assert got == 1 and "not updated" in out, out[-4000:]
    assert tighter.read_text() == before
    assert len(seen) == 1
