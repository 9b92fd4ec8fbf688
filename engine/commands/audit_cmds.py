"""audit, audit show, audit mark: how strong each challenge's suite is."""
from __future__ import annotations

import argparse
import sys

from benchtui.commands.cluster_args import add_cluster_args, cluster_address, connected, driver_signals
from benchtui.commands.context import CommandError, UsageError, print_json
from benchtui.store import runs_sql
from benchtui.workbench.scan import scan_workbench

# The size docs/audit.md measures and recommends: every site of the published benchmark takes hours.
DEFAULT_MUTANTS = 60


def mutant_count(text: str) -> int | None:
    """``--mutants``: a positive count, or ``all`` (None: every mutant)."""
    if text.strip().lower() == "all":
        return None
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a count: {text!r} (a number, or 'all')") from None
    if n < 1:
        raise argparse.ArgumentTypeError("--mutants must be at least 1 (or 'all')")
    return n


def register(sub) -> None:
    p = sub.add_parser("audit", help="mutation-test the suites: break passing answers one line at a time, count what the checks catch")
    p.add_argument("-m", "--model", action="append", default=[],
                   help="model to audit (repeatable; default: every passing answer; '(reference)' for the references)")
    p.add_argument("-c", "--challenge", action="append", default=[], help="challenge id or display name (repeatable)")
    p.add_argument("--mutants", type=mutant_count, default=DEFAULT_MUTANTS, metavar="N",
                   help=f"at most N mutants per answer, spread over the operators (default {DEFAULT_MUTANTS}; "
                        "'all': every one, hours on a large workbench)")
    p.add_argument("--jobs", type=int, help="mutants run in parallel (default 1; on a cluster, one per CPU it has)")
    p.add_argument("--operators", choices=("all", "classic", "kernel"), default="all",  # mutate.FAMILIES
                   help="which mutation operators: all (default), kernel (the bugs against a prompt's stated "
                        "contract: defaults, remainder tiles, dtypes, kept dims, ties, max-shifts, configuration "
                        "values, ragged batches, special tokens; docs/audit.md), classic (the others)")
    p.add_argument("--fresh", action="store_true", help="rerun every mutant, ignoring the cache")
    p.add_argument("--no-reference", action="store_true", help="leave the challenges' references out")
    p.add_argument("--show", action="store_true", help="print the stored report without running anything")
    p.add_argument("--unsafe-no-isolation", action="store_true", help="allow running with rlimits alone")
    add_cluster_args(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_audit)
    # `audit mark`; `audit-mark`, the older spelling, still works (left out of the help)
    add_mark_args(p.add_subparsers(dest="audit_command", metavar="ACTION", required=False).add_parser(
        "mark", help="mark an audit survivor as equivalent (or not); kept across audits"))
    add_mark_args(sub.add_parser("audit-mark"))


def add_mark_args(p) -> None:
    p.add_argument("model")
    p.add_argument("challenge", help="challenge id or display name")
    p.add_argument("mutant", help="the survivor's sha256 (a unique prefix will do)")
    p.add_argument("--not-equivalent", action="store_true", help="undo: count it as a survivor again")
    p.add_argument("--note", default="")
    p.add_argument("--grader", help="who marks (default: $BENCHTUI_GRADER, else your login name)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_mark)


def cmd_audit(args, ctx) -> int:
    from benchtui.audit.core import REFERENCE, AuditOptions, run_audit
    from benchtui.audit.report import challenge_reports
    from benchtui.runner import sandbox

    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    ids = ctx.challenge_ids(args.challenge)
    if not args.show:
        scan_workbench(ctx.workbench, ctx.store)
        ctx.check_models(args.model, known=[*ctx.store.model_names(), REFERENCE])
        address = cluster_address(args)
        if address is not None:
            from benchtui.cluster.ray_cluster import ClusterUnavailable, ray_module

            try:
                ray_module()
            except ClusterUnavailable as exc:
                raise UsageError(str(exc)) from None
        import threading

        cancel = threading.Event()
        with connected(address) as cluster, driver_signals(cancel, cluster) as caught:
            jobs = args.jobs or (cluster.slots() if cluster is not None else 1)
            options = AuditOptions(models=args.model, challenges=ids, mutants=args.mutants, jobs=jobs, fresh=args.fresh,
                                   allow_unsafe=args.unsafe_no_isolation, references=not args.no_reference,
                                   operators=args.operators)
            from benchtui.commands.progress import Progress

            # a bar on a terminal; lines on a log or a pipe; nothing under --json
            reached = {"done": 0, "total": 0}  # mutants run of those planned, for what an interrupt kept
            with Progress("auditing", quiet=args.json) as progress:
                def on_event(event) -> None:
                    if event.total:
                        reached.update(done=event.done, total=event.total)
                    if progress.shown:
                        _bar(progress, event)
                    elif not args.json:
                        _progress(event)

                try:
                    run_audit(ctx.workbench, options, on_event=on_event, cancel=cancel, cluster=cluster)
                except sandbox.SandboxUnavailable as exc:
                    raise CommandError(str(exc)) from exc
        if caught:
            kept = (f"the outcomes of {reached['done']} of {reached['total']} mutants are kept"
                    if reached["total"] else "no mutant had run: nothing was kept")
            print(f"benchtui: interrupted ({caught[0]}): {kept}; a new audit resumes", file=sys.stderr)
            return 130
    reports = [c for c in challenge_reports(ctx.store) if not ids or c["challenge"] in ids]
    if args.model:
        for c in reports:
            c["answers"] = [a for a in c["answers"] if a["model"] in args.model]
    left_out = not_audited(ctx.store, [m for m in args.model if m != REFERENCE], ids) if args.model or ids else []
    named_none = bool(args.model) and REFERENCE not in args.model and not any(c["answers"] for c in reports)
    if args.json:
        print_json({"challenges": reports, "not_audited": left_out})
        return 1 if named_none and left_out else 0
    for a in left_out:  # an audit of an answer that does not pass is no audit: say so, not "0 answers"
        print(f"not audited: {a['model']}/{a['challenge']}: {a['why']}", file=sys.stderr)
    if named_none and left_out:
        return 1
    if not reports:
        print("nothing audited yet: run `benchtui run` first (only passing answers are audited)")
    for c in reports:
        allowed = f" ({c['allowed']} of them allowed by the prompt)" if c["allowed"] else ""
        print(f"{c['challenge']}: {_score(c['score'])}  ({c['killed']} killed, {c['survived']} survived, "
              f"{c['equivalent']} likely equivalent{allowed}, of {c['mutants']})")
        for a in c["answers"]:
            line = f"    {a['model']:<16} {_score(a['score'])}  {a['killed']}/{a['killed'] + a['survived']}"
            print(line + (f"  [{a['status']}: {a['message']}]" if a["status"] != "audited" else ""))
            for s in a["survivors"]:
                print(f"        survived {s['file']}:{s['line']} {s['description']}  ({s['mutant_sha256'][:12]})")
            for s in a["likely_equivalent"]:
                how = "marked equivalent" if s["marked"] else "likely equivalent"
                why = f"  [{s['why']}]" if s["why"] and not s["marked"] else ""
                print(f"        {how} {s['file']}:{s['line']} {s['description']}  ({s['mutant_sha256'][:12]}){why}")
    return 0


def not_audited(store, models: list[str], challenges: list[str]) -> list[dict]:
    """The answers among ``models`` x ``challenges`` (empty: all) an audit leaves out, and why:
    only an answer whose latest verdict is a pass is audited."""
    latest = {(r["model"], r["challenge"]): r["verdict"]
              for r in runs_sql.latest_done_runs(store, "model, challenge, verdict")}
    out = []
    for a in store.answers():
        key = (a["model"], a["challenge"])
        if (models and a["model"] not in models) or (challenges and a["challenge"] not in challenges):
            continue
        verdict = latest.get(key)
        if verdict == "pass":
            continue
        why = ("its folder holds no answer" if a["status"] == "no_answer" else
               f"never run: `benchtui run -m {a['model']} -c {a['challenge']}` first" if verdict is None else
               f"its latest verdict is {verdict}; only passing answers are audited")
        out.append({"model": a["model"], "challenge": a["challenge"], "verdict": verdict, "why": why})
    return out


def _score(score) -> str:
    return "  -  " if score is None else f"{score:.0%}".rjust(5)


def _bar(progress, event) -> None:
    if event.kind == "planned":
        progress.step(event.message, completed=0, total=event.total or None)
    elif event.kind == "baseline":
        progress.step(f"baseline {event.model}/{event.challenge}")
    elif event.kind == "mutant":
        progress.step(f"{event.model}/{event.challenge}", completed=event.done, total=event.total)


def _progress(event) -> None:
    """One line per step on stderr: the audit can take minutes."""
    if event.kind == "planned":
        print(f"audit: {event.message}", file=sys.stderr, flush=True)
    elif event.kind == "baseline":
        print(f"audit: baseline {event.model}/{event.challenge}: {event.status}{' (cached)' if event.cached else ''}",
              file=sys.stderr, flush=True)
    elif event.kind == "mutant":
        print(f"[{event.done}/{event.total}] {event.status:<10} {event.model}/{event.challenge} {event.message}"
              f"{' (cached)' if event.cached else ''}", file=sys.stderr, flush=True)


def cmd_mark(args, ctx) -> int:
    from benchtui.audit.report import mark
    from benchtui.grading.grades import default_grader_name

    cid = ctx.challenge(args.challenge).id
    try:
        out = mark(ctx.store, args.model, cid, args.mutant, not args.not_equivalent, args.grader or default_grader_name(),
                   args.note)
    except LookupError as exc:
        raise UsageError(str(exc)) from exc
    if args.json:
        print_json(out)
    else:
        print(f"marked {out['mutant_sha256'][:12]} of {args.model}/{cid} as "
              f"{'equivalent' if out['equivalent'] else 'not equivalent'}")
    return 0
