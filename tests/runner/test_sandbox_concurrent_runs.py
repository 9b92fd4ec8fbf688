"""Concurrent runs must not share a process budget: a fork bomb that fills
its own RLIMIT_NPROC must not stop a neighbouring run from starting."""
from __future__ import annotations

import os
import sys
import threading

import pytest
from benchtui.runner import sandbox
from benchtui.runner.sandbox import Limits, run_sandboxed

pytestmark = pytest.mark.sandbox


def isolating_layer() -> str:
    if os.geteuid() != 0:
        pytest.skip("uids are only dropped when benchtui runs as root")
    return sandbox.choose_layer("auto")


def test_a_fork_bomb_does_not_starve_its_neighbour(tmp_path):
    layer = isolating_layer()
    bomb_dir, calm_dir = tmp_path / "bomb", tmp_path / "calm"
    bomb_dir.mkdir()
    calm_dir.mkdir()
    # Fill the process budget (20) and hold it for a few seconds.
    bomb = ("import os, time\n"
            "for _ in range(60):\n"
            "    try:\n"
            "        if os.fork() == 0:\n"
            "            time.sleep(4); os._exit(0)\n"
            "    except OSError:\n"
            "        break\n"
            "open('full', 'w').close()\n"
            "time.sleep(4)\n")
    results = {}

    def run_bomb():
        results["bomb"] = run_sandboxed([sys.executable, "-c", bomb], workdir=bomb_dir, layer=layer,
                                        limits=Limits(wall_s=8, processes=20),
                                        stdout_path=tmp_path / "b.out", stderr_path=tmp_path / "b.err")

    thread = threading.Thread(target=run_bomb)
    thread.start()
    for _ in range(100):  # until the bomb holds its whole budget
        if (bomb_dir / "full").exists():
            break
        threading.Event().wait(0.05)
    assert (bomb_dir / "full").exists(), (tmp_path / "b.err").read_text()
    calm = run_sandboxed(["/bin/sh", "-c", "for i in 1 2 3 4 5; do /bin/true; done; echo fine"], workdir=calm_dir,
                         layer=layer, limits=Limits(wall_s=8, processes=20),
                         stdout_path=tmp_path / "c.out", stderr_path=tmp_path / "c.err")
    thread.join()
    assert calm.exit_code == 0, (tmp_path / "c.err").read_text()
    assert (tmp_path / "c.out").read_text().strip() == "fine"
    assert calm.uid != results["bomb"].uid
