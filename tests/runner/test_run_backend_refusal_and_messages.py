"""Runs: an absent backend asked for by name is refused (never the
answer's `error`), a run's message leads with what decided its verdict."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from benchtui.cli import main
from benchtui.host import backends
from benchtui.runner.orchestrate import run_answers
from benchtui.store.database import Store
from benchtui.workbench.layout import find_workbench
from benchtui.workbench.scan import scan_workbench

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def wb_root(tmp_path) -> Path:
    root = tmp_path / "wb"
    shutil.copytree(REPO / "challenges", root / "challenges")
    bad = root / "models" / "bad" / "backwards"
    bad.mkdir(parents=True)
    (bad / "ln.py").write_text("import torch\n\ndef forward(x, gamma, beta, eps):\n    return x, None\n")
    return root


def scanned(wb_root: Path):
    wb = find_workbench(str(wb_root), None, wb_root)
    with Store(wb.store_path) as store:
        scan_workbench(wb, store, index_transcripts=False)
    return wb


@pytest.fixture
def no_cuda(monkeypatch):
    status = {"cuda": backends.BackendStatus("cuda", False, detail="no usable device: cudaErrorInsufficientDriver",
                                             versions={"cupy": "14.2.0"}),
              "mlx": backends.BackendStatus("mlx", False, detail="MLX not importable"),
              "cpu": backends.BackendStatus("cpu", True, device="x86_64")}
    monkeypatch.setattr(backends, "probe_all", lambda: status)


def test_cli_refuses_an_absent_backend_asked_for_by_name(wb_root, no_cuda, capsys):
    code = main(["--workbench", str(wb_root), "run", "--backend", "cuda", "--json"])
    err = capsys.readouterr().err
    assert code == 2
    assert "backend cuda is not usable on this machine (cupy 14.2.0: no usable device: cudaErrorInsufficientDriver)" in err
    assert "--backend auto" in err and "Traceback" not in err
    wb = find_workbench(str(wb_root), None, wb_root)
    with Store(wb.store_path) as store:
        assert store.query("select count(*) as n from runs")[0]["n"] == 0  # nothing recorded against the answer


def test_run_answers_refuses_before_recording_anything(wb_root, no_cuda):
    wb = scanned(wb_root)
    with pytest.raises(backends.BackendUnavailable, match="backend cuda is not usable"):
        run_answers(wb, [("bad", "backwards")], backend="cuda")
    with Store(wb.store_path) as store:
        assert store.query("select count(*) as n from runs")[0]["n"] == 0


@pytest.mark.sandbox
def test_run_message_leads_with_what_decided_the_verdict(wb_root):
    wb = scanned(wb_root)
    (event,) = run_answers(wb, [("bad", "backwards")], self_check=False)
    assert event.verdict == "forbidden"
    with Store(wb.store_path) as store:
        message = store.query("select message from runs where id = ?", (event.run_id,))[0]["message"]
    assert "ln.py:1 imports torch" in message.split(";")[0]


@pytest.mark.sandbox
def test_an_answer_another_live_process_runs_is_not_run_twice(wb_root, capsys):
    import json
    import os

    from benchtui.store.database import now_iso

    wb = scanned(wb_root)
    with Store(wb.store_path) as store:
        other = store.db["runs"].insert({"model": "bad", "challenge": "backwards", "status": "running",
                                         "pid": os.getppid(), "started_at": now_iso()}).last_pk  # a live process
    code = main(["--workbench", str(wb_root), "run", "--json", "--no-self-check"])
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert code == 0 and out["runs"] == []
    assert out["busy"] == [{"model": "bad", "challenge": "backwards", "run_id": other,
                            "message": f"already running (run #{other}, process {os.getppid()}): not run twice"}]
    assert "busy: bad/backwards already running" in captured.err
    with Store(wb.store_path) as store:
        assert [r["id"] for r in store.query("select id from runs")] == [other]


@pytest.mark.sandbox
def test_run_json_reports_progress_on_stderr(wb_root, capsys):
    import json

    assert main(["--workbench", str(wb_root), "run", "--json", "--no-self-check"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["runs"][0]["verdict"] == "forbidden"  # stdout stays JSON
    assert "[1/1] bad/backwards: forbidden (" in captured.err


def test_doctor_names_cupy_once_when_it_has_no_device(monkeypatch):
    import sys
    import types

    from benchtui.commands import doctor

    def no_device():
        raise RuntimeError("cudaErrorInsufficientDriver: CUDA driver version is insufficient")

    fake = types.SimpleNamespace(__version__="14.2.0",
                                 cuda=types.SimpleNamespace(runtime=types.SimpleNamespace(getDeviceCount=no_device)))
    monkeypatch.setitem(sys.modules, "cupy", fake)
    status = backends.probe_cuda()
    assert not status.available and status.versions == {"cupy": "14.2.0"}
    report = {"python": {"version": "3.11", "executable": "python"}, "numpy": "2", "textual": "8", "sqlite": "3",
              "sqlite_utils": "3", "git": "2", "sandbox": {"active": "unshare", "layers": []},
              "cuda": {"cupy": "14.2.0", "available": False, "devices": "", "detail": status.detail, "nvcc": None},
              "mlx": {"version": None, "available": False, "device": "", "detail": "MLX not importable"},
              "paths": {"installed": False, "engine": "engine", "challenges": "challenges", "demo": "models",
                        "user_data": "data", "workbench": None, "workbench_error": "not a workbench", "store": None},
              "extras": []}
    line = next(x for x in doctor.render(report).splitlines() if "cuda" in x)
    assert line.count("14.2.0") == 1 and "no usable device: cudaErrorInsufficientDriver" in line


@pytest.mark.sandbox
def test_an_answer_another_process_ran_during_the_batch_is_joined_not_rerun(wb_root, monkeypatch):
    import os

    from benchtui.runner import orchestrate
    from benchtui.store.database import now_iso

    wb = scanned(wb_root)
    real_claim = orchestrate.claim_run

    def other_process_finished_it_first(store, row, since=None):
        # what a second `benchtui run` leaves while this batch works on an earlier answer
        store.db["runs"].insert({"model": row["model"], "challenge": row["challenge"], "status": "done",
                                 "verdict": "pass", "pid": os.getppid(), "started_at": now_iso()})
        return real_claim(store, row, since)

    monkeypatch.setattr(orchestrate, "claim_run", other_process_finished_it_first)
    (event,) = run_answers(wb, [("bad", "backwards")], self_check=False)
    assert event.kind == "busy"
    assert event.message == f"run meanwhile by process {os.getppid()} (run #{event.run_id}: pass): not run twice"
    with Store(wb.store_path) as store:
        assert store.query("select count(*) as n from runs")[0]["n"] == 1
