"""Entry point of the sandboxed child: ``python -m engine.runner.child JOB.json``.

Imports the challenge's conformance suite and the answer (never done in the
parent), appends each finished check to the private results file, then a
final ``{"done": ...}`` line. stdout/stderr belong to the answer's prints.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def main(job_path: str) -> int:
    from engine.verify.execute import Job, execute, verdict_of

    job = Job(**json.loads(Path(job_path).read_text(encoding="utf-8")))
    started = time.perf_counter()
    suite = execute(job)
    with open(job.results_path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"done": True, "verdict": verdict_of(suite), "duration_s": time.perf_counter() - started}) + "\n")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: python -m engine.runner.child JOB.json", file=sys.stderr)
        raise SystemExit(2)
    raise SystemExit(main(sys.argv[1]))
