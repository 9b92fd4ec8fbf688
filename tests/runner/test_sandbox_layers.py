"""Layer probing and choice, and the plain contract of run_sandboxed: exit codes,
signals, output files, environment, GPU device pass-through."""
from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest
from benchtui.runner import sandbox
from benchtui.runner.sandbox import (
    LAYERS,
    LayerStatus,
    Limits,
    SandboxUnavailable,
    choose_layer,
    describe_layers,
    probe_layers,
    run_sandboxed,
)

pytestmark = pytest.mark.sandbox


@pytest.fixture(params=LAYERS)
def layer(request) -> str:
    status = {s.name: s for s in probe_layers()}[request.param]
    if not status.works:
        pytest.skip(f"{status.name} does not work here: {status.detail}")
    return request.param


@pytest.fixture
def fake_probe(monkeypatch):
    """Replace the probe cache with chosen statuses: (works, blocks_network) per layer."""
    def install(**layers: tuple[bool, bool]) -> None:
        cache = [LayerStatus(n, *layers.get(n, (False, False)), detail=f"{n} fake") for n in LAYERS]
        monkeypatch.setattr(sandbox, "_probe_cache", cache)
    return install


def run(argv, tmp_path, layer, **kw):
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    limits = kw.pop("limits", Limits(wall_s=20))
    res = run_sandboxed(argv, workdir=work, limits=limits, layer=layer,
                        stdout_path=tmp_path / "out.txt", stderr_path=tmp_path / "err.txt", **kw)
    return res, (tmp_path / "out.txt").read_text(), (tmp_path / "err.txt").read_text()


def test_probe_reports_every_layer_and_isolation():
    statuses = probe_layers()
    assert [s.name for s in statuses] == list(LAYERS)
    by_name = {s.name: s for s in statuses}
    assert by_name["rlimits"].works and not by_name["rlimits"].blocks_network
    for s in statuses:
        if s.works and s.name != "rlimits":
            assert s.blocks_network, s
    assert probe_layers() == statuses  # cached


def test_auto_picks_strongest_isolating_layer(fake_probe):
    fake_probe(bwrap=(True, True), unshare=(True, True), rlimits=(True, False))
    assert choose_layer() == "bwrap"
    fake_probe(bwrap=(False, False), unshare=(True, True), rlimits=(True, False))
    assert choose_layer("auto") == "unshare"
    fake_probe(bwrap=(True, False), unshare=(True, True), rlimits=(True, False))
    assert choose_layer() == "unshare"  # a layer that leaks the network never counts as isolating


def test_rlimits_needs_the_unsafe_flag(fake_probe):
    fake_probe(bwrap=(True, True), rlimits=(True, False))
    with pytest.raises(SandboxUnavailable, match="unsafe"):
        choose_layer("rlimits")
    assert choose_layer("rlimits", allow_unsafe=True) == "rlimits"
    fake_probe(rlimits=(True, False))
    with pytest.raises(SandboxUnavailable) as info:
        choose_layer()
    message = str(info.value)
    assert "bubblewrap" in message and "\n" not in message
    assert choose_layer(allow_unsafe=True) == "rlimits"


def test_choose_rejects_unknown_and_broken_layers(fake_probe):
    fake_probe(bwrap=(False, False), rlimits=(True, False))
    with pytest.raises(SandboxUnavailable, match="bwrap fake"):
        choose_layer("bwrap")
    with pytest.raises(ValueError):
        choose_layer("docker")


def test_describe_layers_marks_the_active_one(fake_probe):
    fake_probe(bwrap=(False, False), unshare=(True, True), rlimits=(True, False))
    rows = describe_layers()
    assert [r["name"] for r in rows] == list(LAYERS)
    assert [r["active"] for r in rows] == [False, True, False]
    assert set(rows[0]) == {"name", "works", "blocks_network", "detail", "active"}
    fake_probe(rlimits=(True, False))
    assert not any(r["active"] for r in describe_layers())
    assert [r["active"] for r in describe_layers(allow_unsafe=True)] == [False, False, True]


def test_exit_code_and_output_files(layer, tmp_path):
    code = "import sys; print('to out'); print('to err', file=sys.stderr); sys.exit(3)"
    res, out, err = run([sys.executable, "-c", code], tmp_path, layer)
    assert (res.exit_code, res.signal, res.timed_out, res.layer) == (3, None, False, layer)
    assert out == "to out\n" and err == "to err\n"
    assert res.stdout_path == tmp_path / "out.txt" and res.wall_s > 0


def test_death_by_signal_is_reported(layer, tmp_path):
    res, _, _ = run([sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"],
                    tmp_path, layer)
    assert (res.exit_code, res.signal, res.timed_out) == (None, signal.SIGTERM, False)


def test_environment_is_the_fixed_set_plus_extras(layer, tmp_path):
    code = "import json, os; print(json.dumps(dict(os.environ)))"
    res, out, err = run([sys.executable, "-c", code], tmp_path, layer, env={"PYTHONPATH": "/opt/x"})
    assert res.exit_code == 0, err
    import json
    env = json.loads(out)
    for key, value in sandbox.BASE_ENV.items():
        assert env[key] == value
    assert env["PYTHONPATH"] == "/opt/x"
    allowed = set(sandbox.BASE_ENV) | {"HOME", "PYTHONPATH", "PWD", "OLDPWD", sandbox.TOKEN_VAR}
    assert set(env) <= allowed


def test_runs_in_workdir_at_its_own_path(layer, tmp_path):
    res, out, _ = run([sys.executable, "-c", "import os; print(os.getcwd())"], tmp_path, layer)
    assert out.strip() == str((tmp_path / "work").resolve())


def test_missing_workdir_and_unknown_layer_fail_fast(tmp_path):
    with pytest.raises(ValueError):
        run_sandboxed(["/bin/true"], workdir=tmp_path, limits=Limits(wall_s=1), layer="docker",
                      stdout_path=tmp_path / "o", stderr_path=tmp_path / "e")
    with pytest.raises(FileNotFoundError):
        run_sandboxed(["/bin/true"], workdir=tmp_path, limits=Limits(wall_s=1), layer="bwrap",
                      rw_paths=[tmp_path / "nope"], stdout_path=tmp_path / "o", stderr_path=tmp_path / "e")


@pytest.mark.parametrize("ns_layer", ["bwrap", "unshare"])
def test_gpu_devices_exposed_only_when_asked(ns_layer, tmp_path, monkeypatch):
    if not {s.name: s for s in probe_layers()}[ns_layer].works:
        pytest.skip(f"{ns_layer} does not work here")
    # No NVIDIA card here: stand in with another character device outside the minimal /dev.
    stand_in = next((Path(p) for p in ("/dev/kvm", "/dev/loop-control", "/dev/tty0") if Path(p).exists()), None)
    if stand_in is None:
        pytest.skip("no spare character device to stand in for /dev/nvidia0")
    monkeypatch.setattr(sandbox, "_gpu_devices", lambda: [stand_in])
    probe = ["/bin/sh", "-c", f"test -c {stand_in} && echo present || echo absent"]
    assert run(probe, tmp_path, ns_layer, gpu=True)[1].strip() == "present"
    assert run(probe, tmp_path, ns_layer, gpu=False)[1].strip() == "absent"


def test_payload_runs_unprivileged_as_root(layer, tmp_path):
    res, out, _ = run(["/bin/sh", "-c", "id -u; grep CapEff /proc/self/status"], tmp_path, layer)
    uid, caps = out.splitlines()
    if os.geteuid() == 0 and layer != "rlimits":
        assert int(uid) == res.uid >= sandbox.RUN_UID_BASE  # RLIMIT_NPROC needs a non-root uid of its own
    elif layer == "unshare":
        assert int(uid) == 0  # mapped root of its own user namespace, without capabilities
    else:
        assert int(uid) == res.uid
    if layer != "rlimits":
        assert caps.split()[1] == "0000000000000000"


def test_a_home_under_tmp_does_not_break_the_layer(layer, tmp_path, monkeypatch):
    # CI containers and scratch users often have HOME under /tmp; the view
    # never binds a home, so nothing is mounted for it inside the fresh /tmp.
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    assert str(home).startswith("/tmp/")
    assert not any(b.path == home for b in sandbox.view(None))
    res, out, err = run(["/bin/sh", "-c", "echo ran"], tmp_path, layer)
    assert res.exit_code == 0 and out == "ran\n", err


def test_a_failed_probe_says_what_failed():
    stderr = ("mount: /mnt/r/tmp/x: mount point does not exist.\n"
              "       dmesg(1) may have more information after failed mount system call.\n")
    assert sandbox._failure_reason(stderr, 32) == "mount: /mnt/r/tmp/x: mount point does not exist."
    assert sandbox._failure_reason("", 1) == "`true` exited 1"
