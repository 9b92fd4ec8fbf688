"""scan, list, show, model new, doctor."""
from __future__ import annotations

import contextlib
import os
import shlex
from pathlib import Path

from benchtui.challenges.catalog import load_challenge_set
from benchtui.challenges.definition import BUNDLED_CHALLENGES
from benchtui.challenges.prompts import prompt_source, run_prompt_line
from benchtui.commands.context import CommandError, UsageError, print_json
from benchtui.commands.run_cmds import run_coverage, shown_verdict
from benchtui.grading.grades import GradeValue
from benchtui.records.scan_kinds import INFO_KINDS
from benchtui.store import answers_sql, queries, runs_sql
from benchtui.store.gone import gone_lines, gone_models, kept_text, move_model
from benchtui.text.fit import fit_check
from benchtui.text.suggest import suggest
from benchtui.workbench.new_model import BadModelName, ScaffoldError, new_model
from benchtui.workbench.scan import scan_workbench


def register(sub) -> None:
    p = sub.add_parser("scan", help="index the workbench into the store")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_scan)

    p = sub.add_parser("list", help="models, challenges and answers with their status")
    p.add_argument("--all-challenges", action="store_true",
                   help="list the bundled challenges no model has a folder for too (left out by default)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("show", help="one answer: files, transcripts, warnings, latest run, grades")
    p.add_argument("model")
    p.add_argument("challenge", help="challenge id or display name")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_show)

    # `model new NAME`, as `challenge new ID`; `new-model NAME`, the older spelling, still works (left out of the help)
    model = sub.add_parser("model", help="scaffold a model folder of this workbench (WORKBENCH/models/NAME)")
    actions = model.add_subparsers(dest="model_command", metavar="ACTION", required=True)
    p = actions.add_parser("new", help="scaffold models/NAME/<challenge>/PROMPT.md for every challenge")
    p.add_argument("name")
    p.set_defaults(func=cmd_new_model)
    p = actions.add_parser("move", help="move the runs, grades and notes of a model folder that is gone (renamed) "
                                        "to its new folder name")
    p.add_argument("old", help="the folder name that is gone (`benchtui scan` names them)")
    p.add_argument("new", help="the model folder the answers are in now")
    p.set_defaults(func=cmd_move_model)
    p = sub.add_parser("new-model")
    p.add_argument("name")
    p.set_defaults(func=cmd_new_model)

    p = sub.add_parser("doctor", help="what this machine offers: Python, GPU, MLX, sandbox")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_doctor)


def cmd_scan(args, ctx) -> int:
    from benchtui.commands.progress import Progress

    with Progress("scanning", quiet=args.json) as progress:
        result = scan_workbench(ctx.workbench, ctx.store,
                                on_model=lambda m, i, n: progress.step(f"model {m}", completed=i, total=n))
    if args.json:
        print_json(result.as_json())
        return 0
    wb = ctx.workbench
    print(f"{wb.root} ({wb.layout} layout): {result.models} models, {result.answers} answers, "
          f"{result.files} files, {result.transcripts} transcripts; {result.hashed} files hashed in {result.duration_s:.2f} s")
    for w in result.warnings:
        print(f"  {w.kind:<15} {w.path}: {w.detail}")
    for w in result.info:  # what the scan did with a file, not a problem
        print(f"  info {w.kind:<10} {w.path}: {w.detail}")
    for line in gone_lines(ctx.store):
        print(f"  {line}")
    return 0


def cmd_move_model(args, ctx) -> int:
    scan_workbench(ctx.workbench, ctx.store)
    store = ctx.store
    present = set(store.model_names())
    if args.old in present:
        raise UsageError(f"models/{args.old} is still in the workbench: only a folder that is gone is moved")
    gone = gone_models(store)
    if args.old not in gone:
        raise UsageError(f"the store keeps nothing of a model {args.old!r}"
                         + (f"; of folders that are gone it keeps: {', '.join(gone)}" if gone else ""))
    if args.new not in present:
        raise UsageError(f"no model folder {args.new!r} in this workbench: {suggest(args.new, present)}")
    moved = move_model(store, args.old, args.new)
    print(f"moved {kept_text(gone[args.old])} of {args.old} to {args.new} "
          f"({', '.join(f'{n} {t}' for t, n in moved.items() if n)})")
    return 0


def latest_verdicts(store) -> dict[tuple[str, str], str]:
    """The verdict of the latest finished run per answer (one another suite gave is not current)."""
    rows = runs_sql.latest_done_runs(store, "model, challenge, verdict, versions")
    suites = queries.current_suites(store)
    return {(r["model"], r["challenge"]): r["verdict"] for r in rows
            if not queries.superseded_suite(r["versions"], r["challenge"], suites)}


def latest_flags(store) -> dict[tuple[str, str], list[str]]:
    """The hack signals of the latest finished run per answer that has any (engine/records/flags.py)."""
    from benchtui.records.flags import parse

    rows = runs_sql.latest_done_runs(store, "model, challenge, flags, versions")
    suites = queries.current_suites(store)
    return {(r["model"], r["challenge"]): parse(r["flags"]) for r in rows
            if r["flags"] and not queries.superseded_suite(r["versions"], r["challenge"], suites)}


def answer_rows(store) -> list[dict]:
    verdicts = latest_verdicts(store)
    flags = latest_flags(store)
    out = []
    for a in store.answers():
        key = (a["model"], a["challenge"])
        status = queries.answer_state(a) if a["status"] == "no_answer" else verdicts.get(key, a["status"])
        out.append({"model": a["model"], "challenge": a["challenge"], "status": status,
                    "flags": flags.get(key, []) if key in verdicts else [],
                    "files": a["files"], "transcripts": a["transcripts"]})
    return out


def cmd_list(args, ctx) -> int:
    scan_workbench(ctx.workbench, ctx.store)
    store = ctx.store
    empty = set() if args.all_challenges else queries.empty_bundled(store)
    challenges = store.challenge_ids()
    if len(empty) == len(challenges):  # nothing else to list: list them all
        empty = set()
    data = {"models": store.model_names(), "challenges": [c for c in challenges if c not in empty],
            "answers": answer_rows(store)}
    data["suspected_hacks"] = sum(1 for a in data["answers"] if a["flags"])
    if args.json:
        print_json(data)
        return 0
    models, challenges = data["models"], data["challenges"]
    from benchtui.records.flags import marks, summary

    # a flag beside the verdict, never in it: "pass !T" (docs/verdicts.md)
    cells = {(a["model"], a["challenge"]): a["status"] + (f" !{marks(a['flags'])}" if a["flags"] else "")
             for a in data["answers"]}
    from benchtui.workbench.shorten import shorten_all

    width = max([len(c) for c in challenges] + [9])
    short = shorten_all(models, 14)  # from the middle, keeping what tells them apart
    print(" " * width + "  " + "  ".join(f"{short[m]:<14}" for m in models))
    for cid in challenges:
        print(f"{cid:<{width}}  " + "  ".join(f"{cells.get((m, cid), '-'):<14}" for m in models))
    if data["suspected_hacks"]:
        print(f"{summary(data['suspected_hacks'])} (!T timing, !S stale output, !D right only on the deck's seeds, "
              "!F forbidden op: flags, not verdicts; docs/verdicts.md)")
    if empty:
        n = len(empty)
        print(f"({n} bundled challenge{'s' if n != 1 else ''} no model has a folder for left out: "
              f"--all-challenges lists {'them' if n != 1 else 'it'})")
    return 0


def resolve_answer(ctx, model: str, challenge: str) -> tuple[str, str]:
    store = ctx.store
    if model not in store.model_names():
        gone = gone_models(store).get(model)
        if gone is not None:  # a folder that went away: say what is kept of it, and how to move it
            raise UsageError(f"models/{model} is gone from the workbench; the store keeps its {kept_text(gone)}: "
                             f"if it was renamed, `benchtui model move {shlex.quote(model)} NEW` moves them")
        ctx.check_models([model])
    found = ctx.challenge(challenge)
    if store.answer_id(model, found.id) is None:
        raise UsageError(f"{model} has no folder for {found.id}")
    return model, found.id


def answer_detail(store, model: str, challenge: str) -> dict:
    from benchtui.store.judging import stale_runs

    answer = queries.answer_row(store, model, challenge)
    files = answers_sql.detail_files(store, answer["id"])
    transcripts = answers_sql.detail_transcripts(store, answer["id"])
    scan_id = store.get_meta("last_scan_id")
    warnings = answers_sql.scan_warnings_of(store, scan_id, model, challenge) if scan_id else []
    # an interrupted run is history: the newest other run is the one shown, the interrupted ones after it listed
    latest = queries.latest_run(store, model, challenge)
    interrupted = runs_sql.runs_since(store, "id, started_at, duration_s, message", model, challenge, "interrupted",
                                      latest["id"] if latest else 0)
    trials = runs_sql.runs_since(store, "id, verdict, started_at, message", model, challenge, queries.TRIAL,
                                 latest["id"] if latest else 0)
    run = None
    if latest:
        r = latest
        run = {"id": r["id"], "status": r["status"], "verdict": r["verdict"], "backend": r["backend"], "device": r["device"],
               "started_at": r["started_at"], "duration_s": r["duration_s"], "message": r["message"],
               "prompt_version": r.get("prompt_version"),  # engine/challenges/prompts.py; None: unknown or missing prompt
               # None: its PROMPT.md (or no prompt)
               "prompt_source": prompt_source(runs_sql.named_check(store, r["id"], "prompt")),
               **run_coverage(r),
               # another suite judged it (a workbench challenge added over a bundled one, or removed): not current
               "superseded": queries.superseded_suite(r["versions"], challenge, queries.current_suites(store)),
               "checks": queries.shown_checks(store, r["id"]),
               # what changed in the answer's files since this run ("": its verdict is on these files)
               "stale": stale_runs(store, [r["id"]]).get(r["id"], ""),
               "self_check": {"exit_code": r["self_exit_code"], "duration_s": r["self_duration_s"], "status": r["self_status"]}}
    grades = answers_sql.current_grades_of(store, model, challenge)
    from benchtui.grading.grades import notes_for

    notes = [n.to_dict() for n in notes_for(store, model, challenge)]
    flying = runs_sql.in_flight(store).get((model, challenge))
    return {"model": model, "challenge": challenge, "path": answer["path"], "status": answer["status"], "files": files,
            "transcripts": transcripts, "warnings": warnings, "latest_run": run,
            "in_flight": runs_sql.in_flight_text(flying),  # beside the last finished verdict, never in its place
            "interrupted_since": interrupted, "trials_since": trials, "grades": grades, "notes": notes}


def measured(check: dict) -> str:
    """A check that stored no message says what it measured: its value against its threshold."""
    value, threshold = check.get("value"), check.get("threshold")
    if value in (None, ""):
        return ""
    with contextlib.suppress(TypeError, ValueError):
        value = f"{float(value):.3g}"
    return f"value {value}" + (f" (threshold {threshold})" if threshold not in (None, "") else "")


def cmd_show(args, ctx) -> int:
    scan_workbench(ctx.workbench, ctx.store)
    model, challenge = resolve_answer(ctx, args.model, args.challenge)
    detail = answer_detail(ctx.store, model, challenge)
    if args.json:
        print_json(detail)
        return 0
    print(f"{model} / {challenge}  ({detail['path']}, {detail['status']})")
    print("files:")
    for f in detail["files"]:
        flag = f"  ! {f['problem']}" if f["problem"] else ""
        print(f"  {f['kind']:<10} {f['relpath']:<40} {f['size']:>9} B  {f['git_status'] or ''}{flag}")
    for t in detail["transcripts"]:
        problem = f": {t['problem']}" if t["status"] == "error" and t["problem"] else ""
        print(f"transcript: {t['relpath']} ({t['format'] or 'unknown format'}, {t['status']}{problem})")
    for w in detail["warnings"]:
        print(f"{'info' if w['kind'] in INFO_KINDS else 'warning'} {w['kind']}: {w['detail']}")
    run = detail["latest_run"]
    if detail["in_flight"]:
        print(detail["in_flight"] + ("; the last finished verdict is below" if run else "; no finished verdict yet"))
    if run is None:
        if not detail["in_flight"]:
            print(f"not run yet: `benchtui run -m {shlex.quote(model)} -c {shlex.quote(challenge)}`")
    else:
        print(f"latest run #{run['id']}: {shown_verdict(run)} on {run['backend']} ({run['device']}) "
              f"{run['duration_s'] or 0:.1f} s")
        if run["stale"]:
            print(f"  STALE: {run['stale']} since this run, so its verdict is on other files; "
                  f"`benchtui run -m {shlex.quote(model)} -c {shlex.quote(challenge)}` judges them")
        if run["superseded"]:
            print(f"  not the current verdict: it was {run['superseded']}; "
                  f"`benchtui run -m {shlex.quote(model)} -c {shlex.quote(challenge)}` judges it again")
        print(f"  judged against prompt version: {run_prompt_line(run['prompt_version'], run['prompt_source'])}")
        for req in run["coverage"] or ():
            text = req["words"] + (f" ({req['reason']})" if req["reason"] else "")
            print("\n".join(fit_check(f"  requirement {req['status']:<13} {req['id']}: ", req["status"], text)))
        for c in run["checks"]:
            print("\n".join(fit_check(f"  {c['verdict']:<13} {c['name']:<30} ", c["verdict"], c["message"] or measured(c))))
    for r in detail["interrupted_since"]:
        took = f" after {r['duration_s']:.1f} s" if r["duration_s"] is not None else ""
        print(f"run #{r['id']} interrupted{took}" + (f": {r['message']}" if r["message"] else "") + " (history, not a verdict)")
    for r in detail["trials_since"]:
        print(f"run #{r['id']} adapter trial: {r['verdict']}" + (f": {r['message']}" if r["message"] else "")
              + " (benchtui adapter check; history, not a verdict)")
    for g in detail["grades"]:
        print(f"grade {g['dimension']}: {GradeValue(g['letter'], g['score']).display} by {g['grader']}")
    from types import SimpleNamespace

    from benchtui.commands.grade_cmds import note_place

    for n in detail["notes"]:
        print(f"note by {n['author']} {n['created_at'][:16]}{note_place(SimpleNamespace(**n))}: {n['text']}")
    return 0


def cmd_new_model(args, ctx) -> int:

    prompts: dict[str, bytes] = {}
    said = ""
    try:
        root_models = ctx.workbench.models_dir
        challenges = ctx.workbench.challenges
        # in a workbench whose models answered: their challenges only, each with the prompt
        # most of its answers carry (a published benchmark's own), said so
        from benchtui.workbench.new_model import carried_prompts

        answered: dict[str, list[Path]] = {}
        for model_dir in ctx.workbench.model_dirs().values():
            for cid, folder in ctx.workbench.answer_dirs(model_dir).items():
                answered.setdefault(cid, []).append(folder)
        if answered:
            challenges = {cid: c for cid, c in challenges.items() if cid in answered}
            carried = carried_prompts({cid: answered[cid] for cid in challenges})
            own = {cid: (text, n, total) for cid, (text, n, total) in carried.items()
                   if text != Path(challenges[cid].prompt_path).read_bytes()}
            prompts = {cid: text for cid, (text, _, _) in own.items()}
            if own:
                said = ("; PROMPT.md is the prompt most of the workbench's answers carry, not benchtui's, for "
                        + ", ".join(f"{cid} ({n} of {total} answers)" for cid, (_, n, total) in sorted(own.items())))
    except UsageError:
        # An empty folder becomes a workbench with a models/ folder.
        root = Path(args.workbench or os.environ.get("BENCHTUI_WORKBENCH") or Path.cwd()).expanduser().resolve()
        if not root.is_dir():
            raise
        root_models = root / "models"
        challenges = load_challenge_set(root / "challenges", BUNDLED_CHALLENGES).challenges
    try:
        created = new_model(root_models, args.name, challenges, prompts)
    except BadModelName as exc:
        raise UsageError(str(exc)) from exc
    except ScaffoldError as exc:
        raise CommandError(str(exc)) from exc
    except OSError as exc:
        raise CommandError(f"cannot create {root_models / args.name}: {exc.strerror or exc}") from exc
    print(f"created {root_models / args.name} with {len(challenges)} challenge folders ({len(created)} files){said}")
    return 0


def cmd_doctor(args, ctx) -> int:
    from benchtui.commands.doctor import gather, render

    report = gather(args.workbench, args.store)
    if args.json:
        print_json(report)
    else:
        print(render(report))
    return 0
