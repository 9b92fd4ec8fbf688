"""Entry point of the checker's sandboxed process: ``python -m engine.runner.child JOB.json``.

Imports the challenge's conformance suite and runs it against the answer's
own process (``engine.runner.answer_server``, another sandbox) over the
socket the job names; it never imports answer code. Each finished check is
appended to the private results file, then a final ``{"done": ...}`` line.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def main(job_path: str) -> int:
    from benchtui.records.job import Job
    from benchtui.verify import wire
    from benchtui.verify.execute import execute, verdict_of
    from benchtui.verify.monitor import RemoteMonitor

    job = Job.from_json(Path(job_path).read_text(encoding="utf-8"))
    if job.answer_fd is None or job.results_path is None:
        raise SystemExit(f"{job_path} names no answer socket or no results file: bundle.two_processes writes both")
    started = time.perf_counter()
    peer = wire.Peer(wire.Connection(wire.socket_from_fd(job.answer_fd)), trusting=False)
    mon = RemoteMonitor(wire.socket_from_fd(job.monitor_fd)) if job.monitor_fd is not None else None
    try:
        suite = execute(job, peer=peer, monitor=mon)
    finally:
        peer.close()
    with open(job.results_path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"done": True, "verdict": verdict_of(suite), "duration_s": time.perf_counter() - started}) + "\n")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: python -m engine.runner.child JOB.json", file=sys.stderr)
        raise SystemExit(2)
    raise SystemExit(main(sys.argv[1]))
