"""Run one challenge's conformance suite against one answer's process.

The checks run here (the sandboxed checker, ``engine.runner.child``, or for
development ``engine.verify.local``); the answer runs in its own process
(``engine.runner.answer_server``) reached through ``peer``.
"""
from __future__ import annotations

import contextlib
import importlib.util
import os
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from engine.verify import verdicts as V
from engine.verify import wire
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
    answer_fd: int | None = None  # the socket to the answer's process
    monitor_fd: int | None = None  # the socket to the orchestrator's memory monitor


def load_module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def execute(job: Job, peer=None, monitor=None) -> Suite:
    suite = Suite(
        challenge_id=job.challenge_id, answer_dir=Path(job.answer_dir), challenge_dir=Path(job.challenge_dir),
        model=job.model, seed=job.seed, backend=job.backend, thresholds=job.thresholds,
        adapter_path=Path(job.adapter_path) if job.adapter_path else None,
        results_path=Path(job.results_path) if job.results_path else None,
        check_timeout_s=job.check_timeout_s, peer=peer, monitor=monitor,
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
    except wire.PeerGone as exc:
        suite.record("conformance", V.ERROR, message=f"the answer's process ended before the checks could run ({exc})")
    except Exception as exc:  # an answer failing at import time lands here
        suite.record("conformance", V.ERROR, message=describe_exception(exc))
    return suite


def verdict_of(suite: Suite) -> str:
    return V.worst(c.verdict for c in suite.checks)


REPO_ROOT = Path(__file__).resolve().parents[2]


@contextlib.contextmanager
def local_answer_process(answer_dir: Path, adapter: Path | None = None):
    """The answer's process without a sandbox, for trusted code only (tests of
    references and mutants, challenge authors): yields (peer, monitor)."""
    from engine.runner.monitor import ProcMonitor
    from engine.verify import wire

    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.Popen([sys.executable, "-m", "engine.runner.answer_server", str(theirs.fileno()),
                             str(answer_dir), str(adapter or "")],
                            pass_fds=[theirs.fileno()], cwd=answer_dir, env=env, stdin=subprocess.DEVNULL)
    theirs.close()
    peer = wire.Peer(wire.Connection(ours), trusting=False)
    try:
        yield peer, ProcMonitor(proc.pid)
    finally:
        peer.close()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        ours.close()
