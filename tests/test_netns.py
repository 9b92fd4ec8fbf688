"""engine/cluster/netns.py: a thread moved into a network namespace of its own sees loopback
only, up; as root (CLONE_NEWNET alone) and as an ordinary user (a user namespace too)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NETNS = REPO / "engine" / "cluster" / "netns.py"


@pytest.fixture(scope="module")
def probe_dir():
    """The module alone (it needs only the standard library), in a folder any user can read:
    the clone, and the editable install pointing into it, may sit where an ordinary user
    cannot look (a root-only home or scratch folder)."""
    d = Path(tempfile.mkdtemp(prefix="benchtui-netns-"))
    d.chmod(0o755)
    shutil.copy(NETNS, d / "netns.py")
    (d / "netns.py").chmod(0o644)
    yield d
    shutil.rmtree(d, ignore_errors=True)
PROBE = """
import json, os, socket
from netns import enter_private_network, interfaces
before = os.stat('/proc/thread-self/ns/net').st_ino
why = enter_private_network()
s = socket.socket(); s.bind(('0.0.0.0', 0)); s.listen(); port = s.getsockname()[1]
c = socket.create_connection(('127.0.0.1', port), timeout=5)  # loopback is up
print(json.dumps({'why': why, 'interfaces': interfaces(), 'uid': os.getuid(),
                  'moved': os.stat('/proc/thread-self/ns/net').st_ino != before}))
"""


def _probe(prefix: list[str], where: Path) -> dict:
    p = subprocess.run([*prefix, sys.executable, "-S", "-c", PROBE], cwd=where, capture_output=True, text=True,
                       timeout=60, env={**os.environ, "PYTHONPATH": str(where)})
    assert p.returncode == 0, p.stderr[-2000:]
    return json.loads(p.stdout)


AS_NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def _refused(*prefixes: list[str]) -> str | None:
    """None if ``unshare`` makes a network namespace here under any of these
    command prefixes, else why not (this machine, not the code, refuses)."""
    if not shutil.which("unshare"):
        return "no unshare here"
    errors = []
    for prefix in prefixes:
        p = subprocess.run([*prefix, "true"], capture_output=True, text=True)
        if p.returncode == 0:
            return None
        errors.append(p.stderr.strip())
    return "this machine allows no network namespace: " + "; ".join(errors)


def test_private_network_has_loopback_only(probe_dir):
    if why := _refused(["unshare", "--net"], ["unshare", "--user", "--net"]):
        pytest.skip(why)
    got = _probe([], probe_dir)
    assert got["why"] is None and got["moved"]
    assert got["interfaces"] == ["lo"]


def test_private_network_as_an_ordinary_user(probe_dir):
    """Not root: CLONE_NEWNET alone is refused, so a user namespace comes with it, same uid."""
    if os.getuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("needs root to become an ordinary user (setpriv)")
    if why := _refused([*AS_NOBODY, "unshare", "--user", "--net"]):
        pytest.skip(why)
    got = _probe(AS_NOBODY, probe_dir)
    assert got["why"] is None and got["moved"], got
    assert got["interfaces"] == ["lo"] and got["uid"] == 65534


def test_threads_started_before_keep_a_user_from_isolating(probe_dir):
    """An ordinary user's process that has started a thread cannot make a user namespace:
    the reason comes back as one line, nothing raised."""
    if os.getuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("needs root to become an ordinary user (setpriv)")
    if why := _refused([*AS_NOBODY, "unshare", "--user", "--net"]):
        pytest.skip(why)
    code = ("import threading, time, json; from netns import enter_private_network as e; "
            "threading.Thread(target=time.sleep, args=(5,), daemon=True).start(); print(json.dumps(e()))")
    p = subprocess.run([*AS_NOBODY, sys.executable, "-S", "-c", code], cwd=probe_dir, capture_output=True,
                       text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(probe_dir)})
    assert p.returncode == 0, p.stderr
    assert "single-threaded" in json.loads(p.stdout)
