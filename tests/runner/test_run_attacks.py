"""Sandbox-level mutants of every Python challenge's reference, run through the
real pipeline (scratch copy -> sandbox -> child): sleeping past the limit,
forking, opening a socket, writing outside the scratch dir. Each must be
rejected, contained, and leave the answer folder untouched.
"""
from __future__ import annotations

import shutil
import socket
import subprocess
import threading
import time
import uuid
from pathlib import Path

import pytest
from benchtui.runner import sandbox
from benchtui.runner.orchestrate import run_answers, tree_digest
from benchtui.store.database import Store
from benchtui.workbench.layout import find_workbench
from benchtui.workbench.scan import scan_workbench

REPO = Path(__file__).resolve().parents[2]
# Python answers only: a CUDA challenge's answer is .cu files, which a Python prelude cannot attack
PY_CHALLENGES = [d.name for d in sorted((REPO / "challenges").iterdir())
                 if (d / "reference.py").is_file() and (d / "challenge.toml").is_file()
                 and 'language = "cuda"' not in (d / "challenge.toml").read_text()]

pytestmark = pytest.mark.sandbox


def workbench_with(tmp_path: Path, challenge: str, prelude: str) -> Path:
    """A workbench whose one answer is the challenge's reference with `prelude`
    run at import time."""
    root = tmp_path / "wb"
    shutil.copytree(REPO / "challenges", root / "challenges")
    answer = root / "models" / "mutant" / challenge
    answer.mkdir(parents=True)
    lines = (REPO / "challenges" / challenge / "reference.py").read_text(encoding="utf-8").splitlines()
    # after any `from __future__` import, which must stay first
    at = max((i + 1 for i, line in enumerate(lines) if line.startswith("from __future__")), default=0)
    (answer / "solution.py").write_text("\n".join(lines[:at] + [prelude] + lines[at:]) + "\n", encoding="utf-8")
    return root


def run_one(root: Path, challenge: str, timeout_s: float = 20):
    wb = find_workbench(str(root), None, Path.cwd())
    with Store(wb.store_path) as store:
        scan_workbench(wb, store, index_transcripts=False)
    before = tree_digest(root / "models")
    t = time.perf_counter()
    events = run_answers(wb, [("mutant", challenge)], self_check=False, timeout_s=timeout_s)
    elapsed = time.perf_counter() - t
    assert tree_digest(root / "models") == before, "the answer folder changed"
    with Store(wb.store_path) as store:
        checks = store.query("select name, verdict, message from checks where run_id = ?", (events[0].run_id,))
    return events[0], checks, elapsed


def alive_with(marker: str) -> list[str]:
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if marker in line and "ps -eo" not in line]


@pytest.mark.parametrize("challenge", PY_CHALLENGES)
def test_sleeping_past_the_limit_times_out_and_leaves_nothing(tmp_path, challenge):
    marker = f"benchtui-sleeper-{uuid.uuid4().hex[:8]}"
    prelude = ("import subprocess, time\n"
               f"subprocess.Popen(['/bin/sh', '-c', 'sleep 300; : {marker}'], start_new_session=True)\n"
               "time.sleep(300)\n")
    event, checks, elapsed = run_one(workbench_with(tmp_path, challenge, prelude), challenge, timeout_s=3)
    assert event.verdict == "timeout"
    assert any(c["name"] == "run" and c["verdict"] == "timeout" for c in checks)
    assert elapsed < 15
    time.sleep(0.2)
    assert alive_with(marker) == [], "a setsid() grandchild survived the kill"


@pytest.mark.parametrize("challenge", PY_CHALLENGES)
def test_fork_bomb_is_bounded_and_swept(tmp_path, challenge):
    marker = f"benchtui-forker-{uuid.uuid4().hex[:8]}"
    prelude = ("import os, subprocess\n"
               "for _ in range(2000):\n"
               f"    subprocess.Popen(['/bin/sh', '-c', 'sleep 300; : {marker}'])\n")
    event, checks, _ = run_one(workbench_with(tmp_path, challenge, prelude), challenge, timeout_s=15)
    assert event.verdict in {"error", "timeout"}, checks
    time.sleep(0.2)
    assert alive_with(marker) == []


@pytest.mark.parametrize("challenge", PY_CHALLENGES)
def test_network_is_unreachable(tmp_path, challenge):
    layer = sandbox.choose_layer("auto")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    server.settimeout(0.2)
    port = server.getsockname()[1]
    got = []

    def accept():
        deadline = time.time() + 30
        while time.time() < deadline and not stop.is_set():
            try:
                conn, _ = server.accept()
                got.append(conn.recv(100))
                conn.close()
            except OSError:
                continue

    stop = threading.Event()
    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    prelude = f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=2).sendall(b'LEAK')\n"
    try:
        event, checks, _ = run_one(workbench_with(tmp_path, challenge, prelude), challenge)
    finally:
        stop.set()
        thread.join()
        server.close()
    assert layer in {"bwrap", "unshare"}
    assert got == [], "the answer reached the network"
    assert event.verdict == "error"
    assert any("Connection" in c["message"] or "Network" in c["message"] or "OSError" in c["message"] for c in checks), checks


@pytest.mark.parametrize("challenge", PY_CHALLENGES)
def test_writing_outside_the_scratch_dir_fails(tmp_path, challenge):
    target = REPO / f"escape-{uuid.uuid4().hex[:8]}.txt"
    prelude = f"open({str(target)!r}, 'w').write('escaped')\n"
    try:
        event, checks, _ = run_one(workbench_with(tmp_path, challenge, prelude), challenge)
        assert not target.exists(), "the answer wrote outside its scratch copy"
        assert event.verdict == "error"
        assert any("Read-only" in c["message"] or "Permission" in c["message"] for c in checks), checks
    finally:
        if target.exists():
            target.unlink()


def test_secrets_in_the_environment_do_not_reach_answers(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-not-leak")
    prelude = ("import os\n"
               "if 'OPENAI_API_KEY' in os.environ or os.path.exists(os.path.expanduser('~/.bash_history')):\n"
               "    raise RuntimeError('secret visible')\n")
    challenge = PY_CHALLENGES[0]
    event, checks, _ = run_one(workbench_with(tmp_path, challenge, prelude), challenge, timeout_s=60)
    assert event.verdict == "pass", checks
