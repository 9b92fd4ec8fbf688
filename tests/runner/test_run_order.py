"""The order a batch starts its runs in when several run at once: the longest
last time first, so a long run never starts last; results come back in the
order asked."""
from __future__ import annotations

import shutil
import threading
from pathlib import Path

from benchtui.runner import orchestrate
from benchtui.runner.orchestrate import RunEvent, Runner, RunOptions
from benchtui.runner.run_order import LongestFirst
from benchtui.store.database import Store
from benchtui.workbench.layout import find_workbench
from benchtui.workbench.scan import scan_workbench

REPO = Path(__file__).resolve().parents[2]


def order_of(queue: LongestFirst, took: dict[int, float]) -> list[int]:
    out = []
    while (i := queue.take()) is not None:
        out.append(i)
        queue.finished(i, took.get(i))
    return out


def test_timed_pairs_go_longest_first_after_the_never_timed_ties_kept_in_order():
    pairs = [("a", "x"), ("b", "x"), ("c", "y"), ("d", "x"), ("e", "x")]
    last = {("a", "x"): 1.0, ("b", "x"): 10.0, ("d", "x"): 5.0, ("e", "x"): 5.0}
    # c's challenge y was never timed; e and d tie and keep the order asked
    assert order_of(LongestFirst(pairs, last), {}) == [2, 1, 3, 4, 0]


def test_a_first_batch_learns_each_challenges_cost_as_it_goes():
    pairs = [("m1", "quick"), ("m1", "long"), ("m2", "quick"), ("m2", "long"), ("m3", "quick"), ("m3", "long")]
    took = {0: 1.0, 1: 9.0, 2: 1.0, 3: 9.0, 4: 1.0, 5: 9.0}
    # the first model's answers show what each challenge costs; the rest start longest first
    assert order_of(LongestFirst(pairs, {}), took) == [0, 1, 3, 5, 2, 4]
    # an answer's own last run counts before its challenge's mean (7.3 s here, below long's 9 s)
    last = {("m1", "quick"): 1.0, ("m2", "quick"): 1.0, ("m3", "quick"): 20.0,
            ("m1", "long"): 9.0, ("m2", "long"): 9.0, ("m3", "long"): 9.0}
    assert order_of(LongestFirst(pairs, last), took) == [4, 1, 3, 5, 0, 2]


def test_a_run_that_did_not_run_teaches_nothing():
    queue = LongestFirst([("a", "x"), ("b", "x")], {})
    queue.finished(queue.take(), None)
    assert queue.expected_s(1) is None


def test_a_batch_starts_its_longest_runs_first_and_answers_in_the_order_asked(tmp_path, monkeypatch):
    root = tmp_path / "wb"
    shutil.copytree(REPO / "challenges" / "backwards", root / "challenges" / "backwards")
    models = ["quick", "slow", "new", "middling"]
    for m in models:
        (root / "models" / m / "backwards").mkdir(parents=True)
        (root / "models" / m / "backwards" / "ln.py").write_text("x = 1\n")
    wb = find_workbench(str(root), None, Path.cwd())
    with Store(wb.store_path) as store:
        scan_workbench(wb, store, index_transcripts=False)
        for m, s in (("quick", 1.0), ("slow", 30.0), ("middling", 8.0)):
            store.db["runs"].insert({"model": m, "challenge": "backwards", "status": "done", "duration_s": s})
    started, lock = [], threading.Lock()

    def run_one(self, model, challenge):
        with lock:
            started.append(model)
        return RunEvent("done", model, challenge)

    monkeypatch.setattr(orchestrate.sandbox, "choose_layer", lambda *a, **k: "none")
    monkeypatch.setattr(Runner, "run_one", run_one)
    pairs = [(m, "backwards") for m in models]
    events = Runner(wb, RunOptions(jobs=2)).run_all(pairs)
    assert [(e.model, e.challenge) for e in events] == pairs
    # two slots take the queue in order: the never-timed and the longest, then the rest
    assert set(started[:2]) == {"new", "slow"} and set(started[2:]) == {"middling", "quick"}
