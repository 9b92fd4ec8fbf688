"""The answer's own tests and demos, run in the sandbox apart from the verdict.

What an answer claims about itself is recorded (exit code, output, duration)
but is never evidence for the hidden verdict.
"""
from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass, field
from pathlib import Path

from benchtui.verify.binding import python_files

TEST_FILE = re.compile(r"^(test_.*|.*_test)\.py$")
DEMO_FILE = re.compile(r"^(demo|bench(mark)?).*\.py$")
MAIN_GUARD = re.compile(r"""^if\s+__name__\s*==\s*['"]__main__['"]\s*:""", re.M)
OUTPUT_CAP = 64 * 1024


@dataclass
class SelfCheckPlan:
    commands: list[list[str]] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # what this machine lacks to run them (pytest)


def has_pytest() -> bool:
    """pytest importable by this interpreter, the one the sandbox runs."""
    return importlib.util.find_spec("pytest") is not None


def plan_self_check(folder: Path, python: str, *, gpu: bool) -> SelfCheckPlan:
    """Commands for the answer's own evidence about itself: its tests (pytest)
    when it has any, else its demos/benchmarks, else its main scripts. A main
    script is often the full job (a 6-minute training run), so it is the last resort."""
    plan = SelfCheckPlan()
    tests, demos, mains = [], [], []
    for path in python_files(folder):
        rel = path.relative_to(folder).as_posix()
        if TEST_FILE.match(path.name):
            tests.append(rel)
        elif DEMO_FILE.match(path.name):
            demos.append(rel)
        else:
            try:
                if MAIN_GUARD.search(path.read_text(encoding="utf-8", errors="replace")):
                    mains.append(rel)
            except OSError:
                continue
    scripts = [] if tests else demos or mains
    if tests and not has_pytest():
        # the machine's lack, not the answer's failure: its tests are not run
        plan.missing.append("pytest")
        plan.skipped.append(f"pytest {' '.join(tests)}: pytest is not installed for {python} "
                            "(python3 -m pip install pytest; see benchtui doctor)")
    elif tests:
        plan.commands.append([python, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-p", "no:benchmark", *tests])
        plan.labels.append("pytest " + " ".join(tests))
    for rel in scripts:
        plan.commands.append([python, rel])
        plan.labels.append(f"python {rel}")
    cu_mains = [p.relative_to(folder).as_posix() for p in sorted(folder.rglob("*.cu")) if "int main" in _head(p)]
    for rel in cu_mains:
        if gpu:
            plan.commands.append(["/bin/sh", "-c", f"nvcc -std=c++17 -O2 -o /tmp/selfcheck_bin '{rel}' && /tmp/selfcheck_bin"])
            plan.labels.append(f"nvcc {rel} && run")
        else:
            plan.skipped.append(f"{rel}: CUDA harness needs an NVIDIA GPU")
    return plan


def _head(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")[:200_000]
    except OSError:
        return ""


def read_capped(path: Path, cap: int = OUTPUT_CAP) -> str:
    try:
        data = path.read_bytes()
    except OSError:
        return ""
    text = data[-cap:].decode("utf-8", errors="replace")
    return (f"[... output cut to its last {cap // 1024} KB ...]\n" + text) if len(data) > cap else text
