"""Ray clusters for the cluster tests: a `local` one started by benchtui
itself, and two `ray start` nodes on this machine, each in its own process group,
temp dir and ports, killed by group at the end (never `ray stop`: it stops every
Ray on the machine, other tests' included)."""
from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def require_ray():
    return pytest.importorskip("ray", reason="Ray is not installed: pip install -e '.[cluster]' runs the cluster tests")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ray_env(scratch: Path, token: str) -> dict:
    """One token for every process of the test's cluster (Ray's token authentication), no
    usage stats, a fast health check (a dead node is noticed in seconds), and the scratch
    folder as TMPDIR: every benchtui scratch copy on the nodes lands there, so a process
    left behind is one whose command line names it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env.update({"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": token, "RAY_USAGE_STATS_ENABLED": "0",
                "RAY_health_check_initial_delay_ms": "1000", "RAY_health_check_period_ms": "1000",
                "RAY_health_check_timeout_ms": "1000", "RAY_health_check_failure_threshold": "3",
                "TMPDIR": str(scratch), "PYTHONPATH": str(REPO)})
    env.setdefault("RAY_TMPDIR", tempfile.mkdtemp(prefix="rt-", dir="/tmp"))  # Ray's own: its socket paths must fit 107 bytes
    return env


def leftovers(marker: str) -> list[str]:
    """Live processes whose command line holds ``marker`` (zombies are not processes left running)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        if marker in cmd and stat[stat.rindex(")") + 2] != "Z":
            found.append(f"{pid}: {cmd[:200]}")
    return found


@dataclass
class Node:
    proc: subprocess.Popen  # `ray start`, the leader of the node's process group
    log: Path
    node_id: str = ""
    raylet_pid: int | None = None

    def find_raylet(self) -> None:
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                if os.getpgid(int(pid)) != self.proc.pid:
                    continue
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if cmd and cmd[0].endswith(b"/raylet"):
                for arg in cmd:
                    m = re.match(rb"--node_id=([0-9a-f]+)", arg)
                    if m:
                        self.node_id, self.raylet_pid = m.group(1).decode(), int(pid)

    def kill_group(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)


@dataclass
class TwoNodes:
    address: str
    env: dict
    scratch: Path
    head: Node
    second: Node
    nodes: list = field(default_factory=list)


def _start(argv: list[str], env: dict, log: Path) -> Node:
    with open(log, "wb") as fh:
        proc = subprocess.Popen(argv, env=env, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
    return Node(proc, log)


def kill_cluster_of(env: dict, *dirs: Path | str) -> None:
    """Every process of a test's Ray: its token in their environment, or a file open (or the
    command line) under its temp dirs. Ray's agents rename themselves over their environment
    and outlive a killed raylet in a group of their own: neither name nor group says whose they are."""
    needle = f"RAY_AUTH_TOKEN={env['RAY_AUTH_TOKEN']}".encode()
    roots = [str(d) for d in (env.get("RAY_TMPDIR"), *dirs) if d]
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            ours = needle in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
            ours = ours or any(r in cmd for r in roots)
            if not ours:
                for fd in os.listdir(f"/proc/{pid}/fd"):
                    try:
                        target = os.readlink(f"/proc/{pid}/fd/{fd}")
                    except OSError:
                        continue
                    if any(target.startswith(r) for r in roots):
                        ours = True
                        break
            if ours:
                os.kill(int(pid), signal.SIGKILL)
        except (OSError, ProcessLookupError):
            pass
