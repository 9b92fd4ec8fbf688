"""`benchtui audit`: how strong is each challenge's suite?

For every answer whose latest verdict is ``pass`` (and each challenge's
reference): a baseline run on the audit's cheap path records which lines the
checks reached and what the answer returned; then single-point mutants of
the reached Python files run, one scratch copy each, through the same two
sandboxed processes as a run (``execute_bundle``), stopping at the
first failing check. A mutant no check kills is compared with the baseline on
the values returned (``engine.audit.equivalence``): the same everywhere (floats
within rounding), or differing only in what the answer's prompt leaves to the
answer, means "likely equivalent".

Every outcome is stored as soon as it is known, keyed by the mutant's content,
the rest of the answer, the adapter and the suite's hash, so an interrupted
audit resumes and a re-audit reruns only what a change can affect.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from benchtui.audit.answer_lines import LINES_FILE
from benchtui.audit.checker import KILLING
from benchtui.audit.equivalence import ALLOWED, allowed_by_prompt, same_values, unstable_positions
from benchtui.audit.mutate import FAMILIES, Mutant, Source
from benchtui.challenges import adapters, contracts, prompts
from benchtui.challenges.definition import Challenge
from benchtui.challenges.reference_answer import write_reference_answer
from benchtui.host.backends import choose_backend
from benchtui.runner.orchestrate import RunInterrupted, Runner, RunOptions, answer_prompt_facts, tree_digest
from benchtui.store import audit_sql, runs_sql
from benchtui.store.database import Store, now_iso
from benchtui.workbench.layout import Workbench

REFERENCE = "(reference)"
DEFAULT_SEED = 1717  # fixed: a mutant and its baseline must see the same inputs (and the cache needs it)


@dataclass
class AuditOptions:
    models: list[str] = field(default_factory=list)
    challenges: list[str] = field(default_factory=list)
    mutants: int | None = None  # per answer; None: all
    jobs: int = 1
    fresh: bool = False
    seed: int = DEFAULT_SEED
    allow_unsafe: bool = False
    references: bool = True
    operators: str = "all"  # a family of mutate.FAMILIES: all, kernel (the contract operators), classic


@dataclass
class AuditEvent:
    kind: str  # baseline | mutant | answer | done
    model: str = ""
    challenge: str = ""
    status: str = ""
    message: str = ""
    done: int = 0
    total: int = 0
    cached: bool = False


@dataclass
class Target:
    model: str
    challenge: Challenge
    folder: Path


def suite_sha256(challenge: Challenge) -> str:
    """Everything of the challenge the checker reads: its folder minus adapters
    (an adapter is keyed separately, per answer)."""
    h = hashlib.sha256()
    for path in sorted(challenge.path.rglob("*")):
        rel = path.relative_to(challenge.path)
        if path.is_file() and rel.parts[0] != "adapters" and "__pycache__" not in rel.parts:
            h.update(rel.as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def checker_sha256() -> str:
    """The checker's own code (the Suite API, the wire, the audit's checker):
    a change there can change any verdict, so it is part of every cache key."""
    root = Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    for path in sorted([*(root / "verify").glob("*.py"), root / "audit" / "checker.py",
                                     root / "audit" / "answer_lines.py", root / "audit" / "equivalence.py"]):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def _sha(*parts) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def pick(sources: list[Source], n: int | None, operators: set[str] | None = None) -> list[Mutant]:
    """At most ``n`` mutants over an answer's files, spread over the operators
    (those in ``operators``; None: all) and stable across audits (each
    operator's sites in key order, taken in turn); only the picked ones are built."""
    groups = defaultdict(list)
    for src in sources:
        for site in src.sites:
            if operators is None or site.operator in operators:
                groups[site.operator].append((site.key, src, site))
    queues = [sorted(groups[k], key=lambda t: t[0]) for k in sorted(groups)]
    out = []
    while any(queues) and (n is None or len(out) < n):
        for q in queues:
            if q and (n is None or len(out) < n):
                _, src, site = q.pop(0)
                m = src.build(site)
                if m is not None:
                    out.append(m)
    return sorted(out, key=lambda m: (m.file, m.line))


class Auditor:
    def __init__(self, workbench: Workbench, options: AuditOptions,
                 on_event: Callable[[AuditEvent], None] | None = None, cancel: threading.Event | None = None, cluster=None):
        self.workbench = workbench
        self.options = options
        self.on_event = on_event or (lambda e: None)
        self.cancel = cancel or threading.Event()
        # On a cluster (engine/cluster/ray_cluster.py) each baseline and mutant is one Ray task, as a run is.
        self.runner = Runner(workbench, RunOptions(jobs=options.jobs, self_check=False, allow_unsafe=options.allow_unsafe),
                             cancel=self.cancel, cluster=cluster)
        self.cluster = cluster
        if cluster is not None:
            cluster.watch(self.cancel)  # a cancelled audit cancels its Ray tasks
        self._lock = threading.Lock()
        self.done = self.total = 0
        self.reused = 0
        self.checker = checker_sha256()

    def emit(self, event: AuditEvent) -> None:
        try:  # noqa: SIM105 - a best-effort step: try/except keeps the skipped failure visible where it is
            self.on_event(event)
        except Exception:  # a broken listener must not break the audit
            pass

    # -- what to audit ------------------------------------------------------------------
    def targets(self, tmp: Path) -> list[Target]:
        chosen = set(self.options.challenges)
        models = set(self.options.models)
        out = []
        with Store(self.workbench.store_path) as store:
            latest = sorted(runs_sql.latest_done_runs(store, "model, challenge, verdict"),
                            key=lambda r: (r["challenge"], r["model"]))
            paths = {(a["model"], a["challenge"]): a["path"] for a in store.answers()}
        for cid, challenge in self.workbench.challenges.items():
            if chosen and cid not in chosen:
                continue
            # A CUDA challenge's reference is NumPy, which its suite cannot bind (it compiles .cu files).
            if self.options.references and (not models or REFERENCE in models) and challenge.language != "cuda":
                folder = tmp / "references" / cid
                folder.mkdir(parents=True)
                # the reference as an answer folder holds it: an imported deck problem's under its answer file
                write_reference_answer(challenge, folder)
                # the reference answers the challenge's own prompt: judged by its version's checks too
                if (challenge.path / prompts.PROMPT_FILE).is_file():
                    shutil.copyfile(challenge.path / prompts.PROMPT_FILE, folder / prompts.PROMPT_FILE)
                out.append(Target(REFERENCE, challenge, folder))
            for r in latest:
                if r["challenge"] == cid and r["verdict"] == "pass" and (not models or r["model"] in models) \
                        and (r["model"], cid) in paths:
                    out.append(Target(r["model"], challenge, self.workbench.root / paths[(r["model"], cid)]))
        return out

    # -- one copy through the two sandboxed processes -----------------------------------
    def execute(self, target: Target, mutant: Mutant | None, *, baseline: bool, timeout_s: float,
                lines: bool | None = None) -> dict:
        """One copy through the pipeline. ``baseline``: run every check (a mutant
        stops at the first failing one); ``lines``: trace the lines reached
        (default: on for a baseline)."""
        lines = baseline if lines is None else lines
        challenge = target.challenge
        backend, _ = (self.cluster.choose_backend("auto", challenge.backends) if self.cluster is not None
                      else choose_backend("auto", challenge.backends))
        with Store(self.workbench.store_path) as store:
            prompt = answer_prompt_facts(store, challenge, target.folder, target.model)
        # The adapter's key is checked against the original the mutant came from: it follows the mutant.
        bundle = self.runner.make_bundle(
            target.folder, challenge, target.model, backend, self.options.seed,
            {k: prompt.get(k) for k in ("prompt_version", "version_checks", "thresholds")},
            key=f"{target.model}/{challenge.id}/{mutant.sha[:12] if mutant is not None else 'baseline'}",
            limits=dataclasses.replace(challenge.limits, timeout_s=timeout_s),
            adapter_root=self.workbench.root if target.model != REFERENCE else None,
            stop_at_first_kill=not baseline,
            overlay={mutant.file: mutant.source} if mutant is not None else {},
            self_check=False, checker="benchtui.audit.checker",
            answer_server="benchtui.audit.answer_lines" if lines else "benchtui.runner.answer_server",
            collect_trace=True, collect_lines=LINES_FILE if lines else None)
        started = time.perf_counter()
        got = self.runner.dispatch(bundle, challenge)
        wall = time.perf_counter() - started
        checks = got["checks"]
        if got["timed_out"]:
            checks.append({"name": "run", "verdict": "timeout", "message": f"killed after {got['wall_s']:.1f} s"})
        elif got["done"] is None:
            checks.append({"name": "run", "verdict": "error", "message": "the checker stopped early "
                           + (got["checker_stderr"].strip().splitlines() or [""])[-1][:200]})
        return {"checks": checks, "trace": got.get("trace"), "lines": got.get("lines") or {}, "wall_s": wall}

    # -- the audit ----------------------------------------------------------------------
    def run(self) -> int:
        started = time.perf_counter()
        with Store(self.workbench.store_path) as store:
            audit_id = audit_sql.start_audit(store, {"started_at": now_iso(), "status": "running", "options": json.dumps(
                dataclasses.asdict(self.options))})
        with tempfile.TemporaryDirectory(prefix="benchtui-audit-refs-") as tmp:
            targets = self.targets(Path(tmp))
            jobs = max(1, self.options.jobs)
            with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="benchtui-audit") as pool:
                # Baselines in parallel too; each answer's mutants wait for its baseline (the lines, the trace).
                plans = [p for p in pool.map(self.plan, targets) if p is not None]
                work = [(p, m) for p in plans for m in p["mutants"]]
                self.total = len(work)
                available = sum(p["available"] for p in plans)
                self.emit(AuditEvent("planned", total=self.total, message=f"{len(plans)} answers, {self.total} mutants "
                                     f"(of {available} made from the lines the checks reached)"))
                list(pool.map(lambda pm: self.mutant(*pm), work))
        with Store(self.workbench.store_path) as store:
            answers = [{"model": p["target"].model, "challenge": p["target"].challenge.id, "status": p["status"],
                        "message": p["message"], "baseline_key": p["baseline_key"],
                        "mutant_keys": json.dumps([k for _, k in p["keys"]]), "available": p["available"],
                        **summarise(store, p["target"].model, p["target"].challenge.id, [k for _, k in p["keys"]])}
                       for p in plans]
            if self.cancel.is_set():  # a cancelled audit is not "audited": each answer says how far it got
                for a in answers:
                    if a["status"] == "audited":
                        ran = len(mutant_rows(store, json.loads(a["mutant_keys"])))
                        a["status"] = "interrupted"
                        a["message"] = (f"interrupted: {ran} of {a['generated']} mutants run, their outcomes kept; "
                                        "a new audit resumes")
            audit_sql.finish_audit(store, audit_id, answers, {
                "finished_at": now_iso(), "wall_s": round(time.perf_counter() - started, 2),
                "status": "cancelled" if self.cancel.is_set() else "done", "mutants": self.total,
                "reused": self.reused})
        self.emit(AuditEvent("done", done=self.done, total=self.total))
        return audit_id

    def plan(self, target: Target) -> dict | None:
        """Baseline (cached), then the mutants of the lines its checks reached."""
        if self.cancel.is_set():
            return None
        challenge = target.challenge
        suite = suite_sha256(challenge)
        res = adapters.resolve(self.workbench.root if target.model != REFERENCE else None, challenge, target.model,
                               target.folder)
        adapter_sha = hashlib.sha256(res.path.read_bytes()).hexdigest() if res.usable and res.path else None
        answer_sha, _ = tree_digest(target.folder)
        context = {"answer": answer_sha, "suite": suite, "seed": self.options.seed, "adapter": adapter_sha,
                   "checker": self.checker}
        key = _sha("baseline", context)
        plan = {"target": target, "suite": suite, "context": context, "baseline_key": key, "mutants": [], "keys": [],
                "available": 0,
                "status": "audited", "message": ""}
        with Store(self.workbench.store_path) as store:
            row = None if self.options.fresh else audit_sql.baseline(store, key)
        cached = bool(row)
        if row:
            checks, trace, lines = json.loads(row["checks"]), json.loads(row["trace"] or "null"), json.loads(row["lines"])
            unstable = json.loads(row.get("unstable") or "null")
        else:
            try:
                got = self.execute(target, None, baseline=True, timeout_s=challenge.limits.timeout_s)
                checks, trace, lines = got["checks"], got["trace"], got["lines"]
                verdict = "pass" if not any(c["verdict"] in KILLING for c in checks) else "fail"
                unstable = None
                if verdict == "pass":  # a second run: values that differ from run to run never decide equivalence
                    again = self.execute(target, None, baseline=True, lines=False, timeout_s=challenge.limits.timeout_s)
                    unstable = unstable_positions(trace, again["trace"])
            except RunInterrupted as exc:  # not cached: the next audit runs it again
                plan.update(status="interrupted", message=f"the baseline was interrupted: {exc}")
                self.emit(AuditEvent("baseline", target.model, challenge.id, "interrupted"))
                return plan
            with Store(self.workbench.store_path) as store:
                audit_sql.save_baseline(store, {
                    "key": key, "model": target.model, "challenge": challenge.id, "answer_sha256": answer_sha,
                    "suite_sha256": suite, "seed": self.options.seed, "verdict": verdict, "trace": json.dumps(trace),
                    "lines": json.dumps(lines), "checks": json.dumps(checks), "unstable": json.dumps(unstable),
                    "message": "", "wall_s": round(got["wall_s"], 3),
                    "created_at": now_iso()})
                row = {"wall_s": got["wall_s"]}
        plan["trace"], plan["unstable"], plan["wall_s"], plan["checks"] = trace, unstable, row["wall_s"], checks
        bad = [c for c in checks if c["verdict"] in KILLING]
        self.emit(AuditEvent("baseline", target.model, challenge.id, "fail" if bad else "pass", cached=cached))
        if bad:
            plan["status"] = "baseline_failed"
            plan["message"] = f"the original does not pass on the audit's path: {bad[0]['name']}: {bad[0].get('message', '')[:200]}"
            return plan
        sources = []
        for rel, reached in sorted(lines.items()):
            path = target.folder / rel
            if path.suffix == ".py" and path.is_file():
                sources.append(Source(path.read_text(encoding="utf-8", errors="replace"), rel, set(reached)))
        mutants = pick(sources, self.options.mutants, FAMILIES[self.options.operators])
        if not mutants:
            plan["status"] = "no_mutants"
            plan["message"] = ("no Python line of the answer was reached by the checks" if not lines else
                               "no mutable line reached") + (" (CUDA sources are not mutated yet)"
                                                             if any(p.suffix in (".cu", ".cuh") for p in target.folder.rglob("*")) else "")
        plan["available"] = sum(len(src.sites) for src in sources)  # sites, before compiling
        plan["mutants"] = mutants
        plan["keys"] = [(m, _sha("mutant", m.sha, context)) for m in plan["mutants"]]
        plan["key_of"] = {m.sha: k for m, k in plan["keys"]}
        return plan

    def mutant(self, plan: dict, m: Mutant) -> None:
        target = plan["target"]
        key = plan["key_of"][m.sha]
        if self.cancel.is_set():
            return
        with Store(self.workbench.store_path) as store:
            status = None if self.options.fresh else audit_sql.mutant_status(store, key)
        cached = status is not None
        if cached:
            with self._lock:
                self.reused += 1
        else:
            timeout = min(target.challenge.limits.timeout_s, max(30.0, 5 * float(plan["wall_s"] or 0)))
            try:
                got = self.execute(target, m, baseline=False, timeout_s=timeout)
            except RunInterrupted as exc:  # its cluster node died (twice) or the audit was cancelled: not an outcome
                with self._lock:
                    self.done += 1
                    done = self.done
                self.emit(AuditEvent("mutant", target.model, target.challenge.id, "interrupted",
                                     f"{m.file}:{m.line} {m.description}: {exc}", done=done, total=self.total))
                return
            except Exception as exc:  # benchtui's own failure: recorded, the audit goes on
                got = {"checks": [{"name": "audit", "verdict": "error", "message": f"{type(exc).__name__}: {exc}"}],
                       "trace": None, "wall_s": 0.0}
            killer = next((c for c in got["checks"] if c["verdict"] in KILLING), None)
            allowed = None
            if killer is not None:
                status = "killed"
            elif same_values(got["trace"], plan["trace"], plan["unstable"]):
                status = "equivalent"
            else:
                allowed = allowed_by_prompt(got["checks"], plan["checks"]) or left_open(target, m)
                status = "equivalent" if allowed else "survived"
            with Store(self.workbench.store_path) as store:
                audit_sql.save_mutant(store, {
                    "key": key, "model": target.model, "challenge": target.challenge.id, "file": m.file, "line": m.line,
                    "operator": m.operator, "description": m.description, "diff": m.diff, "mutant_sha256": m.sha,
                    "suite_sha256": plan["suite"], "seed": self.options.seed, "status": status,
                    "killed_by": killer["name"] if killer else None,
                    "checks": json.dumps([{"name": c["name"], "verdict": c["verdict"]} for c in got["checks"]]),
                    "message": (allowed or (killer or {}).get("message", ""))[:500], "wall_s": round(got["wall_s"], 3),
                    "audited_at": now_iso()})
        with self._lock:
            self.done += 1
            done = self.done
        self.emit(AuditEvent("mutant", target.model, target.challenge.id, status,
                             f"{m.file}:{m.line} {m.description}", done=done, total=self.total, cached=cached))


def left_open(target: Target, m: Mutant) -> str | None:
    """The reason a mutant whose values differ only settles a point the answer's prompt leaves
    open, by the challenge's own table (``[[open]]`` in contracts.toml), or None."""
    try:
        points = contracts.load_open(target.challenge.path)
    except contracts.TableError:
        return None
    own = target.folder / prompts.PROMPT_FILE
    path = own if own.is_file() else target.challenge.path / prompts.PROMPT_FILE
    try:
        prompt = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    point = next((p for p in points if p.covers(m.operator, m.description, prompt)), None)
    return f"{ALLOWED}{point.point} ({contracts.FILENAME})" if point else None


def marks(store: Store, model: str, challenge: str) -> dict[str, bool]:
    """mutant sha -> a person's latest word on it (True: equivalent)."""
    out = {}
    for r in audit_sql.mark_rows(store, model, challenge):
        out[r["mutant_sha256"]] = bool(r["equivalent"])
    return out


def effective_status(row: dict, marked: dict[str, bool]) -> str:
    """A person's mark outranks the trace comparison; a killed mutant stays killed."""
    if row["status"] in ("survived", "equivalent") and row["mutant_sha256"] in marked:
        return "equivalent" if marked[row["mutant_sha256"]] else "survived"
    return row["status"]


def summarise(store: Store, model: str, challenge: str, keys: list[str]) -> dict:
    rows = mutant_rows(store, keys)
    marked = marks(store, model, challenge)
    counts = defaultdict(int)
    for r in rows:
        counts[effective_status(r, marked)] += 1
    counted = counts["killed"] + counts["survived"]
    return {"generated": len(keys), "killed": counts["killed"], "survived": counts["survived"],
            "equivalent": counts["equivalent"], "score": round(counts["killed"] / counted, 4) if counted else None}


mutant_rows = audit_sql.mutant_rows


def run_audit(workbench: Workbench, options: AuditOptions, on_event=None, cancel=None, cluster=None) -> int:
    """``cluster`` (engine/cluster/ray_cluster.py): baselines and mutants run as Ray tasks there."""
    return Auditor(workbench, options, on_event, cancel, cluster=cluster).run()
