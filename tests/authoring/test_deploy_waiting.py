"""A model folder deploy handed a challenge to, still waiting for its answer,
is information ("waiting for an answer"), not a no_answer warning; a folder
whose model left a transcript but no answer still is one."""
from __future__ import annotations

import json
from pathlib import Path

from benchtui.cli import main
from benchtui.store import queries
from benchtui.store.database import Store


def test_deployed_folders_wait_for_their_answer_without_a_warning(tmp_path, capsys):
    root = tmp_path / "wb"
    for model in ("alpha", "beta", "gamma"):
        (root / "models" / model / "kv").mkdir(parents=True)
        (root / "models" / model / "kv" / "cache.py").write_text(f"x = {model!r}\n")
    assert main(["--workbench", str(root), "deploy", "ternary_training"]) == 0
    assert main(["--workbench", str(root), "deploy", "backwards", "-m", "alpha", "-m", "beta"]) == 0
    # beta's model stopped after a session and wrote nothing
    (root / "models" / "beta" / "backwards" / "session.jsonl").write_text(
        (Path(__file__).parents[1] / "transcripts" / "samples" / "pi_v1.jsonl").read_text())
    capsys.readouterr()
    assert main(["--workbench", str(root), "scan", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [(w["kind"], w["path"]) for w in data["warnings"]] == [("no_answer", "beta/backwards")]
    waiting = sorted((w["path"], w["detail"]) for w in data["info"] if w["kind"] == "waiting")
    assert waiting == [("alpha/backwards", "waiting for an answer: the folder holds only its PROMPT.md"),
                       ("alpha/ternary_training", "waiting for an answer: the folder holds only its PROMPT.md "
                                                  "(and the challenge's data files)"),
                       ("beta/ternary_training", "waiting for an answer: the folder holds only its PROMPT.md "
                                                 "(and the challenge's data files)"),
                       ("gamma/ternary_training", "waiting for an answer: the folder holds only its PROMPT.md "
                                                  "(and the challenge's data files)")]
    with Store(root / "store.db") as store:
        assert store.query("select warnings from scans order by id desc limit 1")[0]["warnings"] == 1
        matrix = queries.load_matrix(store)
        cell = matrix.cell("gamma", "ternary_training")
        assert cell.status == "no_answer" and cell.warnings == 0  # still not an answer: nothing to run
        assert matrix.cell("beta", "backwards").warnings == 1
    assert main(["--workbench", str(root), "scan"]) == 0
    out = capsys.readouterr().out
    assert "info waiting    models/gamma/ternary_training" not in out  # paths as the scan names them
    assert "gamma/ternary_training: waiting for an answer" in out
    assert main(["--workbench", str(root), "show", "gamma", "ternary_training"]) == 0
    assert "info waiting: waiting for an answer" in capsys.readouterr().out


def test_run_leaves_a_waiting_folder_alone_and_every_view_says_waiting(tmp_path, capsys):
    """`run` records no run for a folder deploy handed a challenge to (it says it is
    waiting); a folder whose model left only a transcript is run, and stays no_answer.
    An older run of a waiting folder reads `waiting` in `results`, its JSON and the Runs screen."""
    import json

    from benchtui.store import queries
    from benchtui.store.database import Store

    root = tmp_path / "wb"
    (root / "models" / "alpha" / "kv").mkdir(parents=True)
    (root / "models" / "alpha" / "kv" / "cache.py").write_text("x = 1\n")
    assert main(["--workbench", str(root), "deploy", "backwards"]) == 0
    (root / "models" / "beta" / "backwards").mkdir(parents=True)
    (root / "models" / "beta" / "backwards" / "session.jsonl").write_text(
        (Path(__file__).parents[1] / "transcripts" / "samples" / "pi_v1.jsonl").read_text())
    capsys.readouterr()
    assert main(["--workbench", str(root), "run", "-c", "backwards", "--unsafe-no-isolation"]) == 0
    out, err = capsys.readouterr()
    assert "no_answer      beta/backwards" in out and "alpha/backwards" not in out, out
    assert "waiting for an answer, not run: alpha/backwards" in err and "beta/backwards: no_answer" in err, err
    with Store(root / "store.db") as store:
        assert [r["model"] for r in store.query("select model from runs")] == ["beta"]
    # a folder that is only waiting is nothing to run at all
    assert main(["--workbench", str(root), "run", "-m", "alpha", "-c", "backwards", "--unsafe-no-isolation"]) == 2
    assert "every folder selected is waiting for an answer" in capsys.readouterr().err
    # a run recorded for it before (by an older benchtui): every view says waiting
    with Store(root / "store.db") as store:
        old = store.db["runs"].insert({"model": "alpha", "challenge": "backwards", "status": "done",
                                       "verdict": "no_answer", "backend": "cpu"}).last_pk
        assert queries.no_answer_words(store, queries.recent_runs(store))[old] == "waiting"
    assert main(["--workbench", str(root), "results"]) == 0
    assert "waiting        alpha/backwards  run #" in capsys.readouterr().out
    assert main(["--workbench", str(root), "results", "--json"]) == 0
    got = {(r["model"], r["verdict"]) for r in json.loads(capsys.readouterr().out)["results"]}
    assert got == {("alpha", "waiting"), ("beta", "no_answer")}
