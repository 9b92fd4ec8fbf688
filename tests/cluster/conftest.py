"""The two-node cluster fixture (helpers in cluster_kit.py)."""
from __future__ import annotations

import secrets
import shutil
import sys
import tempfile
from pathlib import Path

import pytest
from cluster_kit import TwoNodes, _start, free_port, kill_cluster_of, ray_env, require_ray


@pytest.fixture
def two_nodes(tmp_path):
    """`ray start --head` (1 CPU) and a second `ray start` node (1 CPU) joining it, on this machine."""
    require_ray()
    ray_cli = shutil.which("ray") or str(Path(sys.executable).parent / "ray")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    ray_tmp = Path(tempfile.mkdtemp(prefix="rt-", dir="/tmp"))  # short: Ray's socket paths must fit 107 bytes
    env = ray_env(scratch, secrets.token_hex(32))
    port = free_port()
    common = ["--num-cpus=1", "--disable-usage-stats"]
    head = _start([ray_cli, "start", "--head", f"--port={port}", "--include-dashboard=false", f"--temp-dir={ray_tmp}", *common],
                  env, tmp_path / "head.log")
    nodes = [head]
    try:
        assert head.proc.wait(timeout=120) == 0, head.log.read_text()[-2000:]
        second = _start([ray_cli, "start", f"--address=127.0.0.1:{port}", *common], env, tmp_path / "second.log")
        nodes.append(second)
        assert second.proc.wait(timeout=120) == 0, second.log.read_text()[-2000:]
        for node in nodes:
            node.find_raylet()
            assert node.raylet_pid, f"no raylet found in the group of {node.log}"
        yield TwoNodes(f"127.0.0.1:{port}", env, scratch, head, second, nodes)
    finally:
        for node in nodes:
            node.kill_group()
        kill_cluster_of(env, ray_tmp)
        shutil.rmtree(ray_tmp, ignore_errors=True)
        shutil.rmtree(env["RAY_TMPDIR"], ignore_errors=True)
