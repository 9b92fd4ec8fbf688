"""One GPU job at a time per device: two GPU runs never overlap (threads of
``--jobs N``, or separate processes such as Ray workers on one node), CPU
runs stay parallel, and a checker takes the lock before its checks, or (a
suite that says so) after its CPU-only work. No GPU is needed: the runs
here are stand-ins."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from types import SimpleNamespace

import pytest
from benchtui.challenges.definition import RunLimits
from benchtui.records.job import Job
from benchtui.runner import bundle as bundle_mod
from benchtui.runner.bundle import JobBundle, pack_tree


@pytest.fixture(autouse=True)
def private_locks(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHTUI_GPU_LOCK_DIR", str(tmp_path / "locks"))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")


def spans_of_two_runs(tmp_path, monkeypatch, gpu: bool) -> list[tuple[float, float]]:
    spans = []

    def two_processes(*args, **kwargs):
        fd = kwargs.get("gpu_lock_fd")
        if fd is not None:  # what the checker does with the descriptor it is given
            from benchtui.verify import gpu_lock

            gpu_lock.hold(fd)
        start = time.perf_counter()
        time.sleep(0.4)
        spans.append((start, time.perf_counter()))
        return [], None, SimpleNamespace(timed_out=False, wall_s=0.4, exit_code=0, signal=None)

    monkeypatch.setattr(bundle_mod, "two_processes", two_processes)
    (tmp_path / "answer").mkdir(exist_ok=True)
    job = JobBundle(key="m/c", model="m", challenge_id="c", answer_tar=pack_tree(tmp_path / "answer"), job=Job("c", "m", 1),
                    limits=RunLimits(timeout_s=10, cpu_s=10, memory_mb=512, self_check_timeout_s=5), gpu=gpu,
                    challenge_dir=str(tmp_path), self_check=False)
    threads = [threading.Thread(target=bundle_mod.execute_bundle, args=(job, "rlimits")) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sorted(spans)


def test_two_gpu_runs_on_one_device_never_overlap_and_cpu_runs_do(tmp_path, monkeypatch):
    (a0, a1), (b0, b1) = spans_of_two_runs(tmp_path, monkeypatch, gpu=True)
    assert b0 >= a1, "the second GPU run started while the first was timed"
    (a0, a1), (b0, b1) = spans_of_two_runs(tmp_path, monkeypatch, gpu=False)
    assert b0 < a1, "CPU runs should run side by side"


def test_the_lock_holds_across_processes_and_a_cancel_stops_the_wait(tmp_path):
    from benchtui.verify import gpu_lock

    held = subprocess.Popen([sys.executable, "-c", "import sys\nfrom benchtui.verify import gpu_lock\n"
                             "with gpu_lock.device_lock('0'):\n    print('held', flush=True)\n    sys.stdin.read()\n"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    taken = threading.Event()

    def take():
        with gpu_lock.device_lock("0") as got:
            if got:
                taken.set()

    try:
        assert held.stdout.readline().strip() == "held"
        waiter = threading.Thread(target=take)
        waiter.start()
        assert not taken.wait(0.5), "taken while another process held it"
        held.stdin.close()  # the other process lets go
        assert taken.wait(30), "not taken once the other process let go"
        waiter.join(timeout=30)
    finally:
        held.stdin.close()
        held.wait(timeout=10)
    stop = threading.Event()
    with gpu_lock.device_lock("1"):
        threading.Timer(0.2, stop.set).start()
        with gpu_lock.device_lock("1", stop=stop) as got:
            assert not got  # gave up the wait: the caller's cancel ends the job
        with gpu_lock.device_lock("2", stop=stop) as other:
            assert other  # another device is free
    assert gpu_lock.device_key({"CUDA_VISIBLE_DEVICES": "GPU-1234,GPU-5678"}) == "GPU-1234"
    assert gpu_lock.device_key({}) == "0"


CONFORMANCE = """
import fcntl, os

GPU_LOCK_LATE = {late}


def held(path):
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def run(suite):
    suite.info("at_start", value=held({path!r}))
    suite.hold_gpu()
    suite.info("after_hold_gpu", value=held({path!r}))
"""


@pytest.mark.parametrize("late", [False, True])
def test_the_checker_holds_the_lock_before_its_checks_or_when_the_suite_says(tmp_path, late):
    from benchtui.verify import gpu_lock
    from benchtui.verify.execute import execute

    path = gpu_lock.lock_path("0")
    challenge = tmp_path / "c"
    challenge.mkdir()
    (challenge / "conformance.py").write_text(CONFORMANCE.format(late=late, path=str(path)))
    fd = gpu_lock.open_lock("0")
    try:
        suite = execute(Job(challenge_id="c", challenge_dir=str(challenge), answer_dir=str(tmp_path), model="m",
                            seed=1, gpu_lock_fd=fd))
    finally:
        os.close(fd)
    values = {c.name: c.value for c in suite.checks}
    assert values == {"at_start": not late, "after_hold_gpu": True}
    with gpu_lock.device_lock("0") as got:  # closing the run's descriptor released it
        assert got
