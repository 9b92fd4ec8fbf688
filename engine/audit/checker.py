"""The checker's process for an audit: ``python -m engine.audit.checker JOB.json``.

The same sandboxed checker as a run (``engine.runner.child``), on the cheap
path: no timing and no memory figures, and (for a mutant) it stops at the
first check that fails. It also records a trace, one entry per value the
answer's process returned, in order: two copies whose traces match
(``engine.audit.equivalence``) returned the same values on the suite's own
inputs.
"""
from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path

import numpy as np
from benchtui.audit.equivalence import entry
from benchtui.records.verdicts import COMPILE_ERROR, ERROR, FAIL, FORBIDDEN, MISSING_DEPENDENCY, TIMEOUT, UNBOUND, worst
from benchtui.verify import wire
from benchtui.verify.suite import SkipCheck, Suite

# A check with one of these verdicts kills a mutant (a verdict the original did not get).
KILLING = frozenset({FORBIDDEN, COMPILE_ERROR, TIMEOUT, ERROR, FAIL, UNBOUND, MISSING_DEPENDENCY})


class StopAudit(BaseException):
    """Raised after the first killing check (BaseException: a suite's own
    ``except Exception`` must not swallow it)."""


class AuditSuite(Suite):
    stop_first = False

    def time(self, name, answer, reference, make_inputs, **kw):
        return None  # timings are figures, never verdicts: an audit skips them

    def peak_memory(self, fn, *args, **kwargs):
        raise SkipCheck("memory is not measured in an audit")

    def answer_memory(self) -> int:
        raise SkipCheck("memory is not measured in an audit")

    def _record(self, c) -> None:
        super()._record(c)
        if self.stop_first and c.verdict in KILLING:
            raise StopAudit()


def digest(value, h=None) -> str:
    """A digest of a returned value: arrays by dtype, shape and bytes; plain
    data by its repr; proxies by their kind (their ids are not content)."""
    h = h or hashlib.sha256()
    if isinstance(value, np.ndarray):
        h.update(f"nd{value.dtype}{value.shape}".encode())
        h.update(np.ascontiguousarray(value).tobytes())
    elif isinstance(value, (list, tuple)):
        h.update(f"{type(value).__name__}{len(value)}[".encode())
        for v in value:
            digest(v, h)
        h.update(b"]")
    elif isinstance(value, dict):
        h.update(f"dict{len(value)}{{".encode())
        for k in sorted(value, key=repr):
            h.update(repr(k).encode())
            digest(value[k], h)
        h.update(b"}")
    elif wire.is_proxy(value):
        h.update(f"proxy:{object.__getattribute__(value, '_kind')}".encode())
    else:
        h.update(f"{type(value).__name__}:{value!r}".encode())
    return h.hexdigest()[:16]


class TracingPeer(wire.Peer):
    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.trace: list[str] = []

    def _result(self, msg, mm, plain: bool = False):
        try:
            value = super()._result(msg, mm, plain)
        except Exception as exc:
            if not self.probing:
                self.trace.append(f"raise:{getattr(exc, 'remote_type', type(exc).__name__)}")
            raise
        if not self.probing:  # Suite.probing: binding, not an answer's result
            self.trace.append(entry(digest(value), value, wire.is_proxy))
        return value


def main(job_path: str) -> int:
    from benchtui.records.job import Job
    from benchtui.verify.binding import load_module
    from benchtui.verify.execute import new_suite, run_conformance

    job = Job.from_json(Path(job_path).read_text(encoding="utf-8"))
    started = time.perf_counter()
    peer = TracingPeer(wire.Connection(wire.socket_from_fd(job.answer_fd)), trusting=False)
    suite = new_suite(job, peer=peer, monitor=None)
    suite.__class__ = AuditSuite  # same state, the audit's cheap path
    suite.stop_first = job.stop_at_first_kill
    stopped = False
    try:
        conformance = load_module(Path(job.challenge_dir) / "conformance.py", f"benchtui_conformance_{job.challenge_id}")
        run_conformance(conformance, suite)
    except StopAudit:
        stopped = True
    finally:
        peer.close()
    with open(job.results_path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"trace": peer.trace, "stopped": stopped}) + "\n")
        fh.write(json.dumps({"done": True, "verdict": worst(c.verdict for c in suite.checks),
                             "duration_s": time.perf_counter() - started}) + "\n")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: python -m engine.audit.checker JOB.json", file=sys.stderr)
        raise SystemExit(2)
    raise SystemExit(main(sys.argv[1]))
