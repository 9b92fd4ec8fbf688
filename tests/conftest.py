"""Shared fixtures: small workbenches built in tmp dirs, and the demo workbench."""
from __future__ import annotations

import os

# One BLAS thread, as inside the sandbox: on 2 cores, suites run in-process
# with OpenBLAS's default threads cost several times the CPU (set before numpy loads).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

# A speed check measures for at most 0.05 s in the suite's runs (engine/records/job.py's
# host_thresholds; each challenge ships 0.5-1.5 s): no test reads the size of a speed figure,
# and every real run spent that long timing. Sandboxed runs and CLI runs inherit it.
os.environ.setdefault("BENCHTUI_TIMING_BUDGET_S", "0.05")

# Bytecode caches on, even where the environment turns them off (PYTHONDONTWRITEBYTECODE):
# the suite starts hundreds of Python processes (workers, CLI runs, sandboxed checkers)
# and without caches each recompiles the package and pytest re-rewrites every test module
# (collection alone takes 2.5x the CPU). The caches land in git-ignored __pycache__ folders;
# sandboxed processes cannot write there and only read them.
import sys

sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

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


PUBLISHED = REPO.parent / "shared" / "published-benchmark" / "llm_programming_tests"
PUBLISHED_SEED = 20261123
# The speed scenarios of the published run, as the challenge tests size them: each is timed
# for an ``info`` figure that no test reads (its minimum trials still run, so an answer that
# raises there still gets its error), and at the shipped sizes the trials took about a quarter
# of the run's CPU (a pure-Python kv cache takes seconds a trial). The shipped sizes stay
# exercised end to end by the demo matrix (tests/runner/test_demo_matrix.py).
PUBLISHED_SPEED = {
    "backwards": {"speed_shape": "[2, 16, 64]"},
    "flash_attention": {"speed_shape": "[1, 1, 128, 32]", "speed_tile": "64"},
    "flash_attention_bwd": {"speed_shape": "[1, 1, 128, 32]"},
    "kv": {"speed_lengths": "[20, 12, 28, 6]", "speed_heads": "2", "speed_head_dim": "8", "speed_steps": "4"},
    "top_p": {"speed_shape": "[2, 64]"},
}


def set_thresholds(toml: Path, values: dict[str, str]) -> None:
    """Replace ``key = ...`` lines of a challenge.toml; a key not found once fails loudly."""
    import re

    text = toml.read_text()
    for key, value in values.items():
        text, n = re.subn(rf"(?m)^{key}\s*=.*$", f"{key} = {value}", text)
        assert n == 1, f"{key} not found once in {toml}"
    toml.write_text(text)


@pytest.fixture(scope="session")
def published_run(tmp_path_factory):
    """The real published benchmark (beside the repository) on a scratch copy: scanned,
    every answer run in the sandbox (2 jobs, no self-check, a fixed seed) with the
    shipped adapters and the bundled challenges (their speed scenarios shrunk:
    PUBLISHED_SPEED), the README's grades imported. It takes minutes, so it runs once
    per worker: tests that read it carry ``xdist_group("published_run")``."""
    if not PUBLISHED.is_dir():
        pytest.skip(f"the published benchmark is not at {PUBLISHED}")
    import importlib.util

    if importlib.util.find_spec("mlx_lm") is None:
        pytest.skip('pinned verdicts need the ternary extra (mlx-lm): pip install -e ".[test,ternary]"')
    from benchtui.grading.judge_import import import_markdown
    from benchtui.host.backends import probe_all
    from benchtui.runner.orchestrate import run_answers
    from benchtui.store.database import Store
    from benchtui.workbench.layout import find_workbench
    from benchtui.workbench.scan import scan_workbench

    if probe_all().get("cuda") and probe_all()["cuda"].available:
        pytest.skip("pinned verdicts are for a machine without an NVIDIA GPU (fuse would run for real)")
    root = tmp_path_factory.mktemp("published") / "llm_programming_tests"
    shutil.copytree(PUBLISHED, root, symlinks=True)
    assert not (root / "challenges").exists(), "the published benchmark ships its own challenges folder"
    shutil.copytree(REPO / "challenges", root / "challenges", ignore=shutil.ignore_patterns("__pycache__"))
    for cid, values in PUBLISHED_SPEED.items():
        set_thresholds(root / "challenges" / cid / "challenge.toml", values)
    wb = find_workbench(str(root), None, Path.cwd())
    with Store(wb.store_path) as store:
        scan = scan_workbench(wb, store, index_transcripts=False)
        pairs = [(r["model"], r["challenge"]) for r in store.query("select model, challenge from answers order by model, challenge")]
    events = run_answers(wb, pairs, jobs=2, self_check=False, seed=PUBLISHED_SEED)
    with Store(wb.store_path) as store:
        checks = {}
        for e in events:
            rows = store.query("select name, verdict, message from checks where run_id = ?", (e.run_id,))
            checks[(e.model, e.challenge)] = {r["name"]: r for r in rows}
        runs = {(r["model"], r["challenge"]): r for r in store.query("select model, challenge, prompt_version, coverage from runs")}
        grades = import_markdown(store, root / "README.md", grader="deepseek-v4-pro")
    return {"root": root, "scan": scan, "events": events, "checks": checks, "runs": runs, "grades": grades}
