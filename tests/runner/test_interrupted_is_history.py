"""An interrupted run is history: the verdict shown (results, show, the matrix,
the answer screen's run, exports) stays the newest run that finished. Ctrl-C on
`benchtui run` says at once what it does: the first lets the runs in flight
finish and starts no more, the second stops them (recorded with their true
duration)."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from benchtui.cli import main
from benchtui.store import queries
from benchtui.store.database import Store
from benchtui.workbench.layout import find_workbench
from benchtui.workbench.scan import scan_workbench

REPO = Path(__file__).resolve().parents[2]


def _workbench(tmp_path: Path, sleep_s: float = 0) -> Path:
    root = tmp_path / "wb"
    answer = root / "slow" / "backwards"
    shutil.copytree(REPO / "models" / "demo-careful" / "backwards", answer)
    for name in ("session.jsonl", "test_layernorm.py"):
        (answer / name).unlink()
    if sleep_s:
        code = (answer / "layernorm.py").read_text()
        (answer / "layernorm.py").write_text(f"import time\ntime.sleep({sleep_s})\n" + code)
    return root


def test_the_newest_finished_run_is_the_one_shown(tmp_path, capsys):
    root = _workbench(tmp_path)
    wb = find_workbench(str(root), None, Path.cwd())
    with Store(wb.store_path) as store:
        scan_workbench(wb, store, index_transcripts=False)
        done = store.db["runs"].insert({"model": "slow", "challenge": "backwards", "status": "done", "verdict": "pass",
                                        "backend": "cpu", "duration_s": 3.0}).last_pk
        store.db["runs"].insert({"model": "slow", "challenge": "backwards", "status": "interrupted", "verdict": "interrupted",
                                 "backend": "cpu", "duration_s": 2.0, "message": "cancelled by the user"})
        assert queries.latest_run(store, "slow", "backwards")["id"] == done
        cell = queries.load_matrix(store).cells["slow", "backwards"]
        assert (cell.verdict, cell.run_id) == ("pass", done)
    assert main(["--workbench", str(root), "results", "--json"]) == 0
    [shown] = json.loads(capsys.readouterr().out)["results"]
    assert (shown["run_id"], shown["verdict"]) == (done, "pass")
    assert main(["--workbench", str(root), "show", "slow", "backwards", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["latest_run"]["id"] == done
    assert main(["--workbench", str(root), "show", "slow", "backwards"]) == 0
    out = capsys.readouterr().out
    assert f"latest run #{done}: pass" in out and "interrupted" in out  # as history, below


def test_an_answer_only_interrupted_is_not_run(tmp_path, capsys):
    root = _workbench(tmp_path)
    wb = find_workbench(str(root), None, Path.cwd())
    with Store(wb.store_path) as store:
        scan_workbench(wb, store, index_transcripts=False)
        store.db["runs"].insert({"model": "slow", "challenge": "backwards", "status": "interrupted", "verdict": "interrupted"})
        assert queries.load_matrix(store).cells["slow", "backwards"].verdict == "not_run"
    assert main(["--workbench", str(root), "results", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["results"] == [] and got["not_run"] == [{"model": "slow", "challenge": "backwards", "verdict": "not_run"}]


class _Run:
    """`benchtui run` in its own process, its stderr lines timed as they come."""

    def __init__(self, root: Path, models: tuple[str, ...] = ("slow",)):
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        self.proc = subprocess.Popen([sys.executable, "-m", "benchtui", "--workbench", str(root), "run",
                                      *(a for m in models for a in ("-m", m)), "-c", "backwards", "--no-self-check"],
                                     cwd=REPO, env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: list[tuple[float, str]] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.store = root / "store.db"

    def _read(self):
        for line in self.proc.stderr:
            self.lines.append((time.monotonic(), line.rstrip("\n")))

    def wait_running(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.store.exists():
                try:
                    with Store(self.store, migrate=False) as store:
                        if store.query("select id from runs where status = 'running'"):
                            return
                except Exception:  # the store is being made
                    pass
            time.sleep(0.1)
        raise AssertionError("the run never started")

    def interrupt(self) -> float:
        self.proc.send_signal(signal.SIGINT)
        return time.monotonic()

    def said_after(self, since: float, text: str, within: float) -> bool:
        deadline = since + within
        while time.monotonic() < deadline + 0.5:
            if any(text in line and t <= deadline for t, line in self.lines):
                return True
            time.sleep(0.05)
        return False


@pytest.mark.sandbox
def test_the_first_ctrl_c_lets_the_run_finish_and_says_so_at_once(tmp_path):
    run = _Run(_workbench(tmp_path, sleep_s=3))
    run.wait_running()
    time.sleep(0.5)
    at = run.interrupt()
    assert run.said_after(at, "finishing 1 run; Ctrl-C again to stop them", within=10.0), run.lines
    assert run.proc.wait(timeout=120) == 130
    with Store(run.store) as store:
        [row] = store.query("select status, verdict from runs")
    assert (row["status"], row["verdict"]) == ("done", "pass"), run.lines


@pytest.mark.sandbox
def test_the_second_ctrl_c_stops_the_run_recorded_with_its_duration(tmp_path):
    run = _Run(_workbench(tmp_path, sleep_s=30))
    run.wait_running()
    time.sleep(1.0)
    first = run.interrupt()
    assert run.said_after(first, "Ctrl-C again to stop them", within=10.0), run.lines
    time.sleep(1.0)
    run.interrupt()
    assert run.proc.wait(timeout=60) == 130
    stopped_after = time.monotonic() - first
    with Store(run.store) as store:
        [row] = store.query("select status, verdict, duration_s from runs")
    assert (row["status"], row["verdict"]) == ("interrupted", "interrupted"), run.lines
    assert 1.5 <= row["duration_s"] <= stopped_after + 1.5, (row, run.lines)


@pytest.mark.sandbox
def test_an_interrupted_run_says_what_finished_what_stopped_and_what_never_started(tmp_path):
    root = _workbench(tmp_path, sleep_s=3)
    for name in ("slow2", "slow3"):
        shutil.copytree(root / "slow", root / name)
    run = _Run(root, ("slow", "slow2", "slow3"))
    run.wait_running()
    time.sleep(0.5)
    run.interrupt()  # the first run finishes; the other two never start
    assert run.proc.wait(timeout=120) == 130
    said = [line for _, line in run.lines]
    assert "benchtui: interrupted (SIGINT): 1 finished, 0 stopped, 2 never started" in said, said
    assert "  finished: slow/backwards (pass)" in said, said
    assert "  never started: slow2/backwards, slow3/backwards" in said, said
    assert not any("stopped (recorded" in line for line in said), said


def test_the_report_of_an_interrupt_names_each_kind():
    from benchtui.commands.interrupt import interrupt_report
    from benchtui.runner.orchestrate import RunEvent

    events = [RunEvent("finished", "a", "kv", verdict="fail", duration_s=2.0),
              RunEvent("finished", "b", "kv", verdict="interrupted", duration_s=4.25),
              RunEvent("error", "c", "kv", message="no such answer"),
              *(RunEvent("cancelled", f"m{i}", "fuse") for i in range(8))]
    assert interrupt_report("SIGINT", events) == [
        "benchtui: interrupted (SIGINT): 2 finished, 1 stopped, 8 never started",
        "  finished: a/kv (fail), c/kv (error)",
        "  stopped (recorded as interrupted; the verdicts shown stay the last finished runs): b/kv after 4.2 s",
        "  never started: m0/fuse, m1/fuse, m2/fuse, m3/fuse, m4/fuse, m5/fuse and 2 more"]


def test_the_bar_fills_only_with_runs_that_ended():
    from benchtui.commands.run_cmds import _progress
    from benchtui.runner.orchestrate import RunEvent

    bar = _progress(5)
    try:
        bar.on_event(RunEvent("finished", "a", "kv", verdict="pass", done=1, total=5))
        for done in (2, 3, 4):
            bar.on_event(RunEvent("cancelled", "b", f"c{done}", done=done, total=5))
        bar.on_event(RunEvent("finished", "a", "fuse", verdict="interrupted", done=5, total=5))
        task = bar.bar.tasks[0]
        assert (task.completed, task.total) == (2, 5)
    finally:
        bar.stop()
