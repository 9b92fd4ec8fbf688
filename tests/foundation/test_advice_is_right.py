"""Advice that is right where it is given: the workbench found as git finds its
repository (from inside a sub-folder, the one above; from the folder above, the
one below named), and `model new` handing the new model the prompt most of the
workbench's answers carry, saying so."""
from __future__ import annotations

from pathlib import Path

import pytest
from benchtui.cli import main
from benchtui.workbench.layout import WorkbenchError, find_workbench


def test_the_workbench_is_found_from_inside_it_and_named_from_above(demo_workbench, tmp_path, capsys, monkeypatch):
    inside = demo_workbench / "models" / "demo-careful" / "kv"
    for cwd in (inside, inside.parent, demo_workbench / "models"):
        assert find_workbench(None, None, cwd).root == demo_workbench.resolve(), cwd
    monkeypatch.chdir(inside)
    assert main(["list"]) == 0
    assert "demo-careful" in capsys.readouterr().out
    # named on the command line, a sub-folder is an error that names the workbench it is in
    with pytest.raises(WorkbenchError, match=f"inside the workbench {demo_workbench.resolve()}"):
        find_workbench(str(inside), None, Path("/"))
    # from the folder above, the workbench below is named (never "run model new there")
    with pytest.raises(WorkbenchError) as got:
        find_workbench(None, None, demo_workbench.parent)
    said = str(got.value)
    assert "demo below it is one: `cd demo`" in said and "model new" not in said


def test_model_new_gives_the_prompt_most_answers_carry(demo_workbench, capsys):
    answers = sorted(demo_workbench.glob("models/*/kv"))
    own = "Write a KV cache for our own harness.\n"
    for folder in answers[:2]:
        (folder / "PROMPT.md").write_text(own)
    assert main(["--workbench", str(demo_workbench), "model", "new", "newbie"]) == 0
    out = capsys.readouterr().out
    assert f"kv (2 of {len(answers)} answers)" in out and "the prompt most of the workbench's answers carry" in out
    assert (demo_workbench / "models/newbie/kv/PROMPT.md").read_text() == own
    # only the challenges the workbench's models answered: none no other model has
    have = {p.name for p in (demo_workbench / "models/demo-careful").iterdir() if p.is_dir()}
    assert {p.name for p in (demo_workbench / "models/newbie").iterdir()} <= have | {
        p.name for m in ("demo-hasty", "demo-quitter") for p in (demo_workbench / "models" / m).iterdir() if p.is_dir()}


def test_the_authoring_guide_lists_every_bundled_challenge():
    repo = Path(__file__).resolve().parents[2]
    guide = (repo / "docs" / "authoring.md").read_text()
    bundled = sorted(p.parent.name for p in (repo / "challenges").glob("*/challenge.toml"))
    assert [c for c in bundled if f"| `{c}` |" not in guide] == []


def test_demo_on_ones_own_workbench_and_import_of_a_file_say_what_they_are(demo_workbench, tmp_path, capsys):
    own = tmp_path / "mine"
    (own / "models" / "my-model" / "kv").mkdir(parents=True)
    assert main(["demo", str(own), "--no-open"]) == 1
    err = capsys.readouterr().err
    assert "is a workbench of your own (models: my-model), not the demo: nothing was copied" in err
    assert sorted(p.name for p in (own / "models").iterdir()) == ["my-model"]
    text = tmp_path / "afile.txt"
    text.write_text("hello\n")
    assert main(["--workbench", str(demo_workbench), "import", str(text)]) == 2
    assert "is a file: `benchtui import` takes a deck's folder" in capsys.readouterr().err
