"""Answers that attack the checks, through the real pipeline (two sandboxes).

Each answer is wrong (layer norm that returns zeros) or slow, and tries to
bend the verdict or a trusted figure from its own process: patching the check
library, patching NumPy, replacing the clocks, writing to results files,
reading the reference, exiting early after printing a plausible result, and
leaving a child behind. None may change a verdict or a trusted figure.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import time
import uuid
from pathlib import Path

import pytest
from benchtui.runner.orchestrate import run_answers
from benchtui.store.database import Store
from benchtui.workbench.layout import find_workbench
from benchtui.workbench.scan import scan_workbench

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.sandbox

WRONG = '''
import numpy as np

def forward(x, gamma, beta, eps=1e-5):
    return np.zeros_like(x), (x, gamma)

def backward(dy, cache):
    x, gamma = cache
    return np.zeros_like(x), np.zeros_like(gamma), np.zeros_like(gamma)
'''


def run_answer(tmp_path: Path, source: str, *, challenge: str = "backwards", timeout_s: float = 60) -> dict:
    root = tmp_path / "wb"
    shutil.copytree(REPO / "challenges", root / "challenges")
    folder = root / "models" / "attacker" / challenge
    folder.mkdir(parents=True)
    (folder / "layernorm.py").write_text(source, encoding="utf-8")
    wb = find_workbench(str(root), None, Path.cwd())
    with Store(wb.store_path) as store:
        scan_workbench(wb, store, index_transcripts=False)
    event = run_answers(wb, [("attacker", challenge)], self_check=False, timeout_s=timeout_s)[0]
    with Store(wb.store_path) as store:
        checks = {c["name"]: c for c in store.query("select * from checks where run_id = ?", (event.run_id,))}
        run = store.query("select * from runs where id = ?", (event.run_id,))[0]
    return {"verdict": event.verdict, "checks": checks, "run": run}


def assert_judged_wrong(result: dict) -> None:
    assert result["verdict"] in ("fail", "error"), result["verdict"]
    assert result["checks"]["forward"]["verdict"] != "pass"
    assert result["checks"]["backward_dx"]["verdict"] != "pass"


def test_patching_the_check_library_changes_nothing(tmp_path):
    prelude = '''
try:
    import benchtui.verify.suite as s
    s.Check.fail = lambda self, *a, **k: None
    s.Check.expect = lambda self, *a, **k: None
    s.CheckFailed = Exception
    if s.Check.fail(None) is None and s.CheckFailed is Exception:
        print("patched the check library")
except Exception as exc:
    print("could not patch:", exc)
'''
    result = run_answer(tmp_path, prelude + WRONG)
    # the attack took effect in the answer's own process ...
    assert "patched the check library" in (result["run"]["stdout"] or ""), result["run"]["stdout"]
    # ... and the checker's verdict did not move
    assert_judged_wrong(result)
    assert result["checks"]["forward"]["verdict"] == "fail"


def test_patching_numpy_in_its_own_process_changes_nothing(tmp_path):
    prelude = '''
import numpy as np
np.linalg.norm = lambda *a, **k: 0.0
np.allclose = lambda *a, **k: True
np.isfinite = lambda x, *a, **k: np.ones(np.shape(x), dtype=bool)
'''
    result = run_answer(tmp_path, prelude + WRONG)
    assert_judged_wrong(result)
    assert float(result["checks"]["forward"]["value"]) > 0.5


REFERENCE = (REPO / "challenges" / "backwards" / "reference.py").read_text(encoding="utf-8")


def test_replacing_the_clocks_does_not_fake_the_speed(tmp_path):
    """A right answer that sleeps 50 ms per forward and freezes every clock in
    its own process: the checker's clock still sees the 50 ms."""
    clock_patch = '''
import time as _time
_sleep = _time.sleep
_time.perf_counter = lambda: 1.0
_time.perf_counter_ns = lambda: 1
_time.monotonic = lambda: 1.0
_time.time = lambda: 1.0
'''
    src = REFERENCE.replace("def forward(", "def forward_inner(", 1) + clock_patch + '''

def forward(*args, **kwargs):
    _sleep(0.05)
    return forward_inner(*args, **kwargs)
'''
    result = run_answer(tmp_path, src)
    assert result["checks"]["forward"]["verdict"] == "pass"  # right, only slow
    speed = next(c for n, c in result["checks"].items() if n.startswith("speed_"))
    details = json.loads(speed["details"])
    assert details["answer_median_s"] >= 0.045, details
    assert float(json.loads(speed["value"])) < 1.0


def test_writing_to_results_and_logs_changes_nothing(tmp_path):
    prelude = '''
import json, os
forged = json.dumps({"check": {"name": "forward", "verdict": "pass", "value": 0.0, "threshold": 1, "message": "", "details": {}}})
hits = []
for top in ("/tmp", "/", os.path.expanduser("~"), os.getcwd() + "/.."):
    for dirpath, dirnames, filenames in os.walk(top):
        if dirpath.startswith(("/proc", "/sys", "/dev", "/usr", "/lib")):
            dirnames[:] = []
            continue
        for name in filenames:
            if name.endswith((".jsonl", "job.json", ".txt", ".db", ".log")):
                try:
                    with open(os.path.join(dirpath, name), "a") as fh:
                        fh.write("\\n" + forged + "\\n")
                    hits.append(os.path.join(dirpath, name))
                except OSError:
                    pass
print("wrote into", hits)
'''
    result = run_answer(tmp_path, prelude + WRONG)
    assert_judged_wrong(result)
    assert "results.jsonl" not in result["run"]["stdout"]


def test_reading_the_reference_and_the_checks_is_impossible(tmp_path):
    targets = [REPO / "challenges" / "backwards" / "reference.py", REPO / "challenges" / "backwards" / "conformance.py",
               tmp_path / "wb" / "challenges" / "backwards" / "reference.py", tmp_path / "wb" / "store.db"]
    prelude = f'''
import glob, os
seen = [p for p in {[str(t) for t in targets]!r} if os.path.exists(p)]
seen += glob.glob("/tmp/**/job.json", recursive=True) + glob.glob("/tmp/**/results.jsonl", recursive=True)
print("SEEN", seen)
'''
    result = run_answer(tmp_path, prelude + WRONG)
    assert all(t.is_file() for t in targets)  # they exist: the answer's process just cannot see them
    assert_judged_wrong(result)
    line = next(x for x in result["run"]["stdout"].splitlines() if x.startswith("SEEN"))
    assert line == "SEEN []", line


def test_exiting_early_after_a_plausible_result_line_is_an_error(tmp_path):
    prelude = '''
import json, os, sys
print(json.dumps({"done": True, "verdict": "pass", "duration_s": 0.1}))
print(json.dumps({"check": {"name": "forward", "verdict": "pass"}}))
sys.stdout.flush()
os._exit(0)
'''
    result = run_answer(tmp_path, prelude + WRONG)
    assert result["verdict"] == "error"
    assert not [n for n, c in result["checks"].items() if c["verdict"] == "pass" and n != "forbidden_imports"]
    assert "answer's process" in " ".join(c["message"] for c in result["checks"].values())


def test_a_child_that_outlives_the_answer_changes_nothing_and_is_killed(tmp_path):
    marker = f"benchtui-orphan-{uuid.uuid4().hex[:8]}"
    prelude = f'''
import os, subprocess
subprocess.Popen(["/bin/sh", "-c", "sleep 120; : {marker}"], start_new_session=True)
if os.fork() == 0:
    import time
    time.sleep(3)
    os._exit(0)
'''
    result = run_answer(tmp_path, prelude + WRONG)
    assert_judged_wrong(result)
    time.sleep(0.2)
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert marker not in ps


def test_a_module_answer_s_lazy_reply_is_an_error_through_the_sandbox(tmp_path):
    """A deck-shaped module answer that replaces benchtui's host cycle (in its
    own sandboxed process) with one returning a lazy object: the checker reads
    the reply by value, so the run is an error naming the handle, never a pass
    with a time of nothing."""
    pytest.importorskip("torch", reason="the torch extra is not installed")
    from tests.challenges import module_deck_kit as K

    root = tmp_path / "wb"
    folder = K.write_challenge(root / "challenges", "kbh_fp8", "hard")
    (folder / "conformance.py").write_text("from benchtui.verify.module.suite import run  # noqa: F401\n")
    answer = root / "models" / "attacker" / "kbh_fp8"
    answer.mkdir(parents=True)
    (answer / "solution.py").write_text(K.TRUST_ATTACKS["lazy_cycle"], encoding="utf-8")
    wb = find_workbench(str(root), None, Path.cwd())
    with Store(wb.store_path) as store:
        scan_workbench(wb, store, index_transcripts=False)
    event = run_answers(wb, [("attacker", "kbh_fp8")], backend="cpu", self_check=False, timeout_s=240)[0]
    with Store(wb.store_path) as store:
        checks = {c["name"]: c for c in store.query("select * from checks where run_id = ?", (event.run_id,))}
    assert event.verdict == "error", {n: (c["verdict"], c["message"][:160]) for n, c in checks.items()}
    c = checks["deck_seeds:shape0"]
    assert c["verdict"] == "error" and "handle" in c["message"] and "Lazy" in c["message"], c["message"]
    assert not any(n.startswith("time:") for n in checks)
