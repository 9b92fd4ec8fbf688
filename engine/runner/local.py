"""Development harness: the checks in this process, the answer in a plain
child process (no sandbox).

    python -m benchtui.runner.local CHALLENGE ANSWER_DIR [--model NAME] [--seed N]

For challenge authors and tests of trusted code (references, mutants written
by this project). Untrusted answers go through ``benchtui run``.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

from benchtui.challenges import coverage, prompts
from benchtui.challenges.definition import BUNDLED_CHALLENGES, load_challenge
from benchtui.records.job import Job, host_thresholds
from benchtui.verify import wire
from benchtui.verify.execute import execute, verdict_of
from benchtui.verify.monitor import ProcMonitor


@contextlib.contextmanager
def local_answer_process(answer_dir: Path, adapter: Path | None = None) -> Iterator[tuple[wire.Peer, ProcMonitor]]:
    """The answer's process without a sandbox, for trusted code only (tests of
    references and mutants, challenge authors): yields (peer, monitor)."""
    # a private temporary folder, as the sandbox's /tmp is: what the answer
    # builds there (a CUDA library) goes with it
    scratch = tempfile.TemporaryDirectory(prefix="benchtui-answer-tmp-")
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    env = {**os.environ, "TMPDIR": scratch.name}
    proc = subprocess.Popen([sys.executable, "-m", "benchtui.runner.answer_server", str(theirs.fileno()),
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
        scratch.cleanup()


def run_local(challenge_id: str, answer_dir: Path | str, *, model: str = "local", seed: int = 1234,
              backend: str = "cpu", challenges_dir: Path = BUNDLED_CHALLENGES, adapter: Path | str | None = None,
              copy: bool = True, on_check: Callable[[str, dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """Checks here, answer in a child process, on a scratch copy; returns {"verdict", "checks"}.
    ``on_check(kind, record)``: called as each check starts (``"started"``, {"name"}) and ends
    (``"check"``, the check), read from the suite's results file by a thread (progress)."""
    challenge = load_challenge(Path(challenges_dir) / challenge_id)
    with tempfile.TemporaryDirectory(prefix="benchtui-local-") as tmp, \
            _follow(Path(tmp) / "results.jsonl", on_check) as results_path:
        folder = Path(answer_dir)
        if copy:
            folder = Path(tmp) / "answer"
            shutil.copytree(answer_dir, folder, symlinks=True)
        adapter_path = adapter or challenge.adapter_path(model)
        # judged against the answer's own prompt version, as `benchtui run` does
        version, _ = prompts.answer_prompt(challenge, folder)
        with local_answer_process(folder, Path(adapter_path) if adapter_path else None) as (peer, monitor):
            suite = execute(Job(
                challenge_id=challenge.id, challenge_dir=str(challenge.path), answer_dir=str(folder), model=model,
                seed=seed, backend=backend,
                thresholds=host_thresholds({**challenge.thresholds, **prompts.version_thresholds(challenge, version)}),
                # a folder without a known PROMPT.md (a reference, a mutant) gets every check
                prompt_version=version, version_checks=prompts.version_checks(challenge) if version else {},
                forbidden_imports=list(challenge.forbidden_imports),
                adapter_path=str(adapter_path) if adapter_path else None,
                results_path=str(results_path) if results_path else None,
            ), peer=peer, monitor=monitor)
        checks = [c.as_dict() for c in suite.checks]
        verdict, cov = coverage.for_run(challenge, version, checks, verdict_of(suite))
        return {"verdict": verdict, "checks": checks, "coverage": cov}


@contextlib.contextmanager
def _follow(path: Path, on_check: Callable[[str, dict[str, Any]], None] | None) -> Iterator[Path | None]:
    """The suite's results file at ``path``, its lines handed to ``on_check`` as they are
    written (the file the sandboxed checker writes for the runner); None without a listener."""
    if on_check is None:
        yield None
        return
    path.touch()
    done = threading.Event()

    def read(fh: TextIO) -> None:
        while True:
            at = fh.tell()
            line = fh.readline()
            if not line.endswith("\n"):  # nothing new, or a line still being written: read it whole later
                fh.seek(at)
                return
            with contextlib.suppress(ValueError, TypeError, StopIteration):
                record = json.loads(line)
                kind = next(iter(record))
                on_check(kind, record[kind] if kind == "check" else {"name": record[kind]})

    def follow() -> None:
        with open(path, encoding="utf-8") as fh:
            while not done.wait(0.2):
                read(fh)
            read(fh)

    thread = threading.Thread(target=follow, name="benchtui-local-progress", daemon=True)
    thread.start()
    try:
        yield path
    finally:
        done.set()
        thread.join(timeout=5)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("challenge")
    p.add_argument("answer_dir")
    p.add_argument("--model", default="local")
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--backend", default="cpu")
    p.add_argument("--adapter")
    p.add_argument("--json", action="store_true")
    a = p.parse_args()
    out = run_local(a.challenge, a.answer_dir, model=a.model, seed=a.seed, backend=a.backend, adapter=a.adapter)
    if a.json:
        print(json.dumps(out, indent=2))
        return
    print(f"verdict: {out['verdict']}")
    for c in out["checks"]:
        print(f"  {c['verdict']:<13} {c['name']:<32} value={c['value']} threshold={c['threshold']}  {c['message'][:150]}")


if __name__ == "__main__":
    main()
