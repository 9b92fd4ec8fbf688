"""Run one challenge's conformance suite against one answer's process.

The checks run here (the sandboxed checker, ``engine.runner.child``, or for
development ``engine.runner.local``); the answer runs in its own process
(``engine.runner.answer_server``) reached through ``peer``.
"""
from __future__ import annotations

import json
import re
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from benchtui.records.job import Job
from benchtui.records.verdicts import ERROR, FORBIDDEN, INFO, MISSING_DEPENDENCY, PASS, UNBOUND, worst
from benchtui.verify import wire
from benchtui.verify.binding import ADAPTER_MODULE, Unbound, load_module
from benchtui.verify.monitor import ProcMonitor, RemoteMonitor
from benchtui.verify.reach_report import record_unreached_code
from benchtui.verify.static_rules import forbidden_imports
from benchtui.verify.suite import Suite, describe_exception, missing_package, old_name_message


def new_suite(job: Job, **kw: Any) -> Suite:
    return Suite(
        challenge_id=job.challenge_id, answer_dir=Path(job.answer_dir), challenge_dir=Path(job.challenge_dir),
        model=job.model, seed=job.seed, backend=job.backend, thresholds=job.thresholds,
        adapter_path=Path(job.adapter_path) if job.adapter_path else None,
        results_path=Path(job.results_path) if job.results_path else None,
        check_timeout_s=job.check_timeout_s,
        prompt_version=job.prompt_version, version_checks=job.version_checks, gpu_lock_fd=job.gpu_lock_fd, **kw,
    )


def execute(job: Job, peer: wire.Peer | None = None, monitor: ProcMonitor | RemoteMonitor | None = None) -> Suite:
    suite = new_suite(job, peer=peer, monitor=monitor)
    started = time.monotonic()
    if job.timeout_s and job.run_deadline:  # the time the sandbox took to start counts too
        started -= max(job.timeout_s - (job.run_deadline - time.time()), 0.0)
    suite.run_limit_s, suite.run_started = job.timeout_s, started
    hits = forbidden_imports(suite.answer_dir, job.forbidden_imports)
    if hits:
        suite.record("forbidden_imports", FORBIDDEN, value=len(hits), threshold=0,
                     message="; ".join(str(h) for h in hits[:5]),
                     details={"hits": [str(h) for h in hits]})
    elif job.forbidden_imports:
        suite.record("forbidden_imports", PASS, value=0, threshold=0,
                     message=f"none of {', '.join(job.forbidden_imports)} imported")
    try:
        conformance = load_module(Path(job.challenge_dir) / "conformance.py", f"benchtui_conformance_{job.challenge_id}")
    except Exception as exc:  # the challenge's own file: one message, not a traceback
        suite.record("conformance", ERROR, message=old_name_message(exc, suite)
                     or f"challenges/{job.challenge_id}/conformance.py cannot be loaded: {describe_exception(exc)}")
        return suite
    if not getattr(conformance, "GPU_LOCK_LATE", False):
        suite.hold_gpu()  # before any of its checks; a suite that says so takes it itself, later
    first = len(suite.checks)
    run_conformance(conformance, suite)
    several_implementations(job, conformance, suite, first)
    return suite


def run_conformance(conformance: ModuleType, suite: Suite) -> None:
    try:
        conformance.run(suite)
    except Unbound as exc:
        suite.record("bind", UNBOUND, message=str(exc),
                     details={"looked_for": exc.looked_for, "searched": exc.searched})
    except wire.PeerGone as exc:
        suite.record("conformance", ERROR, message=f"the answer's process ended before the checks could run ({exc})")
    except AttributeError as exc:
        missing = adapter_lacks(suite, exc)
        if missing is None:
            suite.record("conformance", ERROR, message=describe_exception(exc))
        else:  # an adapter that does not define what the contract names binds nothing (an unfinished scaffold)
            name = suite.adapter_path.name if suite.adapter_path is not None else "adapter"
            suite.record("bind", UNBOUND, message=f"the adapter {name} defines no {missing}, which the challenge's "
                                                    "adapter contract names",
                         details={"looked_for": [missing], "searched": [name]})
    except ModuleNotFoundError as exc:  # the answer imports a package the sandbox lacks
        old = old_name_message(exc, suite)
        if old is not None:  # unless a file of the challenge's imports benchtui's old name
            suite.record("conformance", ERROR, message=old)
            return
        package = missing_package(exc)
        suite.record("conformance", MISSING_DEPENDENCY, value=package,
                     message=f"the answer imports {package!r}, which is not installed here: {describe_exception(exc)}",
                     details={"package": package})
    except Exception as exc:  # an answer failing at import time lands here
        suite.record("conformance", ERROR, message=describe_exception(exc))
    try:  # a figure beside the verdict: which copy of the answer's code the checks ran
        record_unreached_code(suite)
    except Exception as exc:
        suite.record("unreached_code", INFO, message=f"not measured: {describe_exception(exc)}")


def adapter_lacks(suite: Suite, exc: AttributeError) -> str | None:
    """The name the conformance suite asked the reviewer's adapter for and did not find, or None
    when ``exc`` is about anything else."""
    if suite.adapter_path is None or suite._adapter is None:
        return None
    m = re.search(rf"module '{ADAPTER_MODULE}' has no attribute '(\w+)'", str(exc))
    return m.group(1) if m else None


# -- several implementations in one answer folder -------------------------------------
def several_implementations(job: Job, conformance: ModuleType, suite: Suite, first: int) -> None:
    """Each non-test file that defines what the suite bound is run and reported
    under its own name (``<file>::<check>``); the answer's verdict is the worst of
    them. A single implementation keeps its plain check names."""
    files = suite.binder.implementations() if not suite.binder.prefer_file else []
    if len(files) < 2:
        return
    # The first run bound files[0]: rename its checks, rewrite the results file.
    for c in suite.checks[first:]:
        c.name = f"{files[0]}::{c.name}"
        c.details.setdefault("implementation", files[0])
    if suite._results_path is not None:
        with open(suite._results_path, "w", encoding="utf-8") as fh:
            for c in suite.checks:
                fh.write(json.dumps({"check": c.as_dict()}) + "\n")
    verdicts = {files[0]: worst(c.verdict for c in suite.checks[first:])}
    for rel in files[1:]:
        other = new_suite(job, check_prefix=rel, prefer_file=rel, peer=suite.peer, monitor=suite.monitor)
        if suite.peer is not None:  # the next implementation's imports load afresh in the answer's process
            suite.answer_side("forget")
        run_conformance(conformance, other)
        suite.checks.extend(other.checks)
        verdicts[rel] = worst(c.verdict for c in other.checks)
    lines = []
    for rel, verdict in verdicts.items():
        copy = job.duplicates.get(rel)
        lines.append(f"{rel}: {verdict}" + (f" (a copy: {copy})" if copy else ""))
    suite.record("implementations", INFO, value=len(files),
                 message=f"{len(files)} files implement the contract, each run on its own; the answer's verdict is "
                         f"the worst of them: " + "; ".join(lines),
                 details={"files": files, "verdicts": verdicts,
                          "copies": {rel: job.duplicates[rel] for rel in files if rel in job.duplicates}})


def verdict_of(suite: Suite) -> str:
    return worst(c.verdict for c in suite.checks)
