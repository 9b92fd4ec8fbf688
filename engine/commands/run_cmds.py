"""run, results."""
from __future__ import annotations

import sys

from benchtui.commands.cluster_args import add_cluster_args, cluster_address, connected, driver_signals
from benchtui.commands.context import CommandError, UsageError, print_json
from benchtui.commands.interrupt import InFlight, interrupt_report, two_step_interrupt
from benchtui.records import flags as hack_flags
from benchtui.records.coverage import describe, summary
from benchtui.records.scan_kinds import WAITING_KIND
from benchtui.records.verdicts import FAILING
from benchtui.store import queries, runs_sql
from benchtui.store.gone import gone_lines
from benchtui.text.fit import fit, fit_check
from benchtui.workbench.scan import scan_workbench


def register(sub) -> None:
    p = sub.add_parser("run", help="run answers in the sandbox against the hidden checks")
    p.add_argument("-m", "--model", action="append", default=[], help="model to run (repeatable; default all)")
    p.add_argument("-c", "--challenge", action="append", default=[], help="challenge id or display name (repeatable; default all)")
    p.add_argument("--backend", choices=["auto", "cpu", "cuda", "mlx"], default="auto")
    p.add_argument("--jobs", type=int, help="answers run in parallel (default 1; on a cluster, one per CPU it has)")
    p.add_argument("--timeout", type=float, metavar="S", help="wall-clock limit per answer (default: the challenge's own)")
    p.add_argument("--no-self-check", action="store_true", help="skip the answer's own tests and demos")
    p.add_argument("--unsafe-no-isolation", action="store_true",
                   help="allow running with rlimits alone when no namespace sandbox works (network stays open)")
    rerun = p.add_argument_group("only some of the selected answers (several: any of them)")
    rerun.add_argument("--stale", action="store_true", help="those whose files changed since their last finished run")
    rerun.add_argument("--failed", action="store_true",
                       help=f"those whose last finished verdict fails ({', '.join(sorted(FAILING))})")
    rerun.add_argument("--not-run", action="store_true", help="those with no finished run")
    add_cluster_args(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("results", help="the latest verdict per answer")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_results)


def rerun_only(store, pairs: list[tuple[str, str]], stale: bool, failed: bool, not_run: bool) -> list[tuple[str, str]]:
    """The pairs ``--stale``, ``--failed`` and ``--not-run`` keep (any of those asked; all
    pairs when none is): from each answer's last finished run."""
    if not (stale or failed or not_run):
        return pairs
    from benchtui.store.judging import stale_runs

    latest = {(r["model"], r["challenge"]): r for r in runs_sql.latest_done_runs(store, "id, model, challenge, verdict")}
    changed = stale_runs(store, [r["id"] for r in latest.values()]) if stale else {}
    keep = []
    for pair in pairs:
        run = latest.get(pair)
        if (not_run and run is None) or (failed and run is not None and run["verdict"] in FAILING) \
                or (stale and run is not None and run["id"] in changed):
            keep.append(pair)
    return keep


def select_pairs(ctx, models: list[str], challenges: list[str]) -> list[tuple[str, str]]:
    store = ctx.store
    ctx.check_models(models)
    ids = ctx.challenge_ids(challenges)
    chosen = [a for a in store.answers() if (not models or a["model"] in models) and (not ids or a["challenge"] in ids)]
    # a folder holding only what was handed out has nothing to run: no run is recorded for it
    waiting = [f"{a['model']}/{a['challenge']}" for a in chosen if queries.answer_state(a) == WAITING_KIND]
    pairs = [(a["model"], a["challenge"]) for a in chosen if queries.answer_state(a) != WAITING_KIND]
    if waiting:
        print(f"waiting for an answer, not run: {', '.join(waiting[:6])}"
              + (f" and {len(waiting) - 6} more" if len(waiting) > 6 else ""), file=sys.stderr)
    if not pairs:
        raise UsageError("nothing to run: " + ("every folder selected is waiting for an answer" if waiting else
                                               "no answer matches the selection"))
    return pairs


def run_record(store, run_id: int) -> dict:
    r = queries.run_row(store, run_id)
    flags = hack_flags.parse((r or {}).get("flags"))
    return {"model": r["model"], "challenge": r["challenge"], "verdict": r["verdict"], "backend": r["backend"],
            "device": r["device"], "duration_s": r["duration_s"], "run_id": run_id, "sandbox": r["sandbox"],
            "node": r.get("node") or None,  # the cluster node it ran on (--cluster); None on this machine
            "prompt_version": r.get("prompt_version"),  # engine/challenges/prompts.py; None: unknown or missing prompt
            # hack signals measured, beside the verdict and never in it (engine/records/flags.py)
            "flags": flags,
            **run_coverage(r),
            "checks": queries.shown_checks(store, run_id),
            "self_check": {"exit_code": r["self_exit_code"], "duration_s": r["self_duration_s"], "status": r["self_status"]}}


def in_scan_words(verdict: str | None, model: str, challenge: str, answers: dict | None) -> str | None:
    """A ``no_answer`` verdict as the scan says it: ``waiting`` for a folder holding only its prompt.
    ``answers``: the store's answers by (model, challenge)."""
    a = (answers or {}).get((model, challenge))
    return queries.answer_state(a) if verdict == "no_answer" and a is not None else verdict


def print_record(r: dict, answers: dict | None = None) -> None:
    """One run as `benchtui run` prints it: the verdict, then what it did not cover and the checks
    that did not pass, each reason said once. ``answers``: see ``in_scan_words``."""
    said = in_scan_words("no_answer", r["model"], r["challenge"], answers) if r["verdict"] == "no_answer" else None
    print(f"{said or shown_verdict(r):<14} {r['model']}/{r['challenge']}  ({r['backend']}, {r['duration_s'] or 0:.1f} s)"
          + flag_words(r))
    if r.get("flags"):
        print("\n".join(fit(f"    {'flagged':<13} ", hack_flags.describe(r["flags"]) + " (not a verdict; "
                                                     "docs/verdicts.md says what it does not prove)", whole=True)))
    # requirements and checks that share a reason are said once (a CPU-only run skips most of fuse's)
    unmet = grouped_by_key(((q["status"], q["reason"]), q["id"]) for q in r.get("coverage") or () if q["status"] != "pass")
    for (status, reason), ids in unmet:
        print("\n".join(fit_check(f"    {status:<13} {', '.join(ids)}: ", status, reason)))
    shown = grouped_by_key(((c["verdict"], c["message"]), c["name"]) for c in r["checks"] if c["verdict"] not in ("pass", "info"))
    for (verdict, message), names in shown:
        if len(names) == 1:
            print("\n".join(fit_check(f"    {verdict:<13} {names[0]}: ", verdict, message)))
        else:  # said once for all of them, so said whole; `show` lists each
            print("\n".join(fit(f"    {verdict:<13} {len(names)} checks, {names[0]} to {names[-1]}: ", message,
                                 whole=True)))


def flag_words(r: dict) -> str:
    """``  FLAGGED: timing, stale`` after a run's verdict, or ""."""
    return f"  FLAGGED: {', '.join(r['flags'])}" if r.get("flags") else ""


def hacks_line(records: list[dict]) -> str | None:
    """"N suspected hacks among M runs", counted apart from the verdicts; None when no run is
    flagged (no flag is not a clean bill: a count of zero is not said as one)."""
    n = sum(1 for r in records if r.get("flags"))
    if not n:
        return None
    return (f"{hack_flags.summary(n)} among {len(records)} run{'s' if len(records) != 1 else ''} "
            "(flags, not verdicts: docs/verdicts.md)")


def grouped_by_key(items) -> list[tuple[tuple, list[str]]]:
    """``(key, name)`` pairs grouped by key, in first-seen order: ``[(key, [names])]``."""
    groups: dict[tuple, list[str]] = {}
    for key, name in items:
        groups.setdefault(key, []).append(name)
    return list(groups.items())


def run_coverage(r: dict) -> dict:
    """``coverage`` (per requirement, engine/challenges/coverage.py) and ``covers`` ("3 of 5 requirements met")."""
    cov = queries.stored_value(r.get("coverage")) if r.get("coverage") else None
    return {"coverage": cov, "covers": summary(cov)}


def shown_verdict(r: dict) -> str:
    return describe(r["verdict"], r.get("coverage"))


def cmd_run(args, ctx) -> int:
    from benchtui.runner import sandbox
    from benchtui.runner.orchestrate import run_answers

    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if args.timeout is not None and args.timeout <= 0:
        raise UsageError("--timeout must be positive")
    import threading

    from benchtui.host.backends import BackendUnavailable, require_backend

    address = cluster_address(args)
    if address is None:
        try:
            require_backend(args.backend)
        except BackendUnavailable as exc:
            raise UsageError(str(exc)) from exc
    else:
        from benchtui.cluster.ray_cluster import ClusterUnavailable, ray_module

        try:  # before the scan: without Ray, say so at once
            ray_module()
        except ClusterUnavailable as exc:
            raise UsageError(str(exc)) from None
    scan_workbench(ctx.workbench, ctx.store)
    pairs = select_pairs(ctx, args.model, args.challenge)
    asked = [flag for flag, on in (("--stale", args.stale), ("--failed", args.failed), ("--not-run", args.not_run)) if on]
    if asked:
        pairs = rerun_only(ctx.store, pairs, args.stale, args.failed, args.not_run)
        if not pairs:
            print(f"nothing to run: no answer selected is {' or '.join(asked)}".replace("--", ""), file=sys.stderr)
            return 0
    answers = {(a["model"], a["challenge"]): a for a in ctx.store.answers()}
    cancel, drain, flight = threading.Event(), threading.Event(), InFlight()
    with connected(address) as cluster, driver_signals(cancel, cluster) as caught, \
            two_step_interrupt(drain, cancel, flight, caught, enabled=cluster is None):
        # Progress always goes to stderr (stdout stays the report, or JSON): a bar on
        # a terminal, else one line per answer as it ends (and, on a cluster, as a node takes it).
        progress = _progress(len(pairs), answers) if sys.stderr.isatty() else _progress_lines(answers)

        def on_event(event) -> None:
            flight.on_event(event)
            progress.on_event(event)

        try:
            events = run_answers(ctx.workbench, pairs, backend=args.backend, jobs=args.jobs if cluster else (args.jobs or 1),
                                 allow_unsafe=args.unsafe_no_isolation, self_check=not args.no_self_check, timeout_s=args.timeout,
                                 on_event=on_event, cancel=cancel, cluster=cluster, drain=drain)
        except sandbox.SandboxUnavailable as exc:
            raise CommandError(str(exc)) from exc
        except BackendUnavailable as exc:
            raise UsageError(str(exc)) from exc
        finally:
            progress.stop()
    records = [run_record(ctx.store, e.run_id) for e in events if e.run_id is not None and e.kind != "busy"]
    busy = [e for e in events if e.kind == "busy"]
    for e in busy:  # stderr, so stdout stays JSON
        print(f"busy: {e.model}/{e.challenge} {e.message}", file=sys.stderr)
    if args.json:
        print_json({"runs": records, "busy": [{"model": e.model, "challenge": e.challenge, "run_id": e.run_id,
                                               "message": e.message} for e in busy],
                    "suspected_hacks": sum(1 for r in records if r["flags"])})
        return 130 if caught else 0
    for r in records:
        print_record(r, answers)
    if line := hacks_line(records):
        print(line)
    errors = [e for e in events if e.kind == "error"]
    for e in errors:
        print(f"error: {e.model}/{e.challenge}: {e.message}", file=sys.stderr)
    if caught:
        print("\n".join(interrupt_report(caught[0], events)), file=sys.stderr)
        return 130
    return 1 if errors else 0


class _progress_lines:
    """One line on stderr per answer that ends: ``[3/35] glm5/kv: pass (12.3 s)``."""

    def __init__(self, answers: dict | None = None):
        self.answers = answers

    def on_event(self, event) -> None:
        if event.kind in ("running", "retrying"):  # a cluster node took it (or lost it)
            said = f"running on node {event.node}" if event.kind == "running" else event.message
            print(f"[run] {event.model}/{event.challenge}: {said}", file=sys.stderr, flush=True)
        if event.kind in ("finished", "error", "cancelled", "busy"):
            took = f" ({event.duration_s:.1f} s)" if event.duration_s is not None else ""
            said = in_scan_words(event.verdict, event.model, event.challenge, self.answers) or \
                ("never started" if event.kind == "cancelled" else event.kind)
            extra = f": {event.message}" if (event.kind in ("error", "busy") or said == "interrupted") and event.message else ""
            extra += f" [node {event.node}]" if event.node else ""
            print(f"[{event.done}/{event.total}] {event.model}/{event.challenge}: {said}{took}{extra}", file=sys.stderr, flush=True)

    def stop(self) -> None:
        pass


class _progress:
    """A rich progress bar on stderr, fed by RunEvents from worker threads."""

    def __init__(self, total: int, answers: dict | None = None):
        self.answers = answers
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                            console=Console(stderr=True), transient=False)
        self.bar.start()
        self.task = self.bar.add_task("running", total=total)
        self.never = 0

    def on_event(self, event) -> None:
        if event.kind == "started":
            self.bar.update(self.task, description=f"{event.model}/{event.challenge}")
        elif event.kind in ("running", "retrying"):
            self.bar.update(self.task, description=f"{event.model}/{event.challenge} on {event.node}"
                                                   + (" (retrying)" if event.kind == "retrying" else ""))
        elif event.kind == "cancelled":  # never started: the bar fills only with runs that ended
            self.never += 1
            self.bar.update(self.task, description=f"stopped: {self.never} never started")
        elif event.kind in ("finished", "error", "busy"):
            self.bar.update(self.task, completed=event.done - self.never, description=f"{event.model}/{event.challenge}: "
                            f"{in_scan_words(event.verdict, event.model, event.challenge, self.answers) or event.kind}")

    def stop(self) -> None:
        self.bar.stop()


def cmd_results(args, ctx) -> int:
    from benchtui.runner.orchestrate import scan_and_mark_interrupted

    store = ctx.store
    scan_and_mark_interrupted(ctx.workbench, store)
    latest = runs_sql.latest_done_runs(store, "id, challenge, versions")
    suites = queries.current_suites(store)
    superseded = {r["id"]: why for r in latest if (why := queries.superseded_suite(r["versions"], r["challenge"], suites))}
    records = [run_record(store, r["id"]) for r in latest if r["id"] not in superseded]
    from benchtui.store.judging import stale_runs

    stale = stale_runs(store, [r["run_id"] for r in records])
    flying = runs_sql.in_flight(store)
    from benchtui.grading.grades import answerless_cells

    gone = answerless_cells(store, {(r["model"], r["challenge"]) for r in records})
    for r in records:  # a verdict on files that have changed since: said, never shown as current
        r["stale"] = stale.get(r["run_id"], "")
        r["no_answer"] = (r["model"], r["challenge"]) in gone  # its folder is gone (renamed or removed)
        r["in_flight"] = runs_sql.in_flight_text(flying.get((r["model"], r["challenge"])))
    have = {(r["model"], r["challenge"]) for r in records}
    old_runs = {(r["model"], r["challenge"]): (r["id"], superseded[r["id"]])
                for r in runs_sql.runs_by_id(store, superseded)}
    not_run = [{"model": a["model"], "challenge": a["challenge"], "verdict": queries.answer_state(a),
                **({"in_flight": runs_sql.in_flight_text(flying[key])} if key in flying else {}),
                **({"superseded_run": old_runs[key][0], "why": old_runs[key][1]} if key in old_runs else {})}
               for a in store.answers() if (key := (a["model"], a["challenge"])) not in have]
    said = queries.no_answer_words(store, [{**r, "id": r["run_id"]} for r in records])
    if args.json:  # in the words the text and the Runs screen use (`waiting`)
        print_json({"results": [{**r, "verdict": said.get(r["run_id"], r["verdict"])} for r in records],
                    "not_run": not_run, "suspected_hacks": sum(1 for r in records if r["flags"])})
        return 0
    for r in records:
        said_as = said.get(r["run_id"]) or shown_verdict(r)
        print(f"{said_as:<14} {r['model']}/{r['challenge']}  run #{r['run_id']} on {r['backend']}" + flag_words(r)
              + (f"  STALE: {r['stale']} since this run; `benchtui run` judges it again" if r["stale"] else "")
              + (f"  ({r['in_flight']})" if r["in_flight"] else "")
              + ("  (no answer: its folder is gone)" if r["no_answer"] else ""))
    for r in not_run:
        why = f"  (run #{r['superseded_run']} was {r['why']})" if "why" in r else ""
        print(f"{r['verdict']:<14} {r['model']}/{r['challenge']}{why}" + (f"  ({r['in_flight']})" if "in_flight" in r else ""))
    if hacks := hacks_line(records):
        print(hacks)
    for line in gone_lines(store):
        print(line)
    return 0
