"""Long commands show a progress bar saying what they do on a terminal (stderr
a pseudo-terminal here), and nothing under --json: stdout stays the JSON,
stderr stays empty. `challenge check`, which can run for many minutes, is the
exception: it says each check as it ends on stderr even under --json, so a
script's stdout is still the JSON alone."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from terminal_run import on_a_terminal

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def big_demo(demo_workbench) -> Path:
    """The demo with a few more models, so a scan has several steps to show."""
    for i in range(4):
        shutil.copytree(demo_workbench / "models" / "demo-careful", demo_workbench / "models" / f"copy-{i}")
    return demo_workbench


def test_scan_shows_its_progress_on_a_terminal_and_nothing_under_json(big_demo):
    code, out, term = on_a_terminal(["--workbench", str(big_demo), "scan"])
    assert code == 0, term
    assert "scanning: model" in term and "/7" in term, term[-300:]  # what it does, and how far of the 7 models
    assert "7 models" in out and "scanning" not in out  # the report on stdout, the bar on the terminal only
    code, out, term = on_a_terminal(["--workbench", str(big_demo), "scan", "--json"])
    assert code == 0 and term == "", term
    assert json.loads(out)["models"] == 7


def test_challenge_check_shows_its_progress(tmp_path):
    root = tmp_path / "wb"
    shutil.copytree(REPO / "challenges" / "backwards", root / "challenges" / "backwards")
    (root / "models").mkdir()
    code, out, term = on_a_terminal(["--workbench", str(root), "challenge", "check", "backwards", "--mutants", "0",
                                     "--seeds", "2"])
    assert "[check backwards] the reference's checks, seed 1" in term, term[-300:]
    assert "[check backwards] seed 2: forward: pass" in term, term[-300:]
    assert "[check backwards]" not in out and "reference_passes" in out
    code, out, term = on_a_terminal(["--workbench", str(root), "challenge", "check", "backwards", "--mutants", "0",
                                     "--seeds", "1", "--json"])
    assert "[check backwards] seed 1: forward: pass" in term, term[-300:]
    assert json.loads(out)["challenge"] == "backwards"
