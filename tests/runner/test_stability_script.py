"""bench/stability.py restricted to some challenges: only their answers run,
and the JSON says so."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.sandbox


def test_stability_runs_only_the_challenges_named(tmp_path):
    source = tmp_path / "bench"
    for cid in ("backwards", "dflash_verify"):
        shutil.copytree(REPO / "models" / "demo-careful" / cid, source / "careful" / cid)
    out = subprocess.run([sys.executable, str(REPO / "bench" / "stability.py"), "--source", str(source),
                          "--runs", "2", "-c", "backwards"], capture_output=True, text=True, check=False, cwd=REPO)
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout)
    assert "-c backwards" in report["what"]
    assert set(report["verdicts"]) == {"careful/backwards"}
    assert report["stable"] and report["verdicts"]["careful/backwards"]["verdict"] == "pass"
    assert len(report["wall_s"]) == 2


def test_margins_count_a_floor_upwards():
    """A check that passes above its threshold (a floor) has a positive margin
    when it passes, in decades; a ceiling keeps threshold - value."""
    import importlib.util
    import math
    spec = importlib.util.spec_from_file_location("stability", REPO / "bench" / "stability.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)

    def run(value, verdict, name):
        return {"model": "m", "challenge": "c", "checks": [{"name": name, "value": value, "threshold": 1e-5,
                                                             "verdict": verdict}]}
    table = mod.margins([[run(3e-5, "pass", "floor"), run(5e-6, "pass", "ceiling")],
                         [run(2e-5, "pass", "floor"), run(6e-6, "pass", "ceiling")]])
    by = {m["check"]: m for m in table}
    assert by["floor"]["direction"] == "at_least" and by["floor"]["scale"] == "log10"
    assert by["floor"]["margin"] == pytest.approx(math.log10(2.0), abs=1e-4)  # the lowest value, 2x the floor
    assert by["floor"]["noise"] == pytest.approx(math.log10(1.5), abs=1e-4)
    assert by["ceiling"]["direction"] == "at_most" and by["ceiling"]["margin"] == pytest.approx(0.4)
    assert not by["floor"]["within_noise"] and not by["ceiling"]["within_noise"]
