"""bench/stability.py restricted to some challenges: only their answers run,
and the JSON says so."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engine.runner import sandbox

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.sandbox


def test_stability_runs_only_the_challenges_named(tmp_path):
    try:
        sandbox.choose_layer("auto")
    except sandbox.SandboxUnavailable as exc:
        pytest.skip(str(exc))
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
