"""benchtui as a wheel installs it, without a clone.

Building a real wheel here would need the network (build isolation) and
writes build/ into the checkout, so these tests lay out what the wheel
holds (pyproject maps engine/ to benchtui/, tui/ to benchtui/tui/, and
challenges/ and models/ to benchtui/bundled/) in the
site-packages of a throwaway virtualenv under tmp, which is what pipx does
under $HOME: the interpreter's prefix sits under a folder the sandbox hides
and binds back. `.ci/run` builds and installs the real wheel.
"""
from __future__ import annotations

import compileall
import json
import os
import re
import shutil
import site as site_module
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from benchtui.host import resources

REPO = Path(__file__).resolve().parents[2]
SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", "store.db*")

# Looks for its challenge's reference where an installed package lives (next
# to the engine it can import, and anywhere under the interpreter's prefix),
# and hands the reference's answers back as its own.
THIEF = '''
import glob, importlib.util, os, sys
import numpy as np
import benchtui
roots = {os.path.dirname(benchtui.__file__), os.path.dirname(os.path.dirname(benchtui.__file__)), sys.prefix}
found = sorted({p for r in roots for p in glob.glob(os.path.join(r, "**", "backwards", "reference.py"), recursive=True)})
print("FOUND", found)
ref = None
if found:
    spec = importlib.util.spec_from_file_location("stolen_reference", found[0])
    ref = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ref)


def forward(x, gamma, beta, eps=1e-5):
    return ref.forward(x, gamma, beta, eps) if ref else (np.zeros_like(x), (x, gamma))


def backward(dy, cache):
    if ref:
        return ref.backward(dy, cache)
    x, gamma = cache
    return np.zeros_like(x), np.zeros_like(gamma), np.zeros_like(gamma)
'''


def outer_site_dirs() -> list[str]:
    """The site-packages folders of the interpreter running the tests, where the
    user installed benchtui's dependencies: a virtualenv's own (made by venv or
    uv), or the system's outside any virtualenv. Only the folders: their .pth
    files are not read, so an editable install's path to the clone stays out."""
    dirs = list(site_module.getsitepackages())
    # and site folders another .pth put on the path (a virtualenv layered on a shared one)
    dirs += [p for p in sys.path if Path(p).name in ("site-packages", "dist-packages") and p not in dirs]
    if site_module.ENABLE_USER_SITE:
        dirs.append(site_module.getusersitepackages())
    return [d for d in dirs if Path(d).is_dir()]


def fake_install(tmp_path: Path) -> tuple[Path, Path]:
    """A virtualenv whose site-packages holds benchtui laid out as the wheel
    lays it out, and sees the test interpreter's packages (NumPy, Textual,
    sqlite-utils) after its own. `--system-site-packages` would not do: made
    from inside a virtualenv it exposes the base interpreter's packages, not
    the virtualenv's."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "zz_test_interpreter_packages.pth").write_text("".join(f"{d}\n" for d in outer_site_dirs()))
    shutil.copytree(REPO / "engine", site / "benchtui", ignore=SKIP)
    shutil.copytree(REPO / "tui", site / "benchtui" / "tui", ignore=SKIP)
    shutil.copytree(REPO / "challenges", site / "benchtui" / "bundled" / "challenges", ignore=SKIP)
    shutil.copytree(REPO / "models", site / "benchtui" / "bundled" / "demo", ignore=SKIP)
    # pip compiles what it installs; without it each command here compiles benchtui anew.
    # The bundled folders are data the commands copy and hide: left as they are.
    compileall.compile_dir(site / "benchtui", quiet=1, rx=re.compile(re.escape(os.sep + "bundled" + os.sep)))
    return python, site


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, Path]:
    """One install for the module: the tests only run it and read it, and the one that
    checks nothing is written there compares its own before and after."""
    return fake_install(tmp_path_factory.mktemp("install"))


def benchtui(python: Path, cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "BENCHTUI_WORKBENCH")}
    return subprocess.run([str(python), "-m", "benchtui", *args], cwd=cwd, capture_output=True, text=True,
                          env={**clean, **env}, timeout=300)


def test_pyproject_lists_every_package_and_maps_the_bundled_folders():
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    on_disk = {".".join(p.parent.relative_to(REPO).parts) for top in ("engine", "tui") for p in (REPO / top).rglob("__init__.py")}
    on_disk = {"benchtui" + name[len("engine"):] if name.startswith("engine") else "benchtui." + name for name in on_disk}
    assert on_disk <= set(config["packages"]), f"add to pyproject's packages: {sorted(on_disk - set(config['packages']))}"
    assert config["package-dir"] == {"benchtui": "engine", "benchtui.tui": "tui",
                                     f"{resources.DATA_PACKAGE}.challenges": "challenges", f"{resources.DATA_PACKAGE}.demo": "models"}


def test_installed_benchtui_finds_its_files_in_site_packages_and_never_writes_there(tmp_path, installed):
    python, site = installed
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    probe = benchtui(python, elsewhere, "doctor", "--json", BENCHTUI_DATA_DIR=str(tmp_path / "data"))
    assert probe.returncode == 0, probe.stderr
    where = json.loads(probe.stdout)["paths"]
    assert where["installed"] is True
    assert where["engine"] == str(site / "benchtui")
    assert where["challenges"] == str(site / "benchtui" / "bundled" / "challenges")
    assert where["user_data"] == str(tmp_path / "data")
    assert where["workbench"] is None and "is not a workbench" in where["workbench_error"]

    before = sorted(p for p in (site / "benchtui" / "bundled").rglob("*"))
    demo = benchtui(python, elsewhere, "demo", "--no-open", BENCHTUI_DATA_DIR=str(tmp_path / "data"))
    assert demo.returncode == 0, demo.stderr
    placed = tmp_path / "data" / "demo"
    assert sorted(p.name for p in (placed / "models").iterdir()) == sorted(p.name for p in (REPO / "models").iterdir())
    listing = benchtui(python, elsewhere, "--workbench", str(placed), "list", "--json")
    assert listing.returncode == 0, listing.stderr
    assert {"demo-careful", "demo-hasty", "demo-quitter"} <= {m["name"] if isinstance(m, dict) else m
                                                              for m in json.loads(listing.stdout)["models"]}
    # the demo's own worked example (bundled = false) travels with it, and only there
    assert [p.name for p in (placed / "challenges").iterdir()] == ["top_p"]
    assert "top_p" in json.loads(listing.stdout)["challenges"]
    assert (placed / "store.db").is_file()

    # What an answer's process must not see: benchtui's folders in site-packages, never
    # site-packages itself (a real install keeps NumPy there).
    hidden = subprocess.run([str(python), "-c", f"""
import json
from pathlib import Path
from benchtui.challenges.definition import RunLimits
from benchtui.records.job import Job
from benchtui.runner.bundle import JobBundle, hidden_from_answers
from benchtui.workbench.layout import find_workbench
wb = find_workbench({str(placed)!r}, None, Path.cwd())
kv = wb.challenges["kv"]
bundle = JobBundle(key="m/kv", model="m", challenge_id="kv", answer_tar=b"", job=Job("kv", "m", 1), limits=RunLimits(),
                   hide=[str(wb.root), str(wb.store_path.parent)])
print(json.dumps([str(p) for p in hidden_from_answers(bundle, kv.path)]))
"""], cwd=elsewhere, capture_output=True, text=True)
    assert hidden.returncode == 0, hidden.stderr
    hidden = set(json.loads(hidden.stdout))
    assert {str(site / "benchtui" / "bundled"), str(site / "benchtui" / "tui"), str(site / "benchtui" / "bundled" / "challenges"), str(placed)} <= hidden
    assert str(site) not in hidden

    # The bundled demo itself, opened in place: its store goes to the user data folder.
    inplace = benchtui(python, elsewhere, "--workbench", str(site / "benchtui" / "bundled" / "demo"), "scan",
                       BENCHTUI_DATA_DIR=str(tmp_path / "data"))
    assert inplace.returncode == 0, inplace.stderr
    bundled_demo = str(site / "benchtui" / "bundled" / "demo")
    for args in (["new-model", "mine"], ["adapter", "new", "demo-hasty", "kv"], ["demo", bundled_demo, "--no-open"]):
        refused = benchtui(python, elsewhere, "--workbench", bundled_demo, *args, BENCHTUI_DATA_DIR=str(tmp_path / "data"))
        assert refused.returncode == 1 and "inside benchtui's installed files, which are never written to" in refused.stderr, \
            (args, refused.stderr)
    assert sorted(p for p in (site / "benchtui" / "bundled").rglob("*")) == before
    assert list((tmp_path / "data" / "stores").glob("demo-*/store.db"))


def test_demo_refuses_a_folder_that_is_not_empty(tmp_path, installed):
    python, _ = installed
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine\n")
    res = benchtui(python, tmp_path, "demo", str(busy), "--no-open")
    assert res.returncode == 1
    assert res.stderr.strip() == f"benchtui: {busy} exists and is not empty; pick an empty or new folder for the demo"
    assert sorted(p.name for p in busy.iterdir()) == ["notes.txt"]


@pytest.mark.sandbox
def test_an_answer_hunting_for_the_installed_reference_does_not_pass(tmp_path, installed):
    python, site = installed
    target = site / "benchtui" / "bundled" / "challenges" / "backwards" / "reference.py"
    assert target.is_file()  # it is there; the answer's process just cannot see it
    wb = tmp_path / "wb"
    (wb / "thief" / "backwards").mkdir(parents=True)
    (wb / "thief" / "backwards" / "layernorm.py").write_text(THIEF, encoding="utf-8")
    # An honest answer beside it, one of them bound by an adapter shipped in the
    # installed package: hiding benchtui's files must leave NumPy and the adapter visible.
    for cid in ("backwards", "kv"):
        shutil.copytree(REPO / "models" / "demo-careful" / cid, wb / "demo-careful" / cid, ignore=SKIP)
    res = benchtui(python, tmp_path, "--workbench", str(wb), "run", "-m", "thief", "-m", "demo-careful",
                   "-c", "backwards", "-c", "kv", "--jobs", "2", "--json")
    assert res.returncode in (0, 1), res.stderr
    for cid in ("backwards", "kv"):
        honest = json.loads(benchtui(python, tmp_path, "--workbench", str(wb), "show", "demo-careful", cid, "--json").stdout)
        assert honest["latest_run"]["verdict"] == "pass", honest["latest_run"]
    adapter = next(c for c in honest["latest_run"]["checks"] if c["name"] == "adapter")
    assert "used plugin adapter challenges/kv/adapters/demo-careful.py" in adapter["message"]  # as from a clone
    shown = benchtui(python, tmp_path, "--workbench", str(wb), "show", "thief", "backwards", "--json")
    run = json.loads(shown.stdout)["latest_run"]
    checks = {c["name"]: c["verdict"] for c in run["checks"]}
    assert run["verdict"] in ("fail", "error"), run
    assert checks["forward"] != "pass" and checks["backward_dx"] != "pass", checks
    import sqlite3

    with sqlite3.connect(wb / "store.db") as db:
        stdout = db.execute("select stdout from runs order by id desc limit 1").fetchone()[0]
    assert "FOUND []" in stdout, stdout
