"""bench/gpu_day.py, the one command to run first on a borrowed GPU machine: rehearsed here on the
CPU, so that on the day no step fails for want of a file, a flag or a budget."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "bench" / "gpu_day.py"
GPU_STEPS = ["forged_figures", "module_gpu_tests", "deck_references", "cuda_harness_tests", "deck_answers", "fuse"]


def test_the_rehearsal_walks_every_step_within_the_budget():
    out = subprocess.run([sys.executable, str(SCRIPT), "--rehearse", "--quick", "--budget", "200"],
                         capture_output=True, text=True, timeout=300, check=False, cwd=REPO)
    doc = json.loads(out.stdout)
    assert out.returncode == 0 and doc["ok"], out.stdout[-3000:] + out.stderr[-2000:]
    steps = {s["name"]: s for s in doc["steps"]}
    assert list(steps) == ["machine", "carried", *GPU_STEPS]
    assert steps["carried"]["figures"]["missing"] == {}
    for name in GPU_STEPS:  # each GPU step's stand-in ran; the step itself did not
        assert steps[name]["status"] == "rehearsed" and "not run" in steps[name]["why"], steps[name]
    # in order of value: the first gets its estimate, the second what is left, the rest are trimmed away
    assert steps["forged_figures"]["budget_s"] == 150 and steps["module_gpu_tests"]["budget_s"] == 50
    assert "trimmed" in steps["module_gpu_tests"]["budget_note"]
    for name in GPU_STEPS[2:]:
        assert steps[name]["budget_s"] is None and "needs" in steps[name]["budget_note"], steps[name]
    assert doc["plan_s"] <= 200


def test_a_file_not_carried_fails_the_rehearsal_by_name(monkeypatch, capsys, tmp_path):
    spec = importlib.util.spec_from_file_location("gpu_day", SCRIPT)
    day = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "gpu_day", day)  # its dataclass looks its module up
    spec.loader.exec_module(day)
    gone = tmp_path / "kernelbench-hard" / "benchmarks" / "hard" / "problems-h100"
    monkeypatch.setitem(day.NEEDED, "deck_references", [gone])
    monkeypatch.setattr(sys, "argv", ["gpu_day.py", "--rehearse", "--quick", "--budget", "480"])
    assert day.main() == 1
    doc = json.loads(capsys.readouterr().out)
    steps = {s["name"]: s for s in doc["steps"]}
    assert str(gone) in steps["carried"]["error"] and not doc["ok"]
    assert steps["deck_references"]["status"] == "skipped" and str(gone) in steps["deck_references"]["why"]
