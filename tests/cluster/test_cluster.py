"""benchtui run --cluster: a local Ray gets the verdicts a local run gets; a
two-node cluster that loses a node mid-run stores every run (or records it
interrupted, naming the node) and leaves no sandbox behind."""
from __future__ import annotations

import importlib.util
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
from benchtui.runner.sandbox import _descendants
from cluster_kit import REPO, kill_cluster_of, leftovers, ray_env, require_ray

pytestmark = pytest.mark.sandbox

# Five demo answers that between them give pass, fail and unbound, one with its own tests run
# in the sandbox, and the top_p answer the audit below needs run: their verdicts must be the
# ones a local run gets, pinned in tests/runner/test_demo_matrix.py's EXPECTED table (which
# runs the whole demo locally).
CLUSTER_MODELS = ("demo-careful", "demo-hasty", "demo-quitter")
CLUSTER_CHALLENGES = ("dflash_verify", "top_p")


def _expected() -> dict:
    spec = importlib.util.spec_from_file_location("demo_matrix", REPO / "tests" / "runner" / "test_demo_matrix.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.EXPECTED


def _benchtui(args: list[str], env: dict, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "benchtui", *args], cwd=REPO, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


def test_without_ray_cluster_says_how_to_install(demo_workbench, tmp_path):
    """No Ray: one line naming the extra, exit 2 (a backend this install lacks), nothing run."""
    blocker = tmp_path / "noray"
    blocker.mkdir()
    (blocker / "ray.py").write_text("raise ImportError('no ray here')\n")
    env = {**os.environ, "PYTHONPATH": f"{blocker}{os.pathsep}{REPO}"}
    p = _benchtui(["--workbench", str(demo_workbench), "run", "-c", "backwards", "--cluster", "local"], env)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 2, err
    assert err.strip().splitlines() == ["benchtui: error: --cluster needs Ray, which is not installed here: "
                                        "pip install 'benchtui[cluster]'"]
    assert not (demo_workbench / "store.db").exists() or "runs" not in out


def test_local_ray_gets_the_local_verdicts(demo_workbench, tmp_path):
    require_ray()
    from benchtui.runner.orchestrate import tree_digest

    expected = _expected()
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = ray_env(scratch, os.urandom(32).hex())
    before = tree_digest(demo_workbench / "models")
    args = ["--workbench", str(demo_workbench), "run", "--backend", "cpu", "--cluster", "local", "--json"]
    for model in CLUSTER_MODELS:
        args += ["-m", model]
    for challenge in CLUSTER_CHALLENGES:
        args += ["-c", challenge]
    p = _benchtui(args, env)
    out, err = p.communicate(timeout=600)
    assert p.returncode == 0, err[-3000:]
    assert tree_digest(demo_workbench / "models") == before  # answer folders are never written
    runs = {(r["model"], r["challenge"]): r for r in json.loads(out)["runs"]}
    # a folder holding only its prompt is waiting for an answer: `run` leaves it out
    expected = {key: want for key, want in expected.items()
                if key[0] in CLUSTER_MODELS and key[1] in CLUSTER_CHALLENGES and want[0] != "no_answer"}
    assert {want[0] for want in expected.values()} == {"pass", "fail", "unbound"}
    assert set(runs) == set(expected)
    for key, (verdict, failing) in expected.items():
        r = runs[key]
        not_passing = {c["name"] for c in r["checks"] if c["verdict"] not in ("pass", "info")}
        assert r["verdict"] == verdict, (key, r["checks"])
        assert failing <= not_passing, (key, not_passing)
        if verdict != "no_answer":  # ran on the cluster's node, in a real sandbox there
            assert r["node"] and r["sandbox"] in ("bwrap", "unshare"), r
    assert "cluster: local: 1 node(s), 2 CPUs" in err
    assert "running on node" in err
    hasty = runs[("demo-hasty", "dflash_verify")]
    assert hasty["self_check"]["status"] == "pass"  # its own tests ran on the worker, in the sandbox
    # An audit on the cluster: the baseline and each mutant are Ray tasks; the outcomes are a local audit's.
    audit = ["audit", "-c", "top_p", "-m", "demo-careful", "--no-reference", "--mutants", "3", "--json"]
    p = _benchtui(["--workbench", str(demo_workbench), *audit, "--cluster", "local"], env)
    out, err = p.communicate(timeout=600)
    assert p.returncode == 0, err[-3000:]
    on_cluster = json.loads(out)["challenges"][0]["answers"][0]
    assert on_cluster["status"] == "audited" and on_cluster["killed"] + on_cluster["survived"] + on_cluster["equivalent"] == 3
    p = _benchtui(["--workbench", str(demo_workbench), *audit, "--fresh", "--no-cluster"], env)
    out, err = p.communicate(timeout=600)
    here = json.loads(out)["challenges"][0]["answers"][0]
    assert {k: here[k] for k in ("killed", "survived", "equivalent")} == \
        {k: on_cluster[k] for k in ("killed", "survived", "equivalent")}
    assert leftovers(str(scratch)) == []
    kill_cluster_of(env)
    shutil.rmtree(env["RAY_TMPDIR"], ignore_errors=True)


def test_second_node_dies_mid_run(two_nodes, demo_workbench):
    """Kill the second node's raylet while it runs an answer: that run is retried once
    on the head (or recorded interrupted, naming the node), every other run is stored,
    and no sandboxed process is left on either node."""
    from benchtui.store.database import Store

    second = two_nodes.second.node_id[:12]
    args = ["--workbench", str(demo_workbench), "run", "--backend", "cpu", "--cluster", two_nodes.address,
            "--no-self-check", "--json", "-m", "demo-careful", "-m", "demo-hasty"]
    for c in ("kv", "flash_attention", "beam_search", "dflash_verify"):
        args += ["-c", c]
    p = _benchtui(args, two_nodes.env)
    lines: list[str] = []
    killed = threading.Event()
    sandboxed: list[int] = []  # the answer processes running on the second node when it died

    def read_stderr():
        for line in p.stderr:
            lines.append(line)
            if not killed.is_set() and "running on node" in line and second in line:
                # wait until its answer's sandboxed process is up (under the second node's raylet), then kill the raylet
                deadline = time.monotonic() + 15
                while not sandboxed and time.monotonic() < deadline:
                    sandboxed.extend(pid for pid in _descendants(two_nodes.second.raylet_pid) if b"answer_server" in _cmdline(pid))
                    time.sleep(0.05)
                os.kill(two_nodes.second.raylet_pid, signal.SIGKILL)
                killed.set()

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    out = p.stdout.read()
    p.wait(timeout=600)
    reader.join(timeout=10)
    err = "".join(lines)
    assert killed.is_set(), f"no run went to the second node:\n{err[-3000:]}"
    assert p.returncode == 0, err[-3000:]
    expected = _expected()
    with Store(demo_workbench / "store.db") as store:
        rows = store.query("select model, challenge, status, verdict, node, message from runs")
    assert len(rows) == 8
    for r in rows:
        if r["status"] == "interrupted":
            assert second in r["message"] and r["node"].startswith(second), r
        else:
            assert r["status"] == "done" and r["verdict"] == expected[(r["model"], r["challenge"])][0], r
    assert "retrying once on another node" in err, err[-3000:]
    # The run that lost its node: retried on the head, which finished it.
    retried = [r for r in rows if r["status"] == "done" and not r["node"].startswith(second)]
    assert len(retried) >= 1
    assert json.loads(out)["runs"]
    # Nothing of a run is left on either node: the sandboxes died with the second node's worker.
    assert sandboxed, "the second node died before its answer's sandbox started"
    deadline = time.monotonic() + 20
    while leftovers(str(two_nodes.scratch)) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert leftovers(str(two_nodes.scratch)) == []
    assert not [pid for pid in sandboxed if _cmdline(pid)]


def _cmdline(pid: int) -> bytes:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return b"" if stat[stat.rindex(")") + 2] == "Z" else Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, ValueError):
        return b""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_a_stopped_driver_leaves_no_sandbox(demo_workbench, sig):
    """The driver of `benchtui run --cluster local` stopped while two answers hang.
    SIGTERM: it cancels the tasks, records both runs interrupted (naming the signal
    and the node) and exits 130. SIGKILL: Ray kills the dead driver's workers; the
    next command records both runs interrupted. Either way no sandboxed process is
    left running."""
    require_ray()
    from benchtui.store.database import Store

    for model in ("demo-careful", "demo-hasty"):  # two answers that hang at import
        slow = demo_workbench / "models" / f"{model}-slow" / "backwards"
        shutil.copytree(demo_workbench / "models" / model / "backwards", slow)
        for py in slow.glob("*.py"):
            if not py.name.startswith("test_"):
                py.write_text("import time\ntime.sleep(600)\n" + py.read_text())
    scratch = demo_workbench.parent / "scratch"
    scratch.mkdir()
    env = ray_env(scratch, os.urandom(32).hex())
    p = _benchtui(["--workbench", str(demo_workbench), "run", "--cluster", "local", "--no-self-check", "-c", "backwards",
                   "-m", "demo-careful-slow", "-m", "demo-hasty-slow"], env)
    lines = []
    for line in p.stderr:
        lines.append(line)
        if sum("running on node" in x for x in lines) == 2:
            time.sleep(1.0)
            p.send_signal(sig)
            break
    # after a SIGKILL the pipe may stay open in what the driver started: do not wait on it
    rest = p.stderr.read() if sig == signal.SIGTERM else ""
    p.wait(timeout=120)
    err = "".join(lines) + rest
    try:
        if sig == signal.SIGTERM:
            assert p.returncode == 130, err[-3000:]
        else:
            assert p.returncode == -signal.SIGKILL
            done = subprocess.run([sys.executable, "-m", "benchtui", "--workbench", str(demo_workbench), "results", "--json"],
                                  cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, done.stderr
        with Store(demo_workbench / "store.db") as store:
            rows = store.query("select status, verdict, node, message from runs")
        assert len(rows) == 2
        for r in rows:
            assert (r["status"], r["verdict"]) == ("interrupted", "interrupted"), r
            assert r["node"], r
            if sig == signal.SIGTERM:
                assert r["message"].startswith("cancelled: the driver got SIGTERM while it ran on node "), r
        deadline = time.monotonic() + 30
        while leftovers(str(scratch)) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert leftovers(str(scratch)) == []
    finally:  # whatever of this test's Ray is still up (its GCS, raylet and agents, after a SIGKILL)
        kill_cluster_of(env)
        shutil.rmtree(env["RAY_TMPDIR"], ignore_errors=True)


HOLD_LOCAL = """
import json, os, sys
from benchtui.cluster.ray_cluster import Cluster, LOCAL
import ray
with Cluster(LOCAL, num_cpus=1) as c:
    node = ray._private.worker.global_worker.node
    print(json.dumps({"describe": c.describe(), "gcs": node.gcs_address, "raylet": node.all_processes["raylet"][0].process.pid}),
          flush=True)
    sys.stdin.readline()
"""


def test_local_ray_listens_on_a_private_loopback(tmp_path):
    """`--cluster local`: Ray's servers live in a network namespace of their own, so its
    ports cannot be reached from this machine's network, loopback included."""
    require_ray()
    import socket

    from benchtui.cluster.netns import enter_private_network  # noqa: F401 (Linux only)

    env = ray_env(tmp_path, os.urandom(32).hex())
    p = subprocess.Popen([sys.executable, "-c", HOLD_LOCAL], cwd=REPO, env=env, text=True,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        line = p.stdout.readline()
        assert line, p.stderr.read()[-3000:]
        got = json.loads(line)
        if "NOT isolated" in got["describe"]:
            pytest.skip(got["describe"])
        assert got["describe"].endswith("a private network: loopback only")
        host, port = got["gcs"].rsplit(":", 1)
        assert host == "127.0.0.1"
        assert os.stat(f"/proc/{got['raylet']}/ns/net").st_ino != os.stat("/proc/self/ns/net").st_ino
        for addr in ("127.0.0.1", socket.gethostbyname(socket.gethostname())):
            with pytest.raises(OSError):
                socket.create_connection((addr, int(port)), timeout=2).close()
    finally:
        p.communicate("\n", timeout=120)
        kill_cluster_of(env)
        shutil.rmtree(env["RAY_TMPDIR"], ignore_errors=True)
