"""A sandbox dies with the thread that started it: a Ray worker killed by
a cancel, or a driver killed outright, leaves no sandboxed process running until its
time limit. The sandbox's outer helper gets SIGKILL from the kernel when its
parent thread ends (``setpriv --pdeathsig KILL``); the namespace (or, for the
rlimits layer, the session) goes with it."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from benchtui.runner.sandbox import probe_layers

pytestmark = pytest.mark.sandbox

REPO = Path(__file__).resolve().parents[2]


def _alive(marker: str, but: int | None = None) -> list[int]:
    """Live processes with ``marker`` as an argument of their own (not inside a script's text)."""
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        if marker.encode() in cmd.split(b"\0") and stat[stat.rindex(")") + 2] != "Z" and int(pid) != but:
            out.append(int(pid))
    return out


@pytest.mark.parametrize("layer", ["unshare", "bwrap"])
def test_sandbox_dies_when_the_process_that_started_it_is_killed(layer, tmp_path):
    status = {s.name: s for s in probe_layers()}[layer]
    if not status.works:
        pytest.skip(f"{layer} does not work here: {status.detail}")
    marker = f"benchtui-orphan-{os.getpid()}-{layer}"
    # A parent that starts a sandboxed `sleep` from a worker thread (as a Ray task or the
    # runner's pool does), says so, and waits: then it is SIGKILLed.
    script = textwrap.dedent(f"""
        import sys, threading, time
        from pathlib import Path
        from benchtui.runner.sandbox import Limits, run_sandboxed
        work = Path({str(tmp_path)!r}) / "work"
        work.mkdir()
        def go():
            run_sandboxed([sys.executable, "-c", "import time; time.sleep(120)", "{marker}"], workdir=work, limits=Limits(wall_s=120),
                          layer={layer!r}, stdout_path=work.parent / "out", stderr_path=work.parent / "err")
        threading.Thread(target=go).start()
        print("started", flush=True)
        time.sleep(600)
    """)
    parent = subprocess.Popen([sys.executable, "-c", script], cwd=REPO, stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        assert parent.stdout.readline().strip() == "started"
        deadline = time.monotonic() + 30
        while not _alive(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _alive(marker), "the sandboxed sleep never started"
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=10)
        deadline = time.monotonic() + 10
        while _alive(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _alive(marker) == []
    finally:
        parent.kill()
        for pid in _alive(marker):
            os.kill(pid, signal.SIGKILL)
