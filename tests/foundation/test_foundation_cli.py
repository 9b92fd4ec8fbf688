"""The command line: every --json shape, exit codes, new-model."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from benchtui.cli import main


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse usage errors
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def small_wb(tmp_path) -> Path:
    base = tmp_path / "models"
    (base / "alpha" / "backwards").mkdir(parents=True)
    (base / "alpha" / "backwards" / "ln.py").write_text("def forward(x, gamma, beta, eps):\n    return x, None\n")
    (base / "alpha" / "backwards" / "PROMPT.md").write_text("prompt\n")
    (base / "beta" / "kv").mkdir(parents=True)
    (base / "beta" / "kv" / "PROMPT.md").write_text("prompt\n")
    return tmp_path


def test_scan_json_shape(capsys, small_wb):
    code, out, _ = run_cli(capsys, "--workbench", str(small_wb), "scan", "--json")
    data = json.loads(out)
    assert code == 0
    assert (data["models"], data["answers"], data["files"], data["transcripts"]) == (2, 2, 3, 0)
    assert data["warnings"] == []
    assert data["info"] == [{"kind": "waiting", "model": "beta", "challenge": "kv", "path": "beta/kv",
                             "detail": "waiting for an answer: the folder holds only its PROMPT.md"}]


def test_list_json_shape(capsys, small_wb):
    code, out, _ = run_cli(capsys, "--workbench", str(small_wb), "list", "--json")
    data = json.loads(out)
    assert code == 0
    assert data["models"] == ["alpha", "beta"]
    # the challenges a model has a folder for; the bundled others only with --all-challenges
    assert data["challenges"] == ["backwards", "kv"]
    code, out, _ = run_cli(capsys, "--workbench", str(small_wb), "list", "--all-challenges", "--json")
    every = json.loads(out)["challenges"]
    # the eight published challenges, then the bundled paged_attention (order 10)
    assert every[:3] == ["backwards", "fuse", "kv"] and len(every) == 9 and every[-1] == "paged_attention"
    code, out, _ = run_cli(capsys, "--workbench", str(small_wb), "list")
    assert out.splitlines()[-1] == "(7 bundled challenges no model has a folder for left out: --all-challenges lists them)"
    assert data["answers"] == [
        {"model": "alpha", "challenge": "backwards", "status": "answer", "flags": [], "files": 2, "transcripts": 0},
        # in the scan's words: a folder holding only its PROMPT.md is waiting for an answer
        {"model": "beta", "challenge": "kv", "status": "waiting", "flags": [], "files": 1, "transcripts": 0}]


def test_show_json_and_display_names(capsys, small_wb):
    code, out, _ = run_cli(capsys, "--workbench", str(small_wb), "show", "alpha", "Layer Norm Backward", "--json")
    data = json.loads(out)
    assert code == 0 and data["challenge"] == "backwards" and data["latest_run"] is None
    assert [f["relpath"] for f in data["files"]] == ["ln.py", "PROMPT.md"] or {f["relpath"] for f in data["files"]} == {"ln.py", "PROMPT.md"}


def test_bad_usage_exits_2_with_one_line(capsys, small_wb):
    code, _, err = run_cli(capsys, "--workbench", str(small_wb), "show", "nobody", "kv")
    assert code == 2 and err.count("\n") == 1 and "unknown model 'nobody'" in err
    code, _, err = run_cli(capsys, "--workbench", str(small_wb), "show", "alpha", "no-such-task")
    assert code == 2 and "unknown challenge" in err
    code, _, err = run_cli(capsys, "--workbench", str(small_wb), "frobnicate")
    assert code == 2 and err.count("\n") == 1
    code, _, err = run_cli(capsys, "--workbench", str(small_wb / "nope"), "list")
    assert code == 2 and "does not exist" in err


def test_new_model_scaffolds_and_refuses_overwrite(capsys, tmp_path):
    code, out, _ = run_cli(capsys, "--workbench", str(tmp_path), "new-model", "gpt-x")
    assert code == 0
    folders = sorted(p.name for p in (tmp_path / "models" / "gpt-x").iterdir())
    assert len(folders) == 9 and "ternary_training" in folders and "paged_attention" in folders
    assert (tmp_path / "models" / "gpt-x" / "kv" / "PROMPT.md").read_text().strip()
    data = tmp_path / "models" / "gpt-x" / "ternary_training" / "train_data.txt"
    assert data.is_file() and data.stat().st_size > 200_000
    code, _, err = run_cli(capsys, "--workbench", str(tmp_path), "new-model", "gpt-x")
    assert code == 1 and "refusing to overwrite" in err
    code, _, err = run_cli(capsys, "--workbench", str(tmp_path), "new-model", "../evil")
    assert code == 2 and "bad model name" in err  # a usage error, as the README's exit codes say
    code, out, _ = run_cli(capsys, "--workbench", str(tmp_path), "list", "--json")
    assert all(a["status"] == "waiting" for a in json.loads(out)["answers"])


def test_doctor_json(capsys):
    code, out, _ = run_cli(capsys, "doctor", "--json")
    data = json.loads(out)
    assert code == 0
    assert data["python"]["version"].startswith("3.")
    assert data["cuda"]["available"] in (True, False) and "nvcc" in data["cuda"]
    assert data["mlx"]["available"] in (True, False)
    names = [layer["name"] for layer in data["sandbox"]["layers"]]
    assert names == ["bwrap", "unshare", "rlimits"]
    if any(layer["works"] for layer in data["sandbox"]["layers"]):
        assert data["sandbox"]["active"] in names


def test_console_script_entry_point_runs():
    out = subprocess.run([sys.executable, "-m", "benchtui", "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "benchtui" in out.stdout


def test_outside_a_workbench_the_demo_is_named(capsys, tmp_path, monkeypatch):
    """`benchtui demo` puts the demo in the user data folder; a command run elsewhere
    says where it is (or, before there is one, that `benchtui demo` makes one)."""
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.chdir(empty)
    monkeypatch.delenv("BENCHTUI_WORKBENCH", raising=False)
    monkeypatch.setenv("BENCHTUI_DATA_DIR", str(tmp_path / "data"))
    code, _, err = run_cli(capsys, "results")
    assert code == 2 and "`benchtui demo` for a worked example" in err and err.count("\n") == 1
    code, out, _ = run_cli(capsys, "demo", "--no-open")
    demo = tmp_path / "data" / "demo"
    assert code == 0 and f"cd {demo} && benchtui results" in out and "grades import models/JUDGES.md" in out
    code, _, err = run_cli(capsys, "results")
    assert code == 2 and f"use the demo workbench at {demo}" in err


def test_without_a_terminal_the_dashboard_says_so_and_the_demo_is_still_copied(capsys, tmp_path):
    """Drawn into a pipe the dashboard would write escape codes there and wait for keys
    forever (a script's `benchtui demo DIR`, a `benchtui | tee`): one line instead."""
    code, out, _ = run_cli(capsys, "demo", str(tmp_path / "demo"))  # capsys's stdout is no terminal
    assert code == 0 and (tmp_path / "demo" / "models").is_dir()
    assert "not opening the dashboard: " in out and "standard output is" in out
    code, _, err = run_cli(capsys, "--workbench", str(tmp_path / "demo"))
    assert code == 1 and "the dashboard needs a terminal" in err and err.count("\n") == 1


def test_demo_on_a_file_says_it_is_a_file(capsys, tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("")
    code, _, err = run_cli(capsys, "demo", str(afile), "--no-open")
    assert code == 2 and "is a file, not a folder" in err and "not empty" not in err


@pytest.mark.sandbox
def test_results_and_list_say_waiting_as_scan_does(capsys, small_wb):
    """beta/kv holds only its PROMPT.md: scan calls it `waiting`, and so do list and results; run leaves it alone."""
    wb = ("--workbench", str(small_wb))
    code, out, _ = run_cli(capsys, *wb, "results")
    assert code == 0 and "waiting        beta/kv" in out
    code, _, err = run_cli(capsys, *wb, "run", "-m", "beta", "-c", "kv")
    assert code == 2 and "waiting for an answer, not run: beta/kv" in err  # no run recorded for it
    code, out, _ = run_cli(capsys, *wb, "results")
    assert "waiting        beta/kv" in out and "run #" not in out and "no_answer" not in out
    code, out, _ = run_cli(capsys, *wb, "list")
    assert "waiting" in out and "no_answer" not in out
