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
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import benchtui
from benchtui.challenges import adapters, coverage
from benchtui.challenges.definition import Challenge, RunLimits
from benchtui.host.backends import choose_backend, probe_all, require_backend
from benchtui.records.checks import CheckRow
from benchtui.records.flags import hack_flags
from benchtui.records.job import Job, host_thresholds
from benchtui.records.verdicts import ERROR, FAIL, INFO, INTERRUPTED, NO_ANSWER, PASS, TIMEOUT, worst
from benchtui.runner import sandbox
from benchtui.runner.bundle import BundleResult, JobBundle, engine_fingerprint, execute_bundle, open_up, pack_tree
from benchtui.runner.run_order import LongestFirst
from benchtui.store import answers_sql, runs_sql, transcripts_sql
from benchtui.store.database import Store, now_iso
from benchtui.store.queries import TRIAL, answer_row, suite_origin
from benchtui.verify import seeds
from benchtui.workbench.gitinfo import read_git
from benchtui.workbench.layout import Workbench
from benchtui.workbench.scan import ScanResult, scan_workbench


@dataclass
class RunEvent:
    kind: str  # queued | started | running (on a cluster node) | retrying | finished | error | cancelled | busy (another process runs it)
    model: str
    challenge: str
    run_id: int | None = None
    verdict: str | None = None
    message: str = ""
    done: int = 0
    total: int = 0
    duration_s: float | None = None
    node: str = ""  # the cluster node it runs or ran on (``benchtui run --cluster``); "" for a run on this machine


@dataclass
class RunOptions:
    backend: str = "auto"
    jobs: int = 1
    allow_unsafe: bool = False
    self_check: bool = True
    layer: str = "auto"
    seed: int | None = None  # fixed only for reproducing a run; secret otherwise
    timeout_s: float | None = None  # overrides the challenge's own wall-clock limit
    trial: bool = False  # `adapter check`: stored with status TRIAL, never the answer's latest verdict


class Cluster(Protocol):
    """Where runs go as remote tasks (engine/cluster/ray_cluster.py's ``Cluster``, on a floor above)."""

    def choose_backend(self, requested: str, supported: tuple[str, ...]) -> tuple[str, str | None]: ...

    def watch(self, cancel: threading.Event) -> None: ...

    def run(self, bundle: JobBundle, challenge: Challenge,
            on_running: Callable[..., None] | None = None) -> BundleResult: ...

    def require_backend(self, requested: str) -> None: ...

    def slots(self) -> int: ...


class RunInterrupted(Exception):
    """A run that did not finish through no fault of the answer: its cluster node died
    (after the one retry), or the batch was cancelled while it ran. ``node`` names where."""

    def __init__(self, message: str, node: str = ""):
        super().__init__(message)
        self.node = node


def mark_interrupted(store: Store) -> int:
    """Runs left 'running' by a process that no longer exists become 'interrupted'."""
    stale = []
    for r in runs_sql.running_runs(store):
        if r["pid"] is None or not _alive(r["pid"]):
            stale.append(r["id"])
    for run_id in stale:
        runs_sql.update_run(store, run_id, {"status": "interrupted", "verdict": INTERRUPTED, "finished_at": now_iso(),
                                            "message": "the process running it ended before it finished"})
    return len(stale)


def scan_and_mark_interrupted(workbench: Workbench, store: Store) -> ScanResult:
    """The workbench scanned into the store, then the runs left running by a process that has
    ended marked interrupted: what `benchtui results` and the dashboard's matrix do before they
    show verdicts, so the two faces never disagree on what is current."""
    result = scan_workbench(workbench, store)
    mark_interrupted(store)
    return result


def claim_run(store: Store, row: dict[str, Any], since: str | None = None) -> tuple[int | None, dict[str, Any] | None]:
    """Insert ``row`` as this answer's running run, unless another process is
    running it, or ran it since ``since`` (when this batch started): (run_id,
    None), or (None, that run's id, pid and status).

    Two `benchtui run` (or a run and the dashboard) on one workbench would
    otherwise run the same answers twice, each skewing the other's timings.
    Check and insert happen in one write transaction, so of two racing
    processes exactly one claims the answer."""
    return runs_sql.claim_run(store, row, since,
                              blocks=lambda r: r["status"] != "running" or (r["pid"] is not None and _alive(r["pid"])))


def _alive(pid: int) -> bool:
    return runs_sql.process_alive(pid)


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
    def ignore(folder: str, names: list[str]) -> set[str]:
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
    open_up(dst)


def versions(backend: str) -> dict[str, str]:
    out = {"python": platform.python_version(), "benchtui": benchtui.__version__}
    for st in probe_all().values():
        out.update(st.versions)
    return out


class Runner:
    """One configured run session: a workbench, options and a cancel flag."""

    def __init__(self, workbench: Workbench, options: RunOptions, on_event: Callable[[RunEvent], None] | None = None,
                 cancel: threading.Event | None = None, cluster: Cluster | None = None,
                 drain: threading.Event | None = None):
        self.workbench = workbench
        self.options = options
        self.on_event = on_event or (lambda e: None)
        self.cancel = cancel or threading.Event()  # set: the runs in flight stop, none starts
        self.drain = drain or threading.Event()  # set: the runs in flight finish, none starts
        self.cluster = cluster  # engine.cluster.ray_cluster.Cluster: each run is a Ray task there
        # On a cluster each worker picks its own layer (recorded per run); the driver runs nothing itself.
        self.layer = sandbox.choose_layer(options.layer, allow_unsafe=options.allow_unsafe) if cluster is None else "cluster"
        self.git_commit = read_git(workbench.root).commit
        self._lock = threading.Lock()
        self._done = 0
        self._total = 0
        self.started_at: str | None = None

    def emit(self, event: RunEvent) -> None:
        try:  # noqa: SIM105 - a best-effort step: try/except keeps the skipped failure visible where it is
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
        if self.cluster is not None:
            self.cluster.watch(self.cancel)  # a cancel cancels the remote tasks too
        if jobs == 1:
            return [self.run_one(m, c) for m, c in pairs]
        with Store(self.workbench.store_path) as store:
            queue = LongestFirst(pairs, runs_sql.last_durations(store))
        events: dict[int, RunEvent] = {}

        def slot() -> None:
            while (i := queue.take()) is not None:
                try:
                    events[i] = event = self.run_one(*pairs[i])
                except BaseException:
                    queue.drop_rest()  # a sandbox gone for one run is gone for all: none starts after it
                    raise
                queue.finished(i, event.duration_s)

        with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="benchtui-run") as pool:
            slots = [pool.submit(slot) for _ in range(min(jobs, len(pairs)))]
        for s in slots:
            s.result()  # the first failure of a slot, raised here as pool.map would
        return [events[i] for i in range(len(pairs))]

    def _finish(self, event: RunEvent) -> RunEvent:
        with self._lock:
            self._done += 1
            event.done, event.total = self._done, self._total
        self.emit(event)
        return event

    def run_one(self, model: str, challenge_id: str) -> RunEvent:
        if self.cancel.is_set() or self.drain.is_set():
            return self._finish(RunEvent("cancelled", model, challenge_id, message="cancelled before it started"))
        challenge = self.workbench.challenges[challenge_id]
        with Store(self.workbench.store_path) as store:
            answer = answer_row(store, model, challenge_id)
            if not answer:
                return self._finish(RunEvent("error", model, challenge_id, message="no such answer in the store; scan first"))
            folder = self.workbench.root / answer["path"]
            if self.cluster is not None:
                backend, degraded = self.cluster.choose_backend(self.options.backend, challenge.backends)
            else:
                backend, degraded = choose_backend(self.options.backend, challenge.backends)
            status = probe_all().get(backend) if self.cluster is None else None
            seed = self.options.seed if self.options.seed is not None else seeds.secret_seed()
            digest, files = tree_digest(folder) if folder.is_dir() else ("", {})
            prompt = answer_prompt_facts(store, challenge, folder, model)  # the prompt version the answer was given
            run_id, busy = claim_run(store, {
                "model": model, "challenge": challenge_id, "status": "running", "backend": backend,
                "device": status.device if status and status.available else "", "sandbox": self.layer, "seed": seeds.for_store(seed),
                "started_at": now_iso(), "pid": os.getpid(), "git_commit": self.git_commit, "answer_sha256": digest,
                "files": json.dumps(files), "versions": json.dumps({**versions(backend), "suite": suite_origin(challenge.path)}),
                "message": degraded or "", "prompt_version": prompt["prompt_version"]}, since=self.started_at)
        if busy is not None:
            said = (f"already running (run #{busy['id']}, process {busy['pid']})" if busy["status"] == "running" else
                    f"run meanwhile by process {busy['pid']} (run #{busy['id']}: {busy['verdict'] or busy['status']})")
            return self._finish(RunEvent("busy", model, challenge_id, run_id=busy["id"], message=f"{said}: not run twice"))
        assert run_id is not None  # claim_run gives a run id whenever no other process has the answer
        self.emit(RunEvent("started", model, challenge_id, run_id=run_id, total=self._total))
        started = time.perf_counter()

        ended = threading.Event()

        def on_running(node: str, retry: str = "") -> None:  # a cluster node took the task (or it is retried)
            if ended.is_set():
                return  # heard after the run ended: its row is final
            with Store(self.workbench.store_path) as store:
                runs_sql.update_run(store, run_id, {"node": node})
            self.emit(RunEvent("retrying" if retry else "running", model, challenge_id, run_id=run_id, total=self._total,
                               node=node, message=retry))

        node = ""
        checks: list[CheckRow]
        try:
            if answer["status"] == "no_answer":
                checks, verdict, extra = [], NO_ANSWER, {"message": "the folder holds no answer files"}
            else:
                checks, verdict, extra = self._execute(folder, challenge, model, backend, seed, digest, prompt, on_running)
                node = extra.get("node", "")
        except sandbox.SandboxUnavailable:
            raise
        except KeyboardInterrupt:  # stopped at once: recorded with the time it had run, never left 'running'
            ended.set()
            self._record(run_id, [], INTERRUPTED, {"message": "stopped by the user (Ctrl-C)"}, time.perf_counter() - started)
            raise
        except RunInterrupted as exc:  # a cluster node died under it (twice), or the batch was cancelled
            checks, verdict, extra = [], INTERRUPTED, {"message": str(exc), "node": exc.node}
            node = exc.node
        except Exception as exc:  # benchtui's own failure: record it, never lose the row
            checks, verdict, extra = [], ERROR, {"message": f"benchtui could not run it: {type(exc).__name__}: {exc}"}
        duration = time.perf_counter() - started
        ended.set()
        if self.cancel.is_set() and verdict == TIMEOUT:
            verdict, extra["message"] = INTERRUPTED, "cancelled by the user"
        message = self._record(run_id, checks, verdict, extra, duration)
        return self._finish(RunEvent("finished", model, challenge_id, run_id=run_id, verdict=verdict,
                                     message=message, duration_s=duration, node=node))

    def _record(self, run_id: int, checks: list[CheckRow], verdict: str, extra: dict[str, Any], duration: float) -> str:
        """The run's checks and its final row; the message it was given."""
        with Store(self.workbench.store_path) as store:
            message = extra.pop("message", "") or verdict_message(checks, verdict)
            # what decided the verdict first (the compiler's error, ...), a degraded backend's note after
            runs_sql.finish_run(store, run_id, [
                {"run_id": run_id, "position": i, "name": c["name"], "verdict": c["verdict"],
                 "value": json.dumps(c.get("value")), "threshold": json.dumps(c.get("threshold")),
                 "message": c.get("message", ""),
                 "details": json.dumps({**(c.get("details") or {}), **({"requires": c["requires"]} if c.get("requires") else {})})}
                for i, c in enumerate(checks)], {
                "status": "interrupted" if verdict == INTERRUPTED else TRIAL if self.options.trial else "done",
                "verdict": verdict, "finished_at": now_iso(), "duration_s": round(duration, 4),
                # what the checks measured that points at a hack: beside the verdict, never in it
                "flags": json.dumps(flags) if (flags := hack_flags(checks)) else None, **extra}, message)
        return message

    def _limits(self, challenge: Challenge) -> RunLimits:
        limits = challenge.limits
        if self.options.timeout_s:
            limits = dataclasses.replace(limits, timeout_s=self.options.timeout_s,
                                         self_check_timeout_s=min(limits.self_check_timeout_s, self.options.timeout_s))
        return limits

    def make_bundle(self, folder: Path, challenge: Challenge, model: str, backend: str, seed: int,
                    prompt: dict[str, Any] | None = None, *, key: str | None = None, limits: RunLimits | None = None,
                    adapter_root: Path | None | bool = True, stop_at_first_kill: bool = False, **fields: Any) -> JobBundle:
        """Everything the run needs from this machine's disk, by value (engine/runner/bundle.py):
        the answer's scratch copy, the adapter (workbench .benchtui/adapters first, then the
        plugin's; a stale one is not used and its `adapter` check goes into the results
        preamble), the job and the limits. ``adapter_root``: the workbench to look adapters up
        in (True: this one; None: the plugin's only)."""
        with tempfile.TemporaryDirectory(prefix="benchtui-stage-") as staging:
            tmp = Path(staging)
            stage = tmp / "answer"
            copy_answer(self.workbench, folder, stage, challenge)
            preamble = tmp / "preamble.jsonl"
            root = self.workbench.root if adapter_root is True else adapter_root or None
            adapter = adapters.prepare_for_run(root, challenge, model, folder, tmp, preamble)
            said = prompt_check(prompt)
            if said is not None:
                adapters.append_check(preamble, said)
            limits = limits or self._limits(challenge)
            facts = prompt or {}
            job = Job(challenge_id=challenge.id, model=model, seed=seed, backend=backend,
                      thresholds=host_thresholds({**challenge.thresholds, **(facts.get("thresholds") or {})}),
                      forbidden_imports=list(challenge.forbidden_imports), prompt_version=facts.get("prompt_version"),
                      version_checks=facts.get("version_checks") or {}, duplicates=facts.get("duplicates") or {},
                      timeout_s=limits.timeout_s, stop_at_first_kill=stop_at_first_kill)
            return JobBundle(**{
                "key": key or f"{model}/{challenge.id}", "model": model, "challenge_id": challenge.id,
                "answer_tar": pack_tree(stage), "job": job, "limits": limits, "gpu": backend == "cuda",
                "challenge_dir": str(challenge.path), "adapter_name": adapter.name if adapter else None,
                "adapter_bytes": adapter.read_bytes() if adapter else None,
                "results_preamble": preamble.read_text(encoding="utf-8") if preamble.is_file() else "",
                "self_check": self.options.self_check, "layer": self.options.layer if self.cluster else self.layer,
                "allow_unsafe": self.options.allow_unsafe,
                "hide": [str(p) for p in (challenge.path.parent, self.workbench.root, self.workbench.store_path.parent)],
                "engine_fingerprint": engine_fingerprint(), **fields})

    def dispatch(self, bundle: JobBundle, challenge: Challenge, on_running: Callable[[str], None] | None = None) -> BundleResult:
        """Run a bundle here, or as a Ray task on the cluster (engine/cluster/ray_cluster.py)."""
        if self.cluster is None:
            return execute_bundle(bundle, layer=self.layer, stop=self.cancel)
        return self.cluster.run(bundle, challenge, on_running=on_running)

    def _execute(self, folder: Path, challenge: Challenge, model: str, backend: str, seed: int, digest: str,
                 prompt: dict[str, Any] | None = None,
                 on_running: Callable[[str], None] | None = None) -> tuple[list[CheckRow], str, dict[str, Any]]:
        limits = self._limits(challenge)
        bundle = self.make_bundle(folder, challenge, model, backend, seed, prompt, limits=limits)
        got = self.dispatch(bundle, challenge, on_running)
        if got.get("stopped"):
            raise RunInterrupted(f"stopped by the user after {got['wall_s']:.1f} s")
        checks, done, stderr = got["checks"], got["done"], got["checker_stderr"]
        if got["timed_out"]:
            # the checks that finished stay; the one in flight says the time limit stopped it
            finished = len(checks)
            flight = got["in_flight"]
            if flight:
                checks.append({"name": flight, "verdict": TIMEOUT, "value": None, "threshold": limits.timeout_s,
                               "message": f"stopped by the run's time limit ({limits.timeout_s:g} s) while it ran"})
            checks.append({"name": "run", "verdict": TIMEOUT, "value": round(got["wall_s"], 2), "threshold": limits.timeout_s,
                           "message": f"killed after {got['wall_s']:.1f} s (limit {limits.timeout_s:g} s); {finished} checks had finished"
                                      + (f", {flight} was running" if flight else "")})
        elif done is None:
            last = stderr.strip().splitlines()[-1:] if stderr.strip() else []
            why = f"signal {got['signal']}" if got["signal"] else f"exit code {got['exit_code']}"
            checks.append({"name": "run", "verdict": ERROR, "value": got["exit_code"], "threshold": None,
                           "message": f"the checker stopped early ({why})" + (f": {last[0][:300]}" if last else "")})
        after, _ = tree_digest(folder)
        if after != digest:
            checks.append({"name": "answer_folder_unchanged", "verdict": ERROR, "value": after, "threshold": digest,
                           "message": "the answer folder changed during the run (it is never written to by benchtui)"})
        # What the answer printed is its own output; the checker's stderr only matters when it failed.
        extra: dict[str, Any] = {"stdout": got["answer_stdout"],
                 "stderr": got["answer_stderr"] + (f"\n[checker]\n{stderr}" if stderr.strip() and done is None else ""),
                 "work_s": round(done["duration_s"], 4) if done else None}
        extra.update(got.get("self_check") or {})
        if self.cluster is not None:  # where it ran: the worker's own sandbox layer, device and versions
            extra.update({"sandbox": got["layer"], "node": got.get("node", ""), "device": got["facts"]["device"],
                          "versions": json.dumps({**got["facts"]["versions"], "suite": suite_origin(challenge.path)})})
        verdict = worst(c["verdict"] for c in checks)
        if got["timed_out"] and any(c["verdict"] == FAIL for c in checks):
            verdict = FAIL  # a check it finished found a wrong result: the timeout stands beside it
        # what the verdict covers: a pass leaving a requirement not exercised is `partial`
        verdict, cov = coverage.for_run(challenge, (prompt or {}).get("prompt_version"), checks, verdict)
        extra["coverage"] = json.dumps(cov)
        return checks, verdict, extra


# -- the prompt an answer was given, and its copied files ------------------
def answer_prompt_facts(store: Store, challenge: Challenge, folder: Path, model: str) -> dict[str, Any]:
    """The answer's prompt version (engine/challenges/prompts.py), the checks that belong to
    a prompt version, and the latest scan's duplicate_file warnings for it."""
    from benchtui.challenges import prompts
    from benchtui.decks.challenge import imported_prompt

    version, sha = prompts.answer_prompt(challenge, folder)
    source = prompts.PROMPT_FILE if sha else None
    said = None
    if sha is None:  # no PROMPT.md: the prompt its session was given, when that is a known version
        found = prompts.version_of_texts(challenge, first_user_messages(store, folder, model, challenge.id))
        if found:
            version, sha, source = found
    if sha is None:  # an answer imported from a deck: the deck's prompt, by the import's record
        found_deck = imported_prompt(store, challenge, model)
        if found_deck:
            version, sha, source, said = found_deck
    duplicates = {}
    last = store.get_meta("last_scan_id")
    if last:
        for w in answers_sql.scan_warnings_of(store, int(last), model, challenge.id, kind="duplicate_file"):
            rel = (w["path"] or "").split("/", 2)[-1]
            duplicates[rel] = w["detail"]
    return {"prompt_version": version, "prompt_sha256": sha, "prompt_source": source, "prompt_said": said,
            "version_checks": prompts.version_checks(challenge),
            "thresholds": prompts.version_thresholds(challenge, version), "duplicates": duplicates}


ORDINALS = ("first", "second", "third")  # the user messages a prompt is looked for in


def first_user_messages(store: Store, folder: Path, model: str, challenge_id: str) -> Iterator[tuple[str, str]]:
    """(where, text) of the first three user messages of each transcript the
    scan found for this answer (a harness may open with a command before the
    prompt); a transcript that cannot be read is passed over."""
    from benchtui.transcripts import TranscriptError, load_transcript
    from benchtui.transcripts.model import USER

    for relpath in transcripts_sql.transcript_relpaths(store, model, challenge_id):
        try:
            transcript = load_transcript(folder / relpath)
        except TranscriptError:
            continue
        said = [e.text for e in transcript.entries if e.role == USER and e.text.strip()][:len(ORDINALS)]
        for n, text in enumerate(said):
            yield f"{relpath}'s {ORDINALS[n]} user message", text


def prompt_check(prompt: dict[str, Any] | None) -> CheckRow | None:
    """The ``prompt`` check a run records when its version came from elsewhere than PROMPT.md."""
    from benchtui.challenges.prompts import PROMPT_FILE

    source = (prompt or {}).get("prompt_source")
    if prompt is None or not source or source == PROMPT_FILE:
        return None
    return {"name": "prompt", "verdict": "info", "value": prompt["prompt_version"], "threshold": None,
            "message": f"judged against prompt version {prompt['prompt_version']}: the folder has no PROMPT.md; "
                       + (prompt.get("prompt_said") or f"{source} is that version's prompt"),
            "details": {"source": source, "sha256": prompt.get("prompt_sha256")}}


def verdict_message(checks: Sequence[Mapping[str, Any]], verdict: str, limit: int = 300) -> str:
    """The message of the first check that decided ``verdict`` (none for a pass)."""
    if verdict in (PASS, INFO):
        return ""
    for c in checks:
        if c.get("verdict") == verdict and c.get("message"):
            text = " ".join(str(c["message"]).split())
            return f"{c['name']}: {text[:limit]}"
    return ""


def run_answers(workbench: Workbench, pairs: list[tuple[str, str]], *, backend: str = "auto", jobs: int | None = 1,
                on_event: Callable[[RunEvent], None] | None = None, cancel: threading.Event | None = None,
                allow_unsafe: bool = False, self_check: bool = True, seed: int | None = None,
                timeout_s: float | None = None, cluster: Cluster | None = None, drain: threading.Event | None = None,
                trial: bool = False) -> list[RunEvent]:
    """Run ``pairs``; ``cluster`` (an engine.cluster.ray_cluster.Cluster) runs each as a Ray task there,
    ``jobs`` (None: as many as the cluster has CPUs, else 1) at a time. ``cancel`` stops the
    runs in flight; ``drain`` lets them finish; after either no run starts."""
    if cluster is None:
        require_backend(backend)  # an absent backend asked for by name: refused, not an `error` per answer
    else:
        cluster.require_backend(backend)
    if jobs is None:
        jobs = cluster.slots() if cluster is not None else 1
    options = RunOptions(backend=backend, jobs=jobs, allow_unsafe=allow_unsafe, self_check=self_check, seed=seed,
                         timeout_s=timeout_s, trial=trial)
    return Runner(workbench, options, on_event, cancel, cluster=cluster, drain=drain).run_all(pairs)
