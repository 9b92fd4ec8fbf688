"""challenge new, challenge check, deploy: challenges of one's own."""
from __future__ import annotations

import sys
import time
from pathlib import Path

from benchtui.commands.context import CommandError, UsageError, print_json


def register(sub) -> None:
    p = sub.add_parser("challenge", help="write or check a challenge of this workbench (WORKBENCH/challenges/ID)")
    csub = p.add_subparsers(dest="challenge_command", metavar="ACTION", parser_class=type(p))
    csub.required = True

    n = csub.add_parser("new", help="scaffold a working plugin: metadata, prompt, reference, suite, adapter contract")
    n.add_argument("id", help="the new challenge's id (lowercase letters, digits, _)")
    n.add_argument("--from", dest="prompt", metavar="PROMPT.md", help="the prompt to use (default: a placeholder task)")
    n.add_argument("--force", action="store_true",
                   help="write it even when ID is a bundled challenge's id (the new one then replaces it in this workbench)")
    n.set_defaults(func=cmd_new)

    c = csub.add_parser("check", help="prove a plugin sound: reference passes, checks name requirements, thresholds clear the noise")
    c.add_argument("id", help="challenge id or display name")
    c.add_argument("--seeds", type=int, default=3, metavar="N", help="seeds the reference is run on (default 3)")
    c.add_argument("--margin", type=float, default=10.0, metavar="X",
                   help="how far inside a tolerance the reference's worst value must sit (default 10x)")
    c.add_argument("--mutants", type=int, default=20, metavar="N",
                   help="mutants of the reference the suite must kill (benchtui audit; default 20, 0 skips it)")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=cmd_check)

    d = sub.add_parser("deploy", help="write a challenge's PROMPT.md and data files into every model folder lacking them")
    d.add_argument("id", help="challenge id or display name")
    d.add_argument("-m", "--model", action="append", default=[], metavar="MODEL", help="only these models (repeatable)")
    d.add_argument("--json", action="store_true")
    d.set_defaults(func=cmd_deploy)


def _root(ctx, cid: str) -> Path:
    """The workbench root. A challenge written outside any workbench would be one
    that `challenge check`, `run` and the dashboard never find: refused, saying so."""
    try:
        return ctx.workbench.root
    except UsageError as exc:
        raise UsageError(f"challenge new writes into a workbench, where `challenge check` and `run` find it: {exc}; "
                         f"then `benchtui challenge new {cid}` there") from exc


def cmd_new(args, ctx) -> int:
    from benchtui.authoring.new_challenge import ScaffoldError, scaffold_challenge
    from benchtui.challenges.catalog import load_challenge_set
    from benchtui.challenges.definition import BUNDLED_CHALLENGES

    prompt = None
    if args.prompt:
        try:
            prompt = Path(args.prompt).expanduser().read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"cannot read --from {args.prompt}: {getattr(exc, 'strerror', None) or exc}") from exc
    root = _root(ctx, args.id)
    # a bundled challenge every workbench is offered (not the demo's own `bundled = false` example)
    if not args.force and args.id in load_challenge_set(None, BUNDLED_CHALLENGES).challenges:
        raise UsageError(f"{args.id} is a bundled challenge: a workbench challenge with its id replaces it, and every "
                         f"{args.id} answer would then be judged by the new suite; pick another id, or pass --force")
    try:
        folder = scaffold_challenge(root / "challenges", args.id, prompt)
    except ScaffoldError as exc:
        raise UsageError(str(exc)) from exc
    except OSError as exc:
        raise CommandError(f"cannot write {root / 'challenges' / args.id}: {exc.strerror or exc}") from exc
    print(f"wrote {folder}")
    if args.force and args.id in load_challenge_set(None, BUNDLED_CHALLENGES).challenges:
        print(f"it replaces the bundled {args.id} in this workbench: every {args.id} answer is judged by it from now on")
    print(f"edit PROMPT.md, [requirements], reference.py and conformance.py, then: benchtui challenge check {args.id}")
    # the models already here get no folder for it until it is handed out
    print(f"once it is sound, `benchtui deploy {args.id}` gives each model's folder its prompt to answer")
    return 0


def cmd_check(args, ctx) -> int:
    from benchtui.authoring.soundness import check_challenge, reference_mutation_score

    if args.seeds < 1 or args.margin <= 0 or args.mutants < 0:
        raise UsageError("--seeds must be at least 1, --margin positive and --mutants at least 0")
    challenge = ctx.challenge(args.id)
    said = CheckProgress(challenge.id, json_out=args.json)
    report = check_challenge(challenge, seeds=tuple(range(1, args.seeds + 1)), margin=args.margin,
                             on_step=said.step, on_check=said.check)
    if not report.failed:  # a suite worth measuring: no item failed
        report.mutation = reference_mutation_score(ctx.workbench, challenge, args.mutants, on_step=said.step)
    if args.json:
        print_json(report.as_dict())
    else:
        print(f"{challenge.id} ({challenge.path}):")
        for item in report.items:
            mark = "--  " if item.ok is None else "ok  " if item.ok else "FAIL"
            print(f"  {mark} {item.name:<26} {item.message}")
        print(f"  {'    ' if report.mutation_measured else '--  '} {'mutation_score':<26} {report.mutation_text()}")
        print(report.verdict())
    # a check judged in part is no failure of the plugin: the exit code says whether an item failed
    return 1 if report.failed else 0


class CheckProgress:
    """A long ``challenge check`` said as it goes, one line per check on stderr (a reference
    call can take seconds on a loaded CPU, a check minutes): on a terminal, and under
    ``--json`` (whose stdout stays empty until the report); not into a log or pipe otherwise."""

    def __init__(self, challenge: str, *, json_out: bool):
        self.challenge = challenge
        self.shown = json_out or sys.stderr.isatty()
        self.started: dict[str, float] = {}

    def say(self, line: str) -> None:
        if self.shown:
            print(f"[check {self.challenge}] {line}", file=sys.stderr, flush=True)

    def step(self, doing: str, done: int, total: int) -> None:
        self.say(f"{doing} ({done}/{total})" if total > 1 else doing)

    def check(self, seed: int, kind: str, record: dict) -> None:
        name = str(record.get("name", "?"))
        if kind == "started":
            self.started[name] = time.monotonic()
            return
        began = self.started.pop(name, None)  # a check recorded at once (an info) has no start
        took = f" ({time.monotonic() - began:.1f} s)" if began is not None else ""
        self.say(f"seed {seed}: {name}: {record.get('verdict', '?')}{took}")


def cmd_deploy(args, ctx) -> int:
    from benchtui.authoring.deploy import deploy

    challenge = ctx.challenge(args.id)
    models = ctx.workbench.model_dirs()
    if args.model:
        unknown = [m for m in args.model if m not in models]
        if unknown:
            raise UsageError(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(models) or 'none'} "
                             "(`benchtui model new NAME` starts one)")
        models = {m: models[m] for m in args.model}
    if not models:
        raise UsageError("no model folders in this workbench (`benchtui model new NAME` starts one)")
    try:
        results = deploy(ctx.workbench, challenge, models)
    except (OSError, FileNotFoundError) as exc:
        raise CommandError(str(exc)) from exc
    if args.json:
        print_json({"challenge": challenge.id, "models": [r.as_dict() for r in results]})
        return 0
    for r in results:
        what = ", ".join(r.written) if r.written else ""
        line = {"written": f"wrote {what}", "up_to_date": "already has what deploy hands out",
                "skipped": "not touched"}[r.action]
        print(f"  {r.action:<10} {r.folder}: {line}" + (f" ({r.reason})" if r.reason else ""))
    written = sum(r.action == "written" for r in results)
    print(f"{challenge.id}: written to {written} of {len(results)} model folders")
    return 0
