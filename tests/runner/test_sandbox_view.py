"""Least privilege: a sandboxed process sees its scratch copy, the interpreter,
the system's libraries, benchtui's engine and (on a GPU) the driver and the
toolkit, and nothing else of the filesystem, on both isolating layers.

Files are placed where a run must not reach them (a folder under /srv and
one under /opt, another workbench and a deck in a temporary folder outside
/tmp, a file in $HOME, benchtui's own challenges) and the payload tries to
read each. bwrap is not installed on every machine: its argv is checked
against the same places, and it runs too where it is installed."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest
from benchtui.host import resources
from benchtui.runner import sandbox, sandbox_view
from benchtui.runner.sandbox import Limits, probe_layers, run_sandboxed

pytestmark = pytest.mark.sandbox
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(params=["bwrap", "unshare"])
def layer(request) -> str:
    status = {s.name: s for s in probe_layers()}[request.param]
    if not status.works:
        pytest.skip(f"{status.name} does not work here: {status.detail}")
    return request.param


def writable_places(*candidates: Path, first: bool = False) -> list[Path]:
    """Fresh folders under those of ``candidates`` this user may write in (all, as
    root); with ``first``, under the first such one only."""
    tag = uuid.uuid4().hex[:8]
    made = []
    for parent in candidates:
        try:
            (parent / f"benchtui-view-{tag}").mkdir()
        except OSError:
            continue
        made.append(parent / f"benchtui-view-{tag}")
        if first:
            break
    return made


@pytest.fixture
def outside():
    """Secrets outside every folder an answer needs (a folder under /srv and one
    under /opt where this user may write there, another workbench and a deck in a
    temporary folder outside /tmp, a file in $HOME); removed afterwards."""
    made = writable_places(Path("/srv"), Path("/opt"), Path("/var/tmp"), Path.home())
    files = {}
    for folder in made:
        where = "home" if folder.parent == Path.home() else folder.parent.name
        if where == "tmp":
            files["other workbench"] = folder / "wb" / "models" / "someone" / "kv" / "cache.py"
            files["other store"] = folder / "wb" / "store.db"
            files["deck"] = folder / "deck" / "level1" / "1_matmul.py"
        else:
            files[where] = folder / "data" / "secret.txt"
    for f in files.values():
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text("secret\n")
    files["bundled challenge"] = resources.bundled_challenges() / "kv" / "reference.py"
    files["passwd"] = Path("/etc/passwd")
    yield files
    for folder in made:
        shutil.rmtree(folder, ignore_errors=True)


PROBE = """
import json, os, subprocess, sys
paths = json.loads(sys.argv[1])
seen = {}
for name, path in paths.items():
    try:
        with open(path) as fh:
            seen[name] = "read " + fh.read(20)
    except OSError as exc:
        seen[name] = type(exc).__name__
    seen[name + " folder"] = os.path.exists(os.path.dirname(path))
import numpy, benchtui.verify.wire  # the interpreter's packages and benchtui's engine
seen["c++"] = subprocess.run(["c++", "--version"], capture_output=True, text=True).returncode
with open("made-here.txt", "w") as fh:
    fh.write("ok")
seen["root"] = sorted(os.listdir("/"))
print(json.dumps(seen))
"""


def run_probe(layer: str, tmp_path: Path, paths: dict, **kw) -> dict:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    (work / "probe.py").write_text(PROBE)
    out, err = tmp_path / "out.txt", tmp_path / "err.txt"
    kw.setdefault("ro_paths", [resources.ENGINE_DIR])
    kw.setdefault("hide_paths", resources.install_folders())
    res = run_sandboxed([sys.executable, "probe.py", json.dumps({k: str(v) for k, v in paths.items()})],
                        workdir=work, limits=Limits(wall_s=60), layer=layer, stdout_path=out, stderr_path=err, **kw)
    assert res.exit_code == 0, err.read_text()
    return json.loads(out.read_text())


def test_an_answer_reads_nothing_outside_its_view(layer, tmp_path, outside):
    seen = run_probe(layer, tmp_path, outside)
    for name, path in outside.items():
        assert path.is_file()  # it is there; the payload cannot see it
        assert seen[name] == "FileNotFoundError", (name, seen[name])
    for name in {"srv", "opt", "other workbench", "deck", "home"} & set(outside):
        assert seen[name + " folder"] is False, name
    # ... and still has what an answer needs
    assert seen["c++"] == 0 and (tmp_path / "work" / "made-here.txt").read_text() == "ok"
    # the root holds the view's entries and the sandbox's own /tmp, /dev and /proc, nothing more
    plan = sandbox.view(tmp_path / "work", [resources.ENGINE_DIR], hide_paths=resources.install_folders())
    assert set(seen["root"]) == {b.path.parts[1] for b in plan} | {"tmp", "dev", "proc"}


def test_a_compiler_and_the_interpreters_headers_are_in_view(layer, tmp_path):
    """What torch's load_inline needs to build on the CPU: c++ (behind /etc/alternatives
    on Debian) and Python.h in the base prefix. A whole build takes ~30 s: run by hand."""
    work = tmp_path / "work"
    work.mkdir()
    code = ("import subprocess, sysconfig; inc = sysconfig.get_paths()['include']; "
            "subprocess.run(['c++', '-fsyntax-only', '-x', 'c++', '-I', inc, '-'], input='#include <Python.h>\\nint main() {}\\n', "
            "text=True, check=True); print('compiled')")
    res = run_sandboxed([sys.executable, "-c", code], workdir=work, limits=Limits(wall_s=120, memory_mb=None), layer=layer,
                        stdout_path=tmp_path / "out", stderr_path=tmp_path / "err")
    assert res.exit_code == 0, (tmp_path / "err").read_text()
    assert (tmp_path / "out").read_text().strip() == "compiled"


def bind_sources(argv: list[str]) -> list[Path]:
    return [Path(argv[i + 1]) for i, a in enumerate(argv) if a in ("--bind", "--ro-bind", "--dev-bind-try")]


def test_the_bwrap_argv_binds_nothing_outside_the_view(tmp_path, outside):
    work = tmp_path / "work"
    work.mkdir()
    plan = sandbox.view(work, [resources.ENGINE_DIR], hide_paths=resources.install_folders())
    argv = sandbox._bwrap_argv(["true"], plan, False)
    sources = bind_sources(argv)
    assert Path("/") not in sources
    wanted = {sandbox_view.real_path(Path(p))[0] for p in
              [*sandbox_view.SYSTEM_PATHS, *sandbox_view.ETC_PATHS, *sandbox_view.SYS_PATHS,
               *sandbox_view.interpreter_paths(), resources.ENGINE_DIR, work]}
    assert set(sources) <= wanted, set(sources) - wanted
    for name, path in outside.items():
        if name != "passwd":
            assert not any(path.is_relative_to(s) for s in sources), (name, path)
    assert Path("/etc/passwd") not in sources and Path("/etc") not in sources
    # every folder above a bind is made 0755: the run's uid must pass through a home that is 0700
    prefix = sandbox_view.real_path(Path(sys.base_prefix))[0]
    for folder in prefix.parents:
        if folder != Path("/") and not any(folder.is_relative_to(s) for s in sources):
            assert ["--perms", "0755", "--dir", str(folder)] in [argv[i:i + 4] for i in range(len(argv))]
    assert argv[argv.index("--remount-ro") + 1] == "/"  # nobody writes into the fresh root's folders
    script = sandbox._unshare_argv(["true"], plan, False)[-3]
    assert "mount -o remount,bind,ro /mnt/r\n" in script and "rbind,ro" in script and " / /mnt/r " not in script


def test_links_on_the_way_to_a_bound_path_are_made_again(layer, tmp_path):
    # A prefix reached through a link (/usr/local/cuda -> cuda-12.4, a venv's
    # bin/python -> the base interpreter): the link is made where no bind shows it.
    real = tmp_path / "lib-1.2"
    (real / "share").mkdir(parents=True)
    (real / "share" / "data.txt").write_text("through the link\n")
    alias = tmp_path / "lib"
    alias.symlink_to("lib-1.2")
    plan = sandbox_view.plan(ro=[(alias / "share", "test")])
    assert sandbox_view.Bind(real / "share", False) in plan
    assert sandbox_view.Bind(alias, False, link="lib-1.2") in plan
    work = tmp_path / "work"
    work.mkdir()
    res = run_sandboxed(["/bin/cat", str(alias / "share" / "data.txt")], workdir=work, limits=Limits(wall_s=30),
                        layer=layer, ro_paths=[alias / "share"], stdout_path=tmp_path / "out", stderr_path=tmp_path / "err")
    assert res.exit_code == 0, (tmp_path / "err").read_text()
    assert (tmp_path / "out").read_text() == "through the link\n"


def test_real_path_follows_links_as_the_kernel_does(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "up").symlink_to(tmp_path / "a" / "b")
    (tmp_path / "rel").symlink_to("up/..")
    got, links = sandbox_view.real_path(tmp_path / "rel" / "b")
    assert got == Path(os.path.realpath(tmp_path / "rel" / "b")) == tmp_path / "a" / "b"
    assert links == [(tmp_path / "rel", "up/.."), (tmp_path / "up", str(tmp_path / "a" / "b"))]
    (tmp_path / "loop").symlink_to("loop")
    with pytest.raises(OSError):
        sandbox_view.real_path(tmp_path / "loop")


@pytest.fixture
def fake_toolkit(monkeypatch):
    """An nvcc under /opt reached through a link, as /usr/local/cuda -> cuda-12.x,
    that answers its dry run as nvcc does; and driver libraries in a folder of their own."""
    base = writable_places(Path("/opt"), Path("/var/tmp"), first=True)[0]
    root = base / "cuda-9.9"
    (root / "bin").mkdir(parents=True)
    (root / "include").mkdir()
    (root / "include" / "cuda.h").write_text("/* header */\n")
    nvcc = root / "bin" / "nvcc"
    nvcc.write_text(textwrap.dedent(f"""\
        #!/bin/sh
        case "$1" in -dryrun) echo '#$ TOP={root}/bin/..' >&2; exit 0;; esac
        cat {root}/include/cuda.h
        """))
    nvcc.chmod(0o755)
    (base / "cuda").symlink_to("cuda-9.9")
    drivers = base / "driver"
    drivers.mkdir()
    (drivers / "libcuda.so.1").write_text("")
    monkeypatch.setenv("NVCC", str(base / "cuda" / "bin" / "nvcc"))
    monkeypatch.setattr(sandbox_view, "driver_libraries", lambda: (drivers / "libcuda.so.1",))
    monkeypatch.setattr(sandbox, "_gpu_devices", lambda: [])
    sandbox_view.toolkit_root.cache_clear()
    yield base
    sandbox_view.toolkit_root.cache_clear()
    shutil.rmtree(base)


def test_a_gpu_run_sees_the_toolkit_and_the_driver_and_a_cpu_run_does_not(fake_toolkit, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    root = fake_toolkit / "cuda-9.9"
    gpu = sandbox.view(work, gpu=True)
    assert sandbox_view.Bind(root, False) in gpu and sandbox_view.Bind(fake_toolkit / "driver", False) in gpu
    assert sandbox_view.Bind(fake_toolkit / "cuda", False, link="cuda-9.9") in gpu
    assert sandbox_view.Bind(Path("/sys"), False) in gpu
    cpu = sandbox.view(work, gpu=False)
    assert not any(b.path.is_relative_to(fake_toolkit) for b in cpu)
    argv = sandbox._bwrap_argv(["true"], gpu, True)
    assert {root, fake_toolkit / "driver"} <= set(bind_sources(argv))


def test_nvcc_outside_the_system_folders_runs_in_a_gpu_sandbox(layer, fake_toolkit, tmp_path):
    """A CUDA answer is built with the nvcc benchtui finds; a CPU stand-in for the device."""
    work = tmp_path / "work"
    work.mkdir()
    code = ("from benchtui.verify.cuda.build import find_nvcc; import subprocess; n = find_nvcc(); "
            "print(n); print(subprocess.run([n], capture_output=True, text=True).stdout.strip() if n else None)")
    out = {}
    for gpu in (True, False):
        res = run_sandboxed([sys.executable, "-c", code], workdir=work, limits=Limits(wall_s=60, memory_mb=None),
                            layer=layer, gpu=gpu, ro_paths=[resources.ENGINE_DIR], env={"NVCC": os.environ["NVCC"]},
                            stdout_path=tmp_path / "out", stderr_path=tmp_path / "err")
        assert res.exit_code == 0, (tmp_path / "err").read_text()
        out[gpu] = (tmp_path / "out").read_text().split("\n")
    assert out[True][:2] == [os.environ["NVCC"], "/* header */"]
    assert out[False][0] != os.environ["NVCC"]  # not there without a GPU: the toolkit is not in the view


def test_a_gpu_sandbox_finds_the_toolkit_on_path_and_in_cuda_home(layer, fake_toolkit, tmp_path):
    """What an answer's own build reaches for (``nvcc`` on PATH, torch's CUDA_HOME) is the
    toolkit the view binds, though its nvcc is in no system folder; a CPU run gets neither."""
    from benchtui.runner.bundle import sandbox_env

    work = tmp_path / "work"
    work.mkdir()
    root = fake_toolkit / "cuda-9.9"
    code = ("import os, shutil, subprocess; n = shutil.which('nvcc'); print(n); print(os.environ.get('CUDA_HOME')); "
            "print(subprocess.run([n], capture_output=True, text=True).stdout.strip() if n else None)")
    env = sandbox_env(True)
    assert env["CUDA_HOME"] == str(root) and env["PATH"].split(":")[0] == str(root / "bin")
    res = run_sandboxed([sys.executable, "-c", code], workdir=work, limits=Limits(wall_s=60, memory_mb=None),
                        layer=layer, gpu=True, ro_paths=[resources.ENGINE_DIR], env=env,
                        stdout_path=tmp_path / "out", stderr_path=tmp_path / "err")
    assert res.exit_code == 0, (tmp_path / "err").read_text()
    assert (tmp_path / "out").read_text().split("\n")[:3] == [str(root / "bin" / "nvcc"), str(root), "/* header */"]
    assert not {"CUDA_HOME", "PATH"} & set(sandbox_env(False))


def test_driver_libraries_come_from_the_loaders_cache():
    listing = textwrap.dedent("""\
        1234 libs found in cache `/etc/ld.so.cache'
        \tlibz.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libz.so.1
        \tlibcuda.so.1 (libc6,x86-64) => /run/nvidia/driver/lib64/libcuda.so.1
        \tlibnvidia-ml.so.1 (libc6,x86-64) => /run/nvidia/driver/lib64/libnvidia-ml.so.1
        \tlibcudart.so.12 (libc6,x86-64) => /usr/local/cuda/lib64/libcudart.so.12
        """)
    assert sandbox_view.driver_libraries_in(listing) == (
        Path("/run/nvidia/driver/lib64/libcuda.so.1"), Path("/run/nvidia/driver/lib64/libnvidia-ml.so.1"))


def test_doctor_says_what_an_answer_can_see(monkeypatch):
    from benchtui.commands import doctor

    rows = doctor.answer_sees(gpu=False)
    by_path = {r["path"]: r for r in rows}
    assert by_path["/usr"]["access"] == "read-only"
    assert by_path[str(resources.ENGINE_DIR)]["why"] == "benchtui's engine"
    assert by_path[str(sandbox_view.real_path(Path(sys.base_prefix))[0])]["why"] == "interpreter"
    assert not any(Path(p) == Path.home() or Path(p) in (Path("/etc"), Path("/opt"), Path("/srv"), REPO) for p in by_path)
    assert [r["path"] for r in rows] == [str(b.path) for b in sandbox.view(None, [resources.ENGINE_DIR],
                                                                          hide_paths=resources.install_folders())]
    report = {"sandbox": {"active": "unshare", "layers": [], "answer_sees": rows}}
    text = "\n".join(doctor._answer_sees_lines(report["sandbox"]["answer_sees"]))
    assert "an answer's process sees only" in text and f"ro {resources.ENGINE_DIR}: benchtui's engine" in text


def test_the_doctor_json_carries_the_view(tmp_path):
    res = subprocess.run([sys.executable, "-m", "benchtui", "doctor", "--json"], capture_output=True, text=True,
                         cwd=tmp_path, timeout=120)
    assert res.returncode == 0, res.stderr
    rows = json.loads(res.stdout)["sandbox"]["answer_sees"]
    assert {"path": "/usr", "access": "read-only", "why": "system"} in rows


def test_through_a_run_the_answers_process_finds_none_of_them(tmp_path, outside):
    """The real pipeline: the answer's sandbox as the runner asks for it (its
    workbench, the challenges and benchtui's checkout hidden, the engine bound)."""
    from benchtui.runner.orchestrate import run_answers
    from benchtui.store.database import Store
    from benchtui.workbench.layout import find_workbench
    from benchtui.workbench.scan import scan_workbench

    root = tmp_path / "wb"
    shutil.copytree(REPO / "challenges" / "backwards", root / "challenges" / "backwards")
    folder = root / "models" / "reader" / "backwards"
    folder.mkdir(parents=True)
    targets = {**{k: str(v) for k, v in outside.items()}, "own workbench": str(root / "challenges" / "backwards" / "reference.py")}
    (folder / "layernorm.py").write_text(textwrap.dedent(f"""
        import numpy as np
        for name, path in {targets!r}.items():
            try:
                open(path).close()
                print("FOUND", name)
            except OSError:
                print("hidden", name)

        def forward(x, gamma, beta, eps=1e-5):
            return np.zeros_like(x), (x, gamma)

        def backward(dy, cache):
            x, gamma = cache
            return np.zeros_like(x), np.zeros_like(gamma), np.zeros_like(gamma)
        """), encoding="utf-8")
    wb = find_workbench(str(root), None, Path.cwd())
    with Store(wb.store_path) as store:
        scan_workbench(wb, store, index_transcripts=False)
    event = run_answers(wb, [("reader", "backwards")], self_check=False, timeout_s=60)[0]
    with Store(wb.store_path) as store:
        stdout = store.query("select stdout from runs where id = ?", (event.run_id,))[0]["stdout"] or ""
    assert sorted(line.split(" ", 1)[1] for line in stdout.splitlines() if line.startswith("hidden ")) == sorted(targets), stdout
    assert "FOUND" not in stdout


def test_a_link_inside_a_hidden_folder_is_made_after_its_mask(layer, tmp_path):
    # site-packages bound, benchtui's bundled/ inside it hidden, and an adapter the run
    # names through a link that sits inside the hidden folder
    prefix = tmp_path / "prefix"
    hidden = prefix / "hidden"
    (prefix / "real").mkdir(parents=True)
    hidden.mkdir()
    (prefix / "real" / "adapter.py").write_text("adapter\n")
    (hidden / "secret.txt").write_text("secret\n")
    (hidden / "link").symlink_to("../real")
    work = tmp_path / "work"
    work.mkdir()
    plan = sandbox.view(work, [prefix, hidden / "link" / "adapter.py"], hide_paths=[hidden])
    assert [b for b in plan if b.path == hidden] == [sandbox_view.Bind(hidden, False, mask=True)]
    assert sandbox_view.in_mask(sandbox_view.Bind(hidden / "link", False, link="../real"), plan)
    assert sandbox_view.Bind(hidden / "link", False, link="../real") in plan
    res = run_sandboxed(["/bin/sh", "-c", f"cat {hidden}/link/adapter.py; cat {hidden}/secret.txt || echo hidden"],
                        workdir=work, limits=Limits(wall_s=30), layer=layer,
                        ro_paths=[prefix, hidden / "link" / "adapter.py"], hide_paths=[hidden],
                        stdout_path=tmp_path / "out", stderr_path=tmp_path / "err")
    assert res.exit_code == 0, (tmp_path / "err").read_text()
    assert (tmp_path / "out").read_text() == "adapter\nhidden\n"
