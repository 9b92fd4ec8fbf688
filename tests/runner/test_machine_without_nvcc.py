"""A machine without nvcc, as most laptops and CI runners are: `NVCC=none`
makes this one such a machine for benchtui, in the sandboxed child too (whose
clean PATH would otherwise find /usr/local/bin/nvcc)."""
from __future__ import annotations

from pathlib import Path

import pytest
from benchtui.runner.orchestrate import run_answers
from benchtui.store.database import Store
from benchtui.verify.cuda import build as cuda_build
from benchtui.workbench.layout import find_workbench
from benchtui.workbench.scan import scan_workbench


@pytest.mark.parametrize("value", ["none", "NONE", ""])
def test_nvcc_none_means_no_nvcc(monkeypatch, value):
    monkeypatch.setenv("NVCC", value)
    assert cuda_build.find_nvcc() is None


@pytest.mark.sandbox
def test_a_cuda_answer_is_skipped_in_the_sandbox_when_nvcc_is_none(demo_workbench: Path, monkeypatch):
    monkeypatch.setenv("NVCC", "none")
    wb = find_workbench(str(demo_workbench), None, Path.cwd())
    with Store(wb.store_path) as store:
        scan_workbench(wb, store)
    [event] = run_answers(wb, [("demo-hasty", "fuse")], jobs=1, backend="cpu")
    with Store(wb.store_path) as store:
        check = store.query("select verdict, message from checks where run_id = ? and name like 'nvcc_compile%'",
                            (event.run_id,))[0]
    assert event.verdict == "skipped", check
    assert check["verdict"] == "skipped" and "nvcc not found" in check["message"], check
