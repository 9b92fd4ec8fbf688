"""benchtui installs one import package, ``benchtui``, and shares no top-level
name with anything else: a ``tui`` or ``engine`` package of someone else's,
earlier on sys.path, neither breaks benchtui nor is broken by it."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SOURCES = ("engine", "tui", "challenges", "models", "pyproject.toml", "README.md", "LICENSE")


def test_every_package_and_mapping_is_under_benchtui():
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    names = [*config["packages"], *config["package-dir"], *config["package-data"]]
    assert names and all(n == "benchtui" or n.startswith("benchtui.") for n in names), names
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"benchtui": "benchtui.cli:main"}


def test_the_wheel_holds_one_top_level_package(tmp_path):
    pytest.importorskip("setuptools", minversion="77", reason="building the wheel offline needs setuptools>=77 here")
    src = tmp_path / "src"
    src.mkdir()
    for name in SOURCES:
        (shutil.copytree if (REPO / name).is_dir() else shutil.copy2)(
            REPO / name, src / name, **({"ignore": shutil.ignore_patterns("__pycache__", "store.db*")}
                                      if (REPO / name).is_dir() else {}))
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                          "-w", str(tmp_path / "dist"), str(src)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    wheel = next((tmp_path / "dist").glob("benchtui-*.whl"))
    with zipfile.ZipFile(wheel) as z:
        tops = {n.split("/")[0] for n in z.namelist()}
        names = set(z.namelist())
    assert {t for t in tops if not t.endswith(".dist-info")} == {"benchtui"}, tops
    assert {"benchtui/__init__.py", "benchtui/tui/app.py", "benchtui/tui/app.tcss",
            "benchtui/bundled/challenges/kv/PROMPT.md", "benchtui/bundled/demo/demo-careful/kv/kv_cache.py"} <= names


def test_a_foreign_tui_and_engine_earlier_on_the_path_change_nothing(tmp_path):
    foreign = tmp_path / "foreign"
    for name in ("tui", "engine"):
        (foreign / name).mkdir(parents=True)
        (foreign / name / "__init__.py").write_text(f"WHOSE = 'someone else\\'s {name}'\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(foreign), os.environ.get("PYTHONPATH")]))}
    probe = ("import benchtui.tui.app, benchtui.cli, benchtui.host.resources as r, tui, engine\n"
             "print(tui.WHOSE, '|', engine.WHOSE, '|', r.bundled_challenges().name)")
    out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "someone else's tui | someone else's engine | challenges"
    version = subprocess.run([sys.executable, "-m", "benchtui", "--version"], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=120)
    assert version.returncode == 0 and version.stdout.startswith("benchtui "), version.stderr
