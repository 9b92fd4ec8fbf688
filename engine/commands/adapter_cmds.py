"""adapter new, adapter check: adapters that live with the workbench."""
from __future__ import annotations

from benchtui.challenges import adapters
from benchtui.commands.context import CommandError, UsageError, print_json
from benchtui.text.fit import fit_check
from benchtui.workbench import adapter_scaffold


def register(sub) -> None:
    p = sub.add_parser("adapter", help="write or try the adapter that binds an answer with its own API")
    asub = p.add_subparsers(dest="adapter_command", metavar="ACTION", parser_class=type(p))
    asub.required = True

    n = asub.add_parser("new", help="scaffold WORKBENCH/.benchtui/adapters/CHALLENGE/MODEL.py: contract, answer hashes, its API")
    n.add_argument("model")
    n.add_argument("challenge", help="challenge id or display name")
    n.add_argument("--force", action="store_true", help="overwrite an existing adapter")
    n.set_defaults(func=cmd_new)

    c = asub.add_parser("check", help="run one answer through the pipeline with its adapter and print the checks")
    c.add_argument("model")
    c.add_argument("challenge", help="challenge id or display name")
    c.add_argument("--timeout", type=float, metavar="S", help="wall-clock limit (default: the challenge's own)")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=cmd_check)


def _locate(ctx, model, challenge):
    try:
        return adapter_scaffold.locate(ctx.workbench, model, challenge)
    except adapters.AdapterError as exc:
        raise UsageError(str(exc)) from exc


def cmd_new(args, ctx) -> int:
    challenge, folder = _locate(ctx, args.model, args.challenge)
    try:
        path = adapter_scaffold.scaffold_for(ctx.workbench, args.model, challenge.id, force=args.force, store=ctx.store)
    except FileExistsError as exc:
        raise UsageError(str(exc)) from exc
    except adapters.AdapterError as exc:
        raise CommandError(str(exc)) from exc
    except (OSError, ValueError) as exc:
        raise CommandError(f"cannot write the adapter: {exc}") from exc
    res = adapters.resolve(ctx.workbench.root, challenge, args.model, folder)
    print(f"wrote {path}")
    print(f"fill in what the contract names, then: benchtui adapter check {args.model} {challenge.id}")
    if res.path is not None and res.path.resolve() != path.resolve():
        print(f"note: {res.message}")
    return 0


def cmd_check(args, ctx) -> int:
    from benchtui.commands.run_cmds import run_record
    from benchtui.runner import sandbox
    from benchtui.runner.orchestrate import run_answers
    from benchtui.store.queries import latest_run
    from benchtui.workbench.scan import scan_workbench

    if args.timeout is not None and args.timeout <= 0:
        raise UsageError("--timeout must be positive")
    challenge, folder = _locate(ctx, args.model, args.challenge)
    res = adapters.resolve(ctx.workbench.root, challenge, args.model, folder)
    scan_workbench(ctx.workbench, ctx.store)
    try:
        # a trial: kept in the run history, never the answer's latest verdict (engine/store/queries.py)
        events = run_answers(ctx.workbench, [(args.model, challenge.id)], self_check=False, timeout_s=args.timeout,
                             trial=True)
    except sandbox.SandboxUnavailable as exc:
        raise CommandError(str(exc)) from exc
    event = events[0]
    if event.run_id is None:
        raise CommandError(event.message or "the run did not start")
    record = run_record(ctx.store, event.run_id)
    bound, why = binding_outcome(record)
    latest = latest_run(ctx.store, args.model, challenge.id)
    standing = (f"its verdict stays run #{latest['id']}: {latest['verdict']}" if latest else "it has no verdict yet")
    trial = (f"a trial: stored as run #{event.run_id} in the answer's history, not as its verdict ({standing}); "
             f"`benchtui run -m {args.model} -c {challenge.id}` records one")
    if args.json:
        print_json({"adapter": res.as_dict(), "bound": bound, "why": why, "trial": True,
                    "latest_run": latest["id"] if latest else None, **record})
        return 0 if bound else 1
    print(f"{args.model} / {challenge.id}: {record['verdict']} (trial run {event.run_id}); adapter: "
          f"{res.message if res.status != 'none' else 'none found'}")
    for c in record["checks"]:
        print("\n".join(fit_check(f"  {c['verdict']:<14} {c['name']:<32} ", c["verdict"], c["message"])))
    print("the adapter bound" if bound else f"not bound: {why}")
    print(trial)
    return 0 if bound else 1


def binding_outcome(record: dict) -> tuple[bool, str]:
    """(whether the run bound the answer, why not): an ``unbound`` check, or a suite that
    stopped before any check called the answer (a ``conformance`` error), did not bind."""
    checks = record["checks"]
    if record["verdict"] == "unbound" or any(c["verdict"] == "unbound" for c in checks):
        return False, "see the unbound checks above"
    if any(c["name"] == "conformance" and c["verdict"] == "error" for c in checks):
        return False, "the checks stopped before they reached the answer (see the conformance error above)"
    return True, ""
