"""Untrusted-code attacks against each sandbox layer that works on this machine.

Every test starts real processes. The rlimits layer isolates neither network
nor files; where an attack succeeds there, the test records that fact
(it is why choose_layer wants the unsafe flag) instead of skipping.
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest
from benchtui.runner.sandbox import LAYERS, RUN_UID_BASE, Limits, SandboxResult, probe_layers, run_sandboxed

pytestmark = pytest.mark.sandbox
ISOLATING = ("bwrap", "unshare")


@pytest.fixture(params=LAYERS)
def layer(request) -> str:
    status = {s.name: s for s in probe_layers()}[request.param]
    if not status.works:
        pytest.skip(f"{status.name} does not work here: {status.detail}")
    return request.param


@pytest.fixture
def workdir(tmp_path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    return work


def run_py(code: str, workdir: Path, layer: str, **kw) -> tuple[SandboxResult, str, str]:
    """Run a Python script (written into workdir) in the sandbox; return result, stdout, stderr."""
    script = workdir / f"attack_{uuid.uuid4().hex[:8]}.py"
    script.write_text(textwrap.dedent(code))
    limits = kw.pop("limits", Limits(wall_s=20))
    args = kw.pop("args", [])
    out, err = workdir.parent / "stdout.txt", workdir.parent / "stderr.txt"
    res = run_sandboxed([sys.executable, str(script), *args], workdir=workdir, limits=limits, layer=layer,
                        stdout_path=out, stderr_path=err, **kw)
    return res, out.read_text(errors="replace"), err.read_text(errors="replace")


def test_loopback_server_unreachable(layer, workdir):
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        port = server.getsockname()[1]
        res, out, err = run_py(f"""
            import socket
            try:
                socket.create_connection(("127.0.0.1", {port}), timeout=2).close()
                print("CONNECTED")
            except OSError as exc:
                print("BLOCKED", exc.errno)
        """, workdir, layer)
    assert res.exit_code == 0, err
    if layer in ISOLATING:
        assert out.startswith("BLOCKED"), out
    else:
        assert out.startswith("CONNECTED"), "rlimits layer is not expected to block the network"


def test_parent_secrets_not_in_environment(layer, workdir, monkeypatch):
    monkeypatch.setenv("BENCHTUI_FAKE_API_KEY", "sk-secret-123")
    res, out, err = run_py("""
        import os
        print("LEAK" if any("sk-secret" in v for v in os.environ.values()) else "CLEAN")
        print(os.environ.get("HOME"))
    """, workdir, layer)
    assert res.exit_code == 0, err
    lines = out.split()
    assert lines[0] == "CLEAN"
    assert lines[1] != os.environ.get("HOME")


def test_home_and_tmp_hidden(layer, workdir, tmp_path):
    secret = tmp_path / "secret-note.txt"  # a sibling of workdir under /tmp
    secret.write_text("do not read")
    home = Path.home()
    res, out, err = run_py(f"""
        import os
        from pathlib import Path
        print(Path({str(secret)!r}).exists())
        print(sorted(os.listdir({str(home)!r})) if os.access({str(home)!r}, os.R_OK) else [])
        h = Path(os.environ["HOME"]); (h / "cache").write_text("ok")   # $HOME is usable
        print(sorted(os.listdir(h)))
    """, workdir, layer)
    assert res.exit_code == 0, err
    seen_secret, home_listing, own_home = out.splitlines()
    assert own_home == "['cache']"
    if layer in ISOLATING:
        assert seen_secret == "False"
        # Only the parents of read-only binds (the interpreter) may show through.
        allowed = {Path(p).resolve().relative_to(home).parts[0] for p in (sys.prefix, sys.base_prefix)
                   if Path(p).resolve().is_relative_to(home)}
        assert set(eval(home_listing)) <= allowed
    else:
        assert seen_secret == "True"  # recorded: rlimits hides nothing


@pytest.fixture
def outside_dirs():
    """Two dirs outside /tmp and $HOME, so they sit on the read-only root."""
    base = Path("/var/tmp") / f"benchtui-sbx-{uuid.uuid4().hex[:8]}"
    ro, rw = base / "ro", base / "rw"
    ro.mkdir(parents=True)
    rw.mkdir()
    yield ro, rw
    shutil.rmtree(base)


def test_writes_confined_to_workdir_and_rw_paths(layer, workdir, outside_dirs):
    ro, rw = outside_dirs
    if layer not in ISOLATING and os.geteuid() == 0:
        pytest.skip("rlimits as root confines no writes (recorded in probe detail: payload uid 0)")
    res, out, err = run_py(f"""
        from pathlib import Path
        def attempt(p):
            try:
                Path(p).write_text("x"); return "wrote"
            except OSError as exc:
                return "denied"
        print(attempt({str(ro / 'evil.txt')!r}), attempt({str(rw / 'ok.txt')!r}), attempt("inside.txt"))
    """, workdir, layer, rw_paths=[rw])
    assert res.exit_code == 0, err
    assert out.split() == ["denied", "wrote", "wrote"]
    assert not (ro / "evil.txt").exists()
    assert (rw / "ok.txt").read_text() == "x" and (workdir / "inside.txt").read_text() == "x"
    # The caller gets its files back: ownership is restored after the run.
    assert (workdir / "inside.txt").stat().st_uid == os.getuid()


def test_symlink_in_workdir_does_not_redirect_chown(layer, workdir, outside_dirs):
    ro, _ = outside_dirs
    target = ro / "victim.txt"
    target.write_text("host file")
    (workdir / "link").symlink_to(target)
    res, out, err = run_py("""
        try:
            open("link", "w").write("pwned"); print("wrote")
        except OSError:
            print("denied")
    """, workdir, layer)
    assert res.exit_code == 0, err
    assert target.stat().st_uid == os.getuid()
    if layer in ISOLATING:
        assert out.strip() == "denied" and target.read_text() == "host file"


HEARTBEAT = """
    import os, sys, time
    beat = sys.argv[1]
    if os.fork() == 0:
        os.setsid()  # leaves the process group: killpg alone would miss it
        n = 0
        while True:
            n += 1
            with open(beat + ".tmp", "w") as f:
                f.write(str(n))
            os.replace(beat + ".tmp", beat)
            time.sleep(0.05)
    while not os.path.exists(beat):
        time.sleep(0.01)
    print("grandchild running", flush=True)
"""


def assert_heartbeat_stopped(beat: Path) -> None:
    assert beat.exists(), "the grandchild never ran"
    first = beat.read_text()
    time.sleep(0.4)
    assert beat.read_text() == first, "a grandchild outlived the run"


def test_wall_limit_kills_tree_including_setsid_grandchild(layer, workdir):
    beat = workdir / "heartbeat"
    start = time.monotonic()
    res, out, err = run_py(textwrap.dedent(HEARTBEAT) + "time.sleep(60)\n", workdir, layer, args=[str(beat)],
                           limits=Limits(wall_s=1.0))
    assert res.timed_out and res.signal == signal.SIGKILL and res.exit_code is None, err
    assert time.monotonic() - start < 3.0
    assert out.strip() == "grandchild running"
    assert_heartbeat_stopped(beat)
    assert res.leftovers_killed >= 1


def test_detached_grandchild_killed_after_normal_exit(layer, workdir):
    beat = workdir / "heartbeat"
    res, out, err = run_py(HEARTBEAT, workdir, layer, args=[str(beat)], limits=Limits(wall_s=20))
    # Output goes to files, so the run ends with the parent even though the
    # grandchild never exits and inherited stdout.
    assert res.exit_code == 0 and not res.timed_out, err
    assert out.strip() == "grandchild running"
    assert_heartbeat_stopped(beat)


def test_fork_bomb_bounded_or_swept(layer, workdir):
    limit, cap = 40, 120
    pids_file = workdir / "pids.txt"
    res, out, err = run_py(f"""
        import os, time
        made = 0
        for _ in range({cap}):
            try:
                pid = os.fork()
            except OSError:
                break
            if pid == 0:
                with open({str(pids_file)!r}, "a") as f:
                    f.write(f"{{os.getpid()}}\\n")
                time.sleep(20)
                os._exit(0)
            made += 1
        print(made)
    """, workdir, layer, limits=Limits(wall_s=15, processes=limit))
    assert res.exit_code == 0, err
    made = int(out.strip())
    if res.uid >= RUN_UID_BASE or os.geteuid() != 0:
        assert made < limit  # RLIMIT_NPROC stopped it
    else:
        assert made == cap  # root ignores RLIMIT_NPROC: only the sweep helps
    if layer == "rlimits":
        assert res.leftovers_killed >= made
        time.sleep(0.1)
        for pid in map(int, pids_file.read_text().split()):
            stat = Path(f"/proc/{pid}/stat")
            assert not stat.exists() or stat.read_text().split(") ")[1].startswith("Z")


def test_file_size_limit(layer, workdir):
    res, out, err = run_py("""
        import errno
        try:
            with open("big.bin", "wb") as f:
                f.write(b"x" * (3 * 1024 * 1024))
            print("WROTE")
        except OSError as exc:
            print("EFBIG" if exc.errno == errno.EFBIG else exc)
    """, workdir, layer, limits=Limits(wall_s=20, file_size_mb=1))
    assert out.strip() == "EFBIG", err
    assert (workdir / "big.bin").stat().st_size <= 1024 * 1024


def test_memory_limit(layer, workdir):
    res, out, err = run_py("""
        try:
            block = bytearray(512 * 1024 * 1024)
            print("ALLOCATED")
        except MemoryError:
            print("MemoryError")
    """, workdir, layer, limits=Limits(wall_s=20, memory_mb=256))
    assert out.strip() == "MemoryError", err


def test_cpu_limit_delivers_sigxcpu(layer, workdir):
    res, out, err = run_py("while True:\n    pass\n", workdir, layer, limits=Limits(wall_s=30, cpu_s=1))
    # SIGXCPU at the soft limit; SIGKILL at the hard one if it were ignored.
    assert not res.timed_out
    assert res.signal == signal.SIGXCPU, (res, err)
