"""The run pipeline on small hand-made answers: provenance, verdict rules,
interrupted runs, self-check, and the run/results JSON."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from benchtui.cli import main
from benchtui.records import verdicts as V
from benchtui.runner import sandbox
from benchtui.runner.bundle import parse_results
from benchtui.runner.orchestrate import mark_interrupted, run_answers
from benchtui.store.database import Store
from benchtui.workbench.layout import find_workbench
from benchtui.workbench.scan import scan_workbench

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.sandbox


@pytest.fixture
def wb_root(tmp_path) -> Path:
    root = tmp_path / "wb"
    shutil.copytree(REPO / "challenges", root / "challenges")
    good = root / "models" / "good" / "backwards"
    good.mkdir(parents=True)
    shutil.copy(REPO / "challenges" / "backwards" / "reference.py", good / "ln.py")
    (good / "test_ln.py").write_text("from ln import forward\n\ndef test_imports():\n    assert callable(forward)\n")
    bad = root / "models" / "bad" / "backwards"
    bad.mkdir(parents=True)
    (bad / "ln.py").write_text("import torch\n\ndef forward(x, gamma, beta, eps):\n    return x, None\n")
    none = root / "models" / "bad" / "kv"
    none.mkdir(parents=True)
    (none / "PROMPT.md").write_text("prompt\n")
    unbound = root / "models" / "good" / "kv"
    unbound.mkdir(parents=True)
    (unbound / "cache.py").write_text("class Thing:\n    pass\n")
    return root


def open_wb(root: Path):
    wb = find_workbench(str(root), None, Path.cwd())
    with Store(wb.store_path) as store:
        scan_workbench(wb, store, index_transcripts=False)
    return wb


def test_verdicts_and_provenance(wb_root):
    wb = open_wb(wb_root)
    events = run_answers(wb, [("good", "backwards"), ("bad", "backwards"), ("bad", "kv"), ("good", "kv")], jobs=2, seed=42)
    verdicts = {(e.model, e.challenge): e.verdict for e in events}
    assert verdicts == {("good", "backwards"): V.PASS, ("bad", "backwards"): V.FORBIDDEN,
                        ("bad", "kv"): V.NO_ANSWER, ("good", "kv"): V.UNBOUND}
    with Store(wb.store_path) as store:
        run = store.query("select * from runs where model = 'good' and challenge = 'backwards'")[0]
        assert run["status"] == "done" and run["seed"] == 42 and run["sandbox"] in sandbox.LAYERS
        assert set(json.loads(run["files"])) == {"ln.py", "test_ln.py"}
        assert len(run["answer_sha256"]) == 64
        assert {"python", "numpy", "benchtui"} <= set(json.loads(run["versions"]))
        assert run["self_exit_code"] == 0 and run["self_status"] == "pass" and "pytest" in run["self_command"]
        assert 0 < run["work_s"] < run["duration_s"]
        bad = store.query("select c.* from checks c join runs r on r.id = c.run_id where r.model = 'bad' and r.challenge = 'backwards'")
        forbidden = [c for c in bad if c["verdict"] == V.FORBIDDEN]
        assert forbidden and "ln.py:1 imports torch" in forbidden[0]["message"]
        unbound = store.query("select c.* from checks c join runs r on r.id = c.run_id where r.model = 'good' and r.challenge = 'kv'")
        assert any(c["verdict"] == V.UNBOUND and "looked for" in c["message"] for c in unbound)


def test_interrupted_runs_are_marked(wb_root):
    wb = open_wb(wb_root)
    with Store(wb.store_path) as store:
        dead = store.db["runs"].insert({"model": "good", "challenge": "backwards", "status": "running", "pid": 2 ** 22 + 17}).last_pk
        live = store.db["runs"].insert({"model": "good", "challenge": "backwards", "status": "running", "pid": os.getpid()}).last_pk
        assert mark_interrupted(store) == 1
        assert store.db["runs"].get(dead)["status"] == "interrupted"
        assert store.db["runs"].get(dead)["verdict"] == V.INTERRUPTED
        assert store.db["runs"].get(live)["status"] == "running"


def test_torn_results_file_keeps_finished_checks(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps({"check": {"name": "a", "verdict": "pass"}}) + "\n"
                    + json.dumps({"check": {"name": "b", "verdict": "bogus"}}) + "\n"
                    + '{"check": {"name": "c", "verd')
    checks, done = parse_results(path)
    assert [c["name"] for c in checks] == ["a"] and done is None


def test_cli_run_and_results_json(wb_root, capsys):
    code = main(["--workbench", str(wb_root), "run", "-m", "good", "-c", "Layer Norm Backward", "--json", "--no-self-check"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    (run,) = out["runs"]
    assert {k: run[k] for k in ("model", "challenge", "verdict", "backend")} == {
        "model": "good", "challenge": "backwards", "verdict": "pass", "backend": "cpu"}
    assert set(run) >= {"device", "duration_s", "checks", "self_check"}
    assert all(set(c) >= {"name", "verdict", "value", "threshold", "message"} for c in run["checks"])
    # the store keeps values as JSON text; the JSON prints them decoded
    assert not any(isinstance(c["value"], str) and c["value"] in ("null", "") for c in run["checks"])
    assert any(isinstance(c["value"], float) for c in run["checks"]), run["checks"]
    assert set(run["self_check"]) >= {"exit_code", "duration_s"}
    code = main(["--workbench", str(wb_root), "results", "--json"])
    res = json.loads(capsys.readouterr().out)
    assert code == 0
    assert [(r["model"], r["challenge"], r["verdict"]) for r in res["results"]] == [("good", "backwards", "pass")]
    assert {(r["model"], r["challenge"]) for r in res["not_run"]} == {("bad", "backwards"), ("bad", "kv"), ("good", "kv")}
    code = main(["--workbench", str(wb_root), "run", "-m", "nobody"])
    assert code == 2 and "unknown model" in capsys.readouterr().err


def test_stored_values_are_decoded_once_for_every_reader():
    from benchtui.store.queries import stored_value

    assert stored_value("0.0137") == 0.0137 and stored_value("null") is None
    assert stored_value('{"a": 1}') == {"a": 1} and stored_value("[1, 2]") == [1, 2]
    assert stored_value("not json") == "not json" and stored_value(None) is None and stored_value(3) == 3
