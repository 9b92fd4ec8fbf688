"""A machine without pytest: an answer's own tests cannot run, which is the
machine's lack (missing_dependency, naming pytest), never the answer's failure."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from benchtui.commands import doctor
from benchtui.runner import selfcheck
from benchtui.runner.orchestrate import run_answers
from benchtui.store.database import Store
from benchtui.workbench.layout import find_workbench
from benchtui.workbench.scan import scan_workbench

REPO = Path(__file__).resolve().parents[2]


def test_the_plan_names_pytest_and_runs_no_tests_without_it(tmp_path, monkeypatch):
    (tmp_path / "test_mine.py").write_text("def test_x():\n    assert True\n")
    monkeypatch.setattr(selfcheck, "has_pytest", lambda: False)
    plan = selfcheck.plan_self_check(tmp_path, "/usr/bin/python3", gpu=False)
    assert plan.commands == [] and plan.missing == ["pytest"]
    assert "pytest is not installed" in plan.skipped[0] and "pip install pytest" in plan.skipped[0]


@pytest.mark.sandbox
def test_a_run_records_missing_dependency_for_the_self_check(tmp_path, monkeypatch):
    wb_root = tmp_path / "wb"
    shutil.copytree(REPO / "models" / "demo-careful" / "backwards", wb_root / "demo-careful" / "backwards")
    assert list((wb_root / "demo-careful" / "backwards").glob("test_*.py")), "the answer has its own tests"
    monkeypatch.setattr(selfcheck, "has_pytest", lambda: False)
    wb = find_workbench(str(wb_root), None, Path.cwd())
    with Store(wb.store_path) as store:
        scan_workbench(wb, store)
    [event] = run_answers(wb, [("demo-careful", "backwards")], jobs=1, backend="cpu")
    assert event.verdict == "pass"
    with Store(wb.store_path) as store:
        row = store.query("select self_status, self_output from runs where id = ?", (event.run_id,))[0]
    assert row["self_status"] == "missing_dependency" and "pytest is not installed" in row["self_output"], row


def test_doctor_says_pytest_is_missing_and_how_to_install_it(monkeypatch):
    real = doctor._version
    monkeypatch.setattr(doctor, "_version", lambda name: None if name == "pytest" else real(name))
    report = doctor.gather()
    assert report["pytest"] is None
    line = next(x for x in doctor.render(report).splitlines() if "pytest" in x)
    assert line.startswith("-- ") and "missing_dependency" in line and "pip install pytest" in line
