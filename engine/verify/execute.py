"""Run one challenge's conformance suite against one answer folder.

Used inside the sandboxed child (``engine.runner.child``) and, for
development only, in-process by ``engine.verify.local``. Never call this in
the dashboard's process on untrusted code.
"""
from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass, field
from pathlib import Path

from engine.verify import verdicts as V
from engine.verify.binding import Unbound
from engine.verify.static_rules import forbidden_imports
from engine.verify.suite import Suite, describe_exception


@dataclass
class Job:
    challenge_id: str
    challenge_dir: str
    answer_dir: str
    model: str
    seed: int
    backend: str = "cpu"
    thresholds: dict = field(default_factory=dict)
    forbidden_imports: list = field(default_factory=list)
    adapter_path: str | None = None
    results_path: str | None = None
    check_timeout_s: float | None = None


def load_module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def execute(job: Job) -> Suite:
    suite = Suite(
        challenge_id=job.challenge_id, answer_dir=Path(job.answer_dir), challenge_dir=Path(job.challenge_dir),
        model=job.model, seed=job.seed, backend=job.backend, thresholds=job.thresholds,
        adapter_path=Path(job.adapter_path) if job.adapter_path else None,
        results_path=Path(job.results_path) if job.results_path else None,
        check_timeout_s=job.check_timeout_s,
    )
    hits = forbidden_imports(suite.answer_dir, job.forbidden_imports)
    if hits:
        suite.record("forbidden_imports", V.FORBIDDEN, value=len(hits), threshold=0,
                     message="; ".join(str(h) for h in hits[:5]),
                     details={"hits": [str(h) for h in hits]})
    elif job.forbidden_imports:
        suite.record("forbidden_imports", V.PASS, value=0, threshold=0,
                     message=f"none of {', '.join(job.forbidden_imports)} imported")
    conformance = load_module(Path(job.challenge_dir) / "conformance.py", f"benchtui_conformance_{job.challenge_id}")
    try:
        conformance.run(suite)
    except Unbound as exc:
        suite.record("bind", V.UNBOUND, message=str(exc),
                     details={"looked_for": exc.looked_for, "searched": exc.searched})
    except Exception as exc:  # an answer failing at import time lands here
        suite.record("conformance", V.ERROR, message=describe_exception(exc))
    return suite


def verdict_of(suite: Suite) -> str:
    return V.worst(c.verdict for c in suite.checks)
