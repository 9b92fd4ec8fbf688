"""A run stopped by its time limit keeps the checks it finished: a failed one
makes the verdict `fail` with the timeout beside it, and the check in flight
says the time limit stopped it (not that the answer's process is gone)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from benchtui.records import verdicts as V
from benchtui.runner.orchestrate import run_answers
from benchtui.store.database import Store
from benchtui.workbench.layout import find_workbench
from benchtui.workbench.scan import scan_workbench

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.sandbox

# wrong from the first decode (decode_matches_full_attention fails on its first case);
# the second prefill (the first inside large_scores, the check after it) never returns
SLOW_AND_WRONG = """import time
import numpy as np

CALLS = []


class KVCache:
    def prefill(self, k, v, lengths):
        CALLS.append(1)
        if len(CALLS) >= 2:
            time.sleep(600)

    def decode(self, q, k_new, v_new):
        return np.zeros_like(q)
"""


def run_one(tmp_path: Path, source: str, timeout_s: float):
    root = tmp_path / "wb"
    shutil.copytree(REPO / "challenges" / "kv", root / "challenges" / "kv")
    answer = root / "models" / "slow" / "kv"
    answer.mkdir(parents=True)
    (answer / "cache.py").write_text(source)
    wb = find_workbench(str(root), None, Path.cwd())
    with Store(wb.store_path) as store:
        scan_workbench(wb, store, index_transcripts=False)
    (event,) = run_answers(wb, [("slow", "kv")], self_check=False, seed=3, timeout_s=timeout_s)
    with Store(wb.store_path) as store:
        checks = {c["name"]: c for c in store.query("select name, verdict, message from checks where run_id = ?",
                                                    (event.run_id,))}
    return event, checks


def test_a_failed_check_before_the_time_limit_makes_the_verdict_fail(tmp_path):
    event, checks = run_one(tmp_path, SLOW_AND_WRONG, timeout_s=8)
    assert event.verdict == V.FAIL, checks
    assert checks["decode_matches_full_attention"]["verdict"] == V.FAIL
    flight = checks["large_scores"]
    assert flight["verdict"] == V.TIMEOUT and "stopped by the run's time limit (8 s)" in flight["message"], flight
    assert checks["run"]["verdict"] == V.TIMEOUT and "large_scores was running" in checks["run"]["message"]
    assert not any("process is gone" in c["message"] for c in checks.values())


def test_without_a_failed_check_a_timeout_stays_a_timeout(tmp_path):
    source = SLOW_AND_WRONG.replace("len(CALLS) >= 2", "len(CALLS) >= 1")
    assert source != SLOW_AND_WRONG
    event, checks = run_one(tmp_path, source, timeout_s=6)
    assert event.verdict == V.TIMEOUT
    assert checks["decode_matches_full_attention"]["verdict"] == V.TIMEOUT
