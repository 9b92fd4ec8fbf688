from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from tui_demo import build_demo  # noqa: E402


@pytest.fixture(scope="session")
def demo_template(tmp_path_factory) -> Path:
    """Built once per session; tests copy it so each gets a fresh store."""
    return build_demo(tmp_path_factory.mktemp("demo") / "wb")


@pytest.fixture
def demo_wb(demo_template: Path, tmp_path: Path, monkeypatch):
    import shutil

    from benchtui.workbench.layout import find_workbench

    dest = tmp_path / "wb"
    shutil.copytree(demo_template, dest)
    monkeypatch.setenv("BENCHTUI_CONFIG", str(tmp_path / "no-keys.toml"))
    monkeypatch.setenv("BENCHTUI_GRADER", "reviewer")
    return find_workbench(str(dest), None, dest)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    """Run ``async def`` tests in this folder with asyncio.run (no asyncio plugin needed)."""
    import asyncio
    import inspect

    if not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    args = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    asyncio.run(pyfuncitem.obj(**args))
    return True
