"""A long `challenge check` says what it is doing as it goes: a line per check on
stderr, on a terminal and under --json, whose stdout stays the report alone."""
from __future__ import annotations

import json
import sys

import deck_kit as K
import pytest
from benchtui.cli import main
from benchtui.decks import kernelbench_hard
from benchtui.decks.importer import import_deck
from test_edge_inputs import relu_wb  # noqa: F401  (the fixture: a ReLU deck, hand-built and published)

torch = pytest.importorskip("torch")


def check(capsys, root, challenge, *extra) -> tuple[int, str, str]:
    try:
        code = main(["--workbench", str(root), "challenge", "check", challenge, "--seeds", "1", "--mutants", "0",
                     *extra])
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def hard_wb(tmp_path, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    root = tmp_path / "wb"
    import_deck(kernelbench_hard.read_deck(K.hard_deck(tmp_path / "deck"), "h100"), root)
    return root


def test_under_json_stdout_is_the_report_and_each_check_is_a_line_on_stderr(hard_wb, capsys):
    code, out, err = check(capsys, hard_wb, "kbh_01_tiny_double", "--json")
    report = json.loads(out)  # nothing but the report
    assert report["challenge"] == "kbh_01_tiny_double" and code == 0
    said = [ln for ln in err.splitlines() if ln.startswith("[check kbh_01_tiny_double] seed 1: ")]
    assert "[check kbh_01_tiny_double] seed 1: deck_seeds:shape0: pass" in err
    # every check the report's items name is a line of its own, in the order they ran
    named = report["items"][2]["details"]["checks"]
    assert all(any(ln.split(": ")[1] == name for ln in said) for name in named), (named, err)


def test_on_a_terminal_each_check_is_a_line(relu_wb, capsys, monkeypatch):  # noqa: F811
    root, challenge = relu_wb
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    code, out, err = check(capsys, root, challenge)
    assert code == 0 and out.splitlines()[0].startswith(challenge)
    assert f"[check {challenge}] seed 1: wider_inputs:shape0: pass" in err, err
    assert f"[check {challenge}] seed 1: deck_seeds:shape0: pass" in err


def test_into_a_pipe_without_json_stderr_stays_quiet(hard_wb, capsys, monkeypatch):
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    code, out, err = check(capsys, hard_wb, "kbh_01_tiny_double")
    assert code == 0 and "[check" not in err
