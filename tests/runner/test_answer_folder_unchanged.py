"""The orchestrator checks that the answer's folder is the same after a run as
before it: a run works on a scratch copy and benchtui never writes into an
answer's folder, so a change there while it ran is an error on the run."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from benchtui.records import verdicts as V
from benchtui.runner.orchestrate import Runner, RunOptions
from benchtui.store.database import Store
from benchtui.workbench.layout import find_workbench
from benchtui.workbench.scan import scan_workbench

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.sandbox
def test_an_answer_folder_changed_during_its_run_is_an_error_on_the_run(tmp_path, monkeypatch):
    root = tmp_path / "wb"
    shutil.copytree(REPO / "challenges" / "backwards", root / "challenges" / "backwards")
    folder = root / "models" / "m" / "backwards"
    folder.mkdir(parents=True)
    (folder / "ln.py").write_text("def forward(x):\n    return x\n")
    wb = find_workbench(str(root), None, Path.cwd())
    with Store(wb.store_path) as store:
        scan_workbench(wb, store, index_transcripts=False)
    real = Runner.dispatch

    def dispatch(self, bundle, challenge, on_running=None):
        got = real(self, bundle, challenge, on_running)
        (folder / "ln.py").write_text("def forward(x):\n    return x  # written while it ran\n")
        return got

    monkeypatch.setattr(Runner, "dispatch", dispatch)
    Runner(wb, RunOptions(backend="cpu", self_check=False)).run_all([("m", "backwards")])
    with Store(wb.store_path) as store:
        run = store.query("select id, verdict from runs order by id desc limit 1")[0]
        checks = {c["name"]: c for c in store.query("select name, verdict, message from checks where run_id = ?",
                                                    [run["id"]])}
    changed = checks.get("answer_folder_unchanged")
    assert changed is not None and changed["verdict"] == V.ERROR, sorted(checks)
    assert "the answer folder changed during the run" in changed["message"]
    assert run["verdict"] == V.ERROR
