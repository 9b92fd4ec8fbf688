"""Run answers: scratch copy -> sandboxed child -> checks -> store.

Shared by `benchtui run` and the dashboard's Runs screen (which calls
``run_answers`` from a worker thread and turns RunEvents into messages).
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import platform
import secrets
import shutil
import socket
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

import engine
from engine import adapters, coverage, resources
from engine.backends import choose_backend, probe_all, require_backend
from engine.challenges import Challenge
from engine.gitinfo import read_git
from engine.runner import monitor, sandbox
from engine.runner.selfcheck import plan_self_check, read_capped
from engine.store import Store, now_iso
from engine.verify import verdicts as V
from engine.workbench import Workbench

REPO_ROOT = resources.PACKAGE_ROOT  # holds engine: the clone, or site-packages once installed
ANSWER_GRACE_S = 5.0


@dataclass
class RunEvent:
    kind: str  # queued | started | finished | error | cancelled | busy (another process runs it)
    model: str
    challenge: str
    run_id: int | None = None
    verdict: str | None = None
    message: str = ""
    done: int = 0
    total: int = 0
    duration_s: float | None = None


@dataclass
class RunOptions:
    backend: str = "auto"
    jobs: int = 1
    allow_unsafe: bool = False
    self_check: bool = True
    layer: str = "auto"
    seed: int | None = None  # fixed only for reproducing a run; secret otherwise
    timeout_s: float | None = None  # overrides the challenge's own wall-clock limit


def mark_interrupted(store: Store) -> int:
    """Runs left 'running' by a process that no longer exists become 'interrupted'."""
    stale = []
    for r in store.query("select id, pid from runs where status = 'running'"):
        if r["pid"] is None or not _alive(r["pid"]):
            stale.append(r["id"])
    for run_id in stale:
        store.db["runs"].update(run_id, {"status": "interrupted", "verdict": V.INTERRUPTED, "finished_at": now_iso(),
                                         "message": "the process running it ended before it finished"})
    return len(stale)


def claim_run(store: Store, row: dict, since: str | None = None) -> tuple[int | None, dict | None]:
    """Insert ``row`` as this answer's running run, unless another process is
    running it, or ran it since ``since`` (when this batch started): (run_id,
    None), or (None, that run's id, pid and status).

    Two `benchtui run` (or a run and the dashboard) on one workbench would
    otherwise run the same answers twice, each skewing the other's timings.
    Check and insert happen in one write transaction, so of two racing
    processes exactly one claims the answer."""
    conn = store.conn
    conn.execute("BEGIN IMMEDIATE")
    try:
        for r in store.query("select id, pid, status, verdict from runs where model = ? and challenge = ? "
                             "and (status = 'running' or (started_at >= ? and pid != ?)) order by id desc",
                             (row["model"], row["challenge"], since or "~", row["pid"])):
            if r["status"] != "running" or (r["pid"] is not None and _alive(r["pid"])):
                conn.rollback()
                return None, r
        run_id = store.db["runs"].insert(row).last_pk
        conn.commit()
        return run_id, None
    except BaseException:
        if conn.in_transaction:
            conn.rollback()
        raise


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def tree_digest(folder: Path) -> tuple[str, dict[str, str]]:
    """sha256 over (relpath, content) of every regular file: the before/after proof."""
    files = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink() and "__pycache__" not in path.parts:
            files[path.relative_to(folder).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    total = hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest()
    return total, files


def copy_answer(workbench: Workbench, src: Path, dst: Path, challenge: Challenge) -> None:
    """Scratch copy of the answer (links that leave the workbench are dropped)
    plus the challenge's data files where the answer lacks them."""
    def ignore(folder, names):
        skip = {"__pycache__", ".git"}
        for name in names:
            p = Path(folder) / name
            if p.is_symlink() and not workbench.contains(p):
                skip.add(name)
        return skip

    shutil.copytree(src, dst, symlinks=False, ignore=ignore)
    for rel in challenge.data_files:
        data = challenge.path / "data" / rel
        if data.is_file() and not (dst / rel).exists():
            (dst / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(data, dst / rel)
    _open_up(dst)


def _open_up(folder: Path) -> None:
    """The sandbox may run as an unprivileged uid: make the scratch tree writable for it."""
    for path in [folder, *folder.rglob("*")]:
        try:
            path.chmod(0o777 if path.is_dir() else 0o666)
        except OSError:
            pass


def versions(backend: str) -> dict:
    out = {"python": platform.python_version(), "benchtui": engine.__version__}
    for st in probe_all().values():
        out.update(st.versions)
    return out


class Runner:
    """One configured run session: a workbench, options and a cancel flag."""

    def __init__(self, workbench: Workbench, options: RunOptions, on_event: Callable[[RunEvent], None] | None = None,
                 cancel: threading.Event | None = None):
        self.workbench = workbench
        self.options = options
        self.on_event = on_event or (lambda e: None)
        self.cancel = cancel or threading.Event()
        self.layer = sandbox.choose_layer(options.layer, allow_unsafe=options.allow_unsafe)
        self.git_commit = read_git(workbench.root).commit
        self._lock = threading.Lock()
        self._done = 0
        self._total = 0
        self.started_at: str | None = None

    def emit(self, event: RunEvent) -> None:
        try:
            self.on_event(event)
        except Exception:  # a broken listener must not break the run
            pass

    def run_all(self, pairs: list[tuple[str, str]]) -> list[RunEvent]:
        self._total = len(pairs)
        self.started_at = now_iso()  # a run another process starts after this is one this batch joins
        with Store(self.workbench.store_path) as store:
            mark_interrupted(store)
        for model, challenge in pairs:
            self.emit(RunEvent("queued", model, challenge, total=self._total))
        jobs = max(1, self.options.jobs)
        if jobs == 1:
            return [self.run_one(m, c) for m, c in pairs]
        with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="benchtui-run") as pool:
            return list(pool.map(lambda p: self.run_one(*p), pairs))

    def _finish(self, event: RunEvent) -> RunEvent:
        with self._lock:
            self._done += 1
            event.done, event.total = self._done, self._total
        self.emit(event)
        return event

    def run_one(self, model: str, challenge_id: str) -> RunEvent:
        if self.cancel.is_set():
            return self._finish(RunEvent("cancelled", model, challenge_id, message="cancelled before it started"))
        challenge = self.workbench.challenges[challenge_id]
        with Store(self.workbench.store_path) as store:
            answer = store.query("select * from answers where model = ? and challenge = ?", (model, challenge_id))
            if not answer:
                return self._finish(RunEvent("error", model, challenge_id, message="no such answer in the store; scan first"))
            answer = answer[0]
            folder = self.workbench.root / answer["path"]
            backend, degraded = choose_backend(self.options.backend, challenge.backends)
            status = probe_all().get(backend)
            seed = self.options.seed if self.options.seed is not None else secrets.randbits(31)
            digest, files = tree_digest(folder) if folder.is_dir() else ("", {})
            prompt = answer_prompt_facts(store, challenge, folder, model)  # issue 9: prompt versions
            run_id, busy = claim_run(store, {
                "model": model, "challenge": challenge_id, "status": "running", "backend": backend,
                "device": status.device if status and status.available else "", "sandbox": self.layer, "seed": seed,
                "started_at": now_iso(), "pid": os.getpid(), "git_commit": self.git_commit, "answer_sha256": digest,
                "files": json.dumps(files), "versions": json.dumps(versions(backend)),
                "message": degraded or "", "prompt_version": prompt["prompt_version"]}, since=self.started_at)
        if busy is not None:
            said = (f"already running (run #{busy['id']}, process {busy['pid']})" if busy["status"] == "running" else
                    f"run meanwhile by process {busy['pid']} (run #{busy['id']}: {busy['verdict'] or busy['status']})")
            return self._finish(RunEvent("busy", model, challenge_id, run_id=busy["id"], message=f"{said}: not run twice"))
        self.emit(RunEvent("started", model, challenge_id, run_id=run_id, total=self._total))
        started = time.perf_counter()
        try:
            if answer["status"] == "no_answer":
                checks, verdict, extra = [], V.NO_ANSWER, {"message": "the folder holds no answer files"}
            else:
                checks, verdict, extra = self._execute(folder, challenge, model, backend, seed, digest, prompt)
        except sandbox.SandboxUnavailable:
            raise
        except Exception as exc:  # benchtui's own failure: record it, never lose the row
            checks, verdict, extra = [], V.ERROR, {"message": f"benchtui could not run it: {type(exc).__name__}: {exc}"}
        duration = time.perf_counter() - started
        if self.cancel.is_set() and verdict == V.TIMEOUT:
            verdict, extra["message"] = V.INTERRUPTED, "cancelled by the user"
        with Store(self.workbench.store_path) as store:
            with store.conn:
                store.db["checks"].insert_all(
                    [{"run_id": run_id, "position": i, "name": c["name"], "verdict": c["verdict"],
                      "value": json.dumps(c.get("value")), "threshold": json.dumps(c.get("threshold")),
                      "message": c.get("message", ""),
                      "details": json.dumps({**(c.get("details") or {}), **({"requires": c["requires"]} if c.get("requires") else {})})}
                     for i, c in enumerate(checks)])
                message = extra.pop("message", "") or verdict_message(checks, verdict)
                prior = store.db["runs"].get(run_id)["message"]  # a degraded backend's note
                store.db["runs"].update(run_id, {
                    "status": "done" if verdict != V.INTERRUPTED else "interrupted", "verdict": verdict,
                    "finished_at": now_iso(), "duration_s": round(duration, 4),
                    # what decided the verdict first (the compiler's error, ...), the backend note after
                    "message": "; ".join(m for m in (message, prior) if m), **extra})
        return self._finish(RunEvent("finished", model, challenge_id, run_id=run_id, verdict=verdict,
                                     message=message, duration_s=duration))

    def _execute(self, folder: Path, challenge: Challenge, model: str, backend: str, seed: int, digest: str,
                 prompt: dict | None = None):
        limits = challenge.limits
        if self.options.timeout_s:
            limits = dataclasses.replace(limits, timeout_s=self.options.timeout_s,
                                         self_check_timeout_s=min(limits.self_check_timeout_s, self.options.timeout_s))
        gpu = backend == "cuda"
        with tempfile.TemporaryDirectory(prefix="benchtui-run-") as tmp:
            tmp = Path(tmp)
            work, out = tmp / "answer", tmp / "out"
            copy_answer(self.workbench, folder, work, challenge)
            out.mkdir()
            _open_up(out)
            results = out / "results.jsonl"
            # Workbench .benchtui/adapters first, then the plugin's; a stale one is not used and an
            # `adapter` check (unbound when stale, info otherwise) goes into the results file. The copy
            # lands in tmp/adapter: the answer's process reads it there and sees nothing of `out`.
            adapter = adapters.prepare_for_run(self.workbench.root, challenge, model, folder, tmp, results)
            job = {"challenge_id": challenge.id, "challenge_dir": str(challenge.path), "answer_dir": str(work), "model": model,
                   "seed": seed, "backend": backend,
                   "thresholds": {**challenge.thresholds, **((prompt or {}).get("thresholds") or {})},
                   "forbidden_imports": list(challenge.forbidden_imports),
                   "adapter_path": str(adapter) if adapter else None, "results_path": str(results),
                   **{k: v for k, v in (prompt or {}).items() if k in ("prompt_version", "version_checks", "duplicates")}}
            checks, done, res = self._two_processes(job, work, out, adapter, challenge, limits, gpu)
            stderr = read_capped(out / "stderr.txt")
            if res.timed_out:
                # the checks that finished stay; the one in flight says the time limit stopped it
                finished = len(checks)
                flight = in_flight(out / "results.jsonl")
                if flight:
                    checks.append({"name": flight, "verdict": V.TIMEOUT, "value": None, "threshold": limits.timeout_s,
                                   "message": f"stopped by the run's time limit ({limits.timeout_s:g} s) while it ran"})
                checks.append({"name": "run", "verdict": V.TIMEOUT, "value": round(res.wall_s, 2), "threshold": limits.timeout_s,
                               "message": f"killed after {res.wall_s:.1f} s (limit {limits.timeout_s:g} s); {finished} checks had finished"
                                          + (f", {flight} was running" if flight else "")})
            elif done is None:
                last = stderr.strip().splitlines()[-1:] if stderr.strip() else []
                why = f"signal {res.signal}" if res.signal else f"exit code {res.exit_code}"
                checks.append({"name": "run", "verdict": V.ERROR, "value": res.exit_code, "threshold": None,
                               "message": f"the checker stopped early ({why})" + (f": {last[0][:300]}" if last else "")})
            after, _ = tree_digest(folder)
            if after != digest:
                checks.append({"name": "answer_folder_unchanged", "verdict": V.ERROR, "value": after, "threshold": digest,
                               "message": "the answer folder changed during the run (it is never written to by benchtui)"})
            # What the answer printed is its own output; the checker's stderr only matters when it failed.
            answer_err = read_capped(out / "answer_stderr.txt")
            extra = {"stdout": read_capped(out / "answer_stdout.txt"),
                     "stderr": answer_err + (f"\n[checker]\n{stderr}" if stderr.strip() and done is None else ""),
                     "work_s": round(done["duration_s"], 4) if done else None}
            if self.options.self_check and not self.cancel.is_set():
                extra.update(self._self_check(folder, challenge, limits, gpu))
            verdict = V.worst(c["verdict"] for c in checks)
            if res.timed_out and any(c["verdict"] == V.FAIL for c in checks):
                verdict = V.FAIL  # a check it finished found a wrong result: the timeout stands beside it
            # what the verdict covers: a pass leaving a requirement not exercised is `partial`
            verdict, cov = coverage.for_run(challenge, (prompt or {}).get("prompt_version"), checks, verdict)
            extra["coverage"] = json.dumps(cov)
            return checks, verdict, extra

    def _hidden_from_answers(self, challenge: Challenge) -> list[Path]:
        """What an answer's process must not see: the checks and references,
        the workbench (other answers, the store) and benchtui's own files
        (the checkout, or the installed challenges, demo and dashboard)."""
        return [challenge.path.parent, self.workbench.root, self.workbench.store_path.parent,
                resources.bundled_challenges(), *resources.install_folders()]

    def _two_processes(self, job: dict, work: Path, out: Path, adapter: Path | None, challenge: Challenge,
                       limits, gpu: bool, checker: str = "engine.runner.child",
                       answer_server: str = "engine.runner.answer_server"):
        """The checker and the answer, each in its own sandbox, joined by a
        socket; the checker also gets a socket to a memory monitor run here.
        ``checker``/``answer_server`` name the entry modules (an audit's differ)."""
        checker_end, answer_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        monitor_here, monitor_there = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        job = {**job, "answer_fd": checker_end.fileno(), "monitor_fd": monitor_there.fileno()}
        (out / "job.json").write_text(json.dumps(job))
        box = sandbox.Limits(wall_s=limits.timeout_s, cpu_s=limits.cpu_s, memory_mb=None if gpu else limits.memory_mb)
        # the answer's process outlives the checker's limit a little, so the time limit
        # stops the checker (which names the check in flight), never the answer first:
        # it ends anyway when the checker goes
        answer_box = dataclasses.replace(box, wall_s=limits.timeout_s + ANSWER_GRACE_S)
        env = {"PYTHONPATH": str(REPO_ROOT)}
        answer_proc: list = []
        stop = threading.Event()

        def answer_pid() -> int | None:
            if not answer_proc:
                return None
            return sandbox.find_process(answer_proc[0].pid, f"{sys.executable}\0-m\0{answer_server}\0".encode())

        def run_answer():
            try:
                sandbox.run_sandboxed(
                    [sys.executable, "-m", answer_server, str(answer_end.fileno()), str(work),
                     str(adapter or "")],
                    workdir=work, ro_paths=[REPO_ROOT / "engine"] + ([adapter.parent] if adapter else []),
                    hide_paths=self._hidden_from_answers(challenge), limits=answer_box, layer=self.layer, env=env, gpu=gpu,
                    stdout_path=out / "answer_stdout.txt", stderr_path=out / "answer_stderr.txt",
                    pass_fds=[answer_end.fileno()], started=answer_proc.append, stop=stop)
            finally:
                answer_end.close()

        monitor.serve(monitor_here, answer_pid)
        thread = threading.Thread(target=run_answer, name="benchtui-answer", daemon=True)
        thread.start()
        try:
            res = sandbox.run_sandboxed(
                [sys.executable, "-m", checker, str(out / "job.json")],
                workdir=out, rw_paths=[], ro_paths=[challenge.path, REPO_ROOT, work], limits=box,
                layer=self.layer, env=env, gpu=gpu, stdout_path=out / "stdout.txt", stderr_path=out / "stderr.txt",
                pass_fds=[checker_end.fileno(), monitor_there.fileno()])
        finally:
            checker_end.close()
            monitor_there.close()
            thread.join(timeout=2.0)  # the answer's process ends on the checker's goodbye or EOF
            if thread.is_alive():
                stop.set()
                thread.join()
        checks, done = parse_results(out / "results.jsonl")
        return checks, done, res

    def _self_check(self, folder: Path, challenge: Challenge, limits, gpu: bool) -> dict:
        """Run the answer's own tests/demos on a fresh scratch copy."""
        with tempfile.TemporaryDirectory(prefix="benchtui-self-") as tmp:
            work = Path(tmp) / "answer"
            copy_answer(self.workbench, folder, work, challenge)
            plan = plan_self_check(work, sys.executable, gpu=gpu)
            if not plan.commands:
                return {"self_status": "none", "self_command": "", "self_output": "; ".join(plan.skipped) or "no tests or demos found"}
            budget = limits.self_check_timeout_s
            outputs, exit_code, started = [], 0, time.perf_counter()
            status = "pass"
            for cmd, label in zip(plan.commands, plan.labels):
                left = budget - (time.perf_counter() - started)
                if left <= 0:
                    outputs.append(f"$ {label}\n[not run: the self-check budget of {budget:g} s is spent]")
                    status = "timeout"
                    break
                log = Path(tmp) / "self.log"
                res = sandbox.run_sandboxed(cmd, workdir=work, limits=sandbox.Limits(wall_s=left, memory_mb=None if gpu else limits.memory_mb),
                                            layer=self.layer, hide_paths=self._hidden_from_answers(challenge),
                                            ro_paths=[REPO_ROOT / "engine"], env={"PYTHONPATH": str(REPO_ROOT)}, gpu=gpu,
                                            stdout_path=log, stderr_path=log)
                text = read_capped(log, 16 * 1024)
                code = res.exit_code if res.exit_code is not None else -(res.signal or 9)
                outputs.append(f"$ {label}\n{text}\n[exit {code}{', timed out' if res.timed_out else ''}, {res.wall_s:.2f} s]")
                if res.timed_out:
                    status = "timeout"
                if code != 0 and exit_code == 0:
                    exit_code = code
                    status = "timeout" if res.timed_out else "fail"
            outputs.extend(f"[skipped] {s}" for s in plan.skipped)
            return {"self_exit_code": exit_code, "self_duration_s": round(time.perf_counter() - started, 3),
                    "self_command": " && ".join(plan.labels), "self_output": "\n\n".join(outputs), "self_status": status}


# -- issue 9: the prompt an answer was given, and its copied files ------------------
def answer_prompt_facts(store: Store, challenge: Challenge, folder: Path, model: str) -> dict:
    """The answer's prompt version (engine/prompts.py), the checks that belong to
    a prompt version, and the latest scan's duplicate_file warnings for it."""
    from engine import prompts

    version, sha = prompts.answer_prompt(challenge, folder)
    duplicates = {}
    last = store.get_meta("last_scan_id")
    if last:
        for w in store.query("select path, detail from scan_warnings where scan_id = ? and kind = 'duplicate_file' "
                             "and model = ? and challenge = ?", (int(last), model, challenge.id)):
            rel = (w["path"] or "").split("/", 2)[-1]
            duplicates[rel] = w["detail"]
    return {"prompt_version": version, "prompt_sha256": sha, "version_checks": prompts.version_checks(challenge),
            "thresholds": prompts.version_thresholds(challenge, version), "duplicates": duplicates}


def in_flight(path: Path) -> str | None:
    """The check that had started but not finished when the checker stopped."""
    started, finished = [], set()
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    for line in lines:
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj.get("started"), str):
            started.append(obj["started"])
        elif isinstance(obj.get("check"), dict):
            finished.add(obj["check"].get("name"))
    return started[-1] if started and started[-1] not in finished else None


def verdict_message(checks: list[dict], verdict: str, limit: int = 300) -> str:
    """The message of the first check that decided ``verdict`` (none for a pass)."""
    if verdict in (V.PASS, V.INFO):
        return ""
    for c in checks:
        if c.get("verdict") == verdict and c.get("message"):
            text = " ".join(str(c["message"]).split())
            return f"{c['name']}: {text[:limit]}"
    return ""


def parse_results(path: Path) -> tuple[list[dict], dict | None]:
    """Checks and the final 'done' record from the child's results file.
    A torn last line (the child was killed mid-write) is ignored."""
    checks, done = [], None
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return checks, None
    for line in lines:
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if "check" in obj and isinstance(obj["check"], dict):
            c = obj["check"]
            if c.get("verdict") in V.CHECK_VERDICTS and isinstance(c.get("name"), str):
                checks.append(c)
        elif obj.get("done"):
            done = obj
    return checks, done


def run_answers(workbench: Workbench, pairs: list[tuple[str, str]], *, backend: str = "auto", jobs: int = 1,
                on_event: Callable[[RunEvent], None] | None = None, cancel: threading.Event | None = None,
                allow_unsafe: bool = False, self_check: bool = True, seed: int | None = None,
                timeout_s: float | None = None) -> list[RunEvent]:
    require_backend(backend)  # an absent backend asked for by name: refused, not an `error` per answer
    options = RunOptions(backend=backend, jobs=jobs, allow_unsafe=allow_unsafe, self_check=self_check, seed=seed,
                         timeout_s=timeout_s)
    return Runner(workbench, options, on_event, cancel).run_all(pairs)


def event_dict(event: RunEvent) -> dict:
    return asdict(event)
