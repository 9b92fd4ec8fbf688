"""Shared fixtures: small workbenches built in tmp dirs, and the demo workbench."""
from __future__ import annotations

import os

# One BLAS thread, as inside the sandbox: on 2 cores, suites run in-process
# with OpenBLAS's default threads cost several times the CPU (set before numpy loads).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def demo_workbench(tmp_path) -> Path:
    """A copy of the bundled demo workbench (models/ + challenges/)."""
    root = tmp_path / "demo"
    shutil.copytree(REPO / "models", root / "models")
    shutil.copytree(REPO / "challenges", root / "challenges")
    return root


@pytest.fixture
def challenge_prompts() -> dict[str, str]:
    return {d.name: (d / "PROMPT.md").read_text(encoding="utf-8")
            for d in sorted((REPO / "challenges").iterdir()) if (d / "PROMPT.md").is_file()}


def pytest_configure(config):
    """Under xdist (``-n 2``), tests marked ``xdist_group`` go to one worker together:
    a module fixture that runs a whole benchmark (tests/published) then runs once,
    not once on each worker. Other tests are spread as by the default ``load``."""
    if hasattr(config, "workerinput"):  # a worker names each grouped test with its group, for the controller
        config.option.loadgroup = os.environ.get(_LOADGROUP) == "1"
    elif getattr(config.option, "dist", "no") == "load":
        config.option.dist = "loadgroup"
        os.environ[_LOADGROUP] = "1"  # the workers, started after this, inherit it


_LOADGROUP = "BENCHTUI_TESTS_LOADGROUP"


def pytest_runtest_setup(item):
    """A test that starts sandboxed processes is skipped, with the reason, where no
    isolating layer works (no bwrap, no user namespaces): the machine's lack, not a failure."""
    if item.get_closest_marker("sandbox") is None:
        return
    from benchtui.runner import sandbox

    try:
        sandbox.choose_layer("auto")
    except sandbox.SandboxUnavailable as exc:
        pytest.skip(f"no isolating sandbox layer here: {exc}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """``BENCHTUI_REQUIRE_GPU=1`` (a GPU machine's acceptance run): a `gpu` test that
    skips is a failure, so a check that ran no GPU test cannot come out green."""
    outcome = yield
    report = outcome.get_result()
    if (report.skipped and os.environ.get("BENCHTUI_REQUIRE_GPU") == "1"
            and item.get_closest_marker("gpu") is not None):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"BENCHTUI_REQUIRE_GPU=1: a gpu test skipped: {reason}"
