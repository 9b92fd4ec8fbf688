"""judge: grade answers with an LLM through the ``llm`` library (the ``judge`` extra)."""
from __future__ import annotations

import sys

from benchtui.commands.context import CommandError, UsageError, print_json
from benchtui.records.scan_kinds import WAITING_KIND
from benchtui.store import queries


def register(sub) -> None:
    p = sub.add_parser("judge", help="grade answers with an LLM judge (any model the llm library reaches)",
                       description="Grade answers with an LLM judge through the llm library (`pip install "
                                   "\"benchtui[judge]\"`; keys as `llm keys set` keeps them). Its grades are stored "
                                   "as any judge's: per dimension and overall, the reasoning as the note, by the "
                                   "grader MODEL:MODE:RUBRIC. A graded answer is not asked again until its files, "
                                   "the rubric, the mode or (with evidence) the suite's verdict change.")
    p.add_argument("-m", "--model", action="append", default=[], help="model whose answers to judge (repeatable; "
                                                                       "default all)")
    p.add_argument("-c", "--challenge", action="append", default=[], help="challenge id or display name "
                                                                           "(repeatable; default all)")
    p.add_argument("-J", "--judge-model", metavar="NAME",
                   help="the llm model id or alias (default: the config file's [judge] model, else llm's default "
                        "model; `llm models` lists them)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--blind", dest="mode", action="store_const", const="blind",
                      help="the judge sees the prompt and the answer's files only, as the published judges did")
    mode.add_argument("--with-evidence", dest="mode", action="store_const", const="evidence",
                      help="and the suite's verdict, failed checks with their messages, the self-check's result "
                           "and what the verdict does not cover (the default, or the config file's [judge] mode)")
    p.add_argument("--rubric", metavar="FILE", help="a rubric file (default: the bundled one; --print-rubric shows it)")
    p.add_argument("--print-rubric", action="store_true", help="print the rubric (its path and sha256 first) and stop")
    p.add_argument("--dry-run", action="store_true", help="list the calls and estimate their tokens; send nothing")
    p.add_argument("--jobs", type=int, default=4, help="calls in flight at once (default 4)")
    p.add_argument("--timeout", type=float, default=300.0, metavar="S", help="seconds to wait for one reply "
                                                                             "(default 300)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_judge)


def selected_answers(ctx, models: list[str], challenges: list[str]) -> list[tuple[str, str]]:
    """(model, challenge) of every answer the selection names that holds an answer."""
    store = ctx.store
    ctx.check_models(models)
    ids = ctx.challenge_ids(challenges)
    cells = [(a["model"], a["challenge"]) for a in store.answers()
             if (not models or a["model"] in models) and (not ids or a["challenge"] in ids)
             and a["status"] != "no_answer" and queries.answer_state(a) != WAITING_KIND]
    if not cells:
        raise UsageError("nothing to judge: no answer matches the selection")
    return cells


def cmd_judge(args, ctx) -> int:
    from benchtui.judge.calls import JudgeError, configured_mode, find_model, key_problem
    from benchtui.judge.judging import MODE_WORDS, plan
    from benchtui.judge.rubric import RubricError, load_rubric
    from benchtui.workbench.scan import scan_workbench

    if args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if args.timeout <= 0:
        raise UsageError("--timeout must be positive")
    try:
        rubric = load_rubric(args.rubric)
    except RubricError as exc:
        raise UsageError(str(exc)) from exc
    if args.print_rubric:
        print(f"# {rubric.path} (sha256 {rubric.sha256})\n")
        sys.stdout.write(rubric.text)
        return 0
    try:
        model = find_model(args.judge_model)
    except JudgeError as exc:
        raise CommandError(str(exc)) from exc
    mode = args.mode or configured_mode()
    scan_workbench(ctx.workbench, ctx.store)
    cells = selected_answers(ctx, args.model, args.challenge)
    the_plan = plan(ctx.store, ctx.workbench, cells, judge_model=model.model_id, mode=mode, rubric=rubric)
    estimate = the_plan.estimate()
    if args.dry_run:
        if args.json:
            print_json({"dry_run": True, **the_plan.to_dict(), "key_problem": key_problem(model)})
            return 0
        print(f"judge {model.model_id}, {MODE_WORDS[mode]}, rubric {rubric.path} (sha256 {rubric.short}), "
              f"grader {the_plan.grader}")
        for c in the_plan.calls:
            cached = f"  cached (call #{c.cached['id']}): nothing sent" if c.cached else ""
            files = len(c.material.files)
            print(f"  {c.cell:<40} ~{c.input_tokens:>7,} input tokens, {files} file{'s' if files != 1 else ''}"
                  f"{cached}")
            for item in c.material.left_out:
                print(f"      - {item}")
        for s in the_plan.skipped:
            print(f"  skipped {s}")
        print(f"dry run: {estimate['to_send']} call(s) to send ({estimate['cached']} cached), about "
              f"{estimate['input_tokens']:,} input tokens and {estimate['output_tokens']:,} output tokens "
              f"(estimated as characters / 4, and about 900 tokens per reply); nothing sent")
        if the_plan.without_verdict:
            print(f"note: {_no_verdict_words(the_plan.without_verdict)}")
        problem = key_problem(model)
        if problem:
            print(f"note: {problem}")
        return 0
    if estimate["to_send"] and (problem := key_problem(model)):
        raise CommandError(problem)
    return _judge(args, ctx, the_plan, model)


def _no_verdict_words(cells: list[str]) -> str:
    return (f"{len(cells)} answer(s) have no verdict to give as evidence ({', '.join(cells[:4])}"
            f"{', ...' if len(cells) > 4 else ''}): the judge is told so; `benchtui run` judges them first")


def _judge(args, ctx, the_plan, model) -> int:
    from benchtui.commands.progress import Progress
    from benchtui.judge.judging import Result, judge

    result = Result()
    send = len(the_plan.to_send)
    try:
        with Progress(f"judging with {the_plan.judge_model}", quiet=args.json, total=send) as progress:
            judge(ctx.store, the_plan, model, jobs=args.jobs, timeout=args.timeout, result=result,
                  on_progress=lambda done, total, cell: progress.step(cell, completed=done, total=total))
    except KeyboardInterrupt as exc:
        kept = len(result.graded) + len(result.unparseable) + len(result.failed)
        raise KeyboardInterrupt(f"{kept} of {send} call(s) finished and are stored; the rest were not "
                                f"(run the same command again to ask them)") from exc
    if args.json:
        print_json({"judge_model": the_plan.judge_model, "mode": the_plan.mode, "grader": the_plan.grader,
                    "rubric_sha256": the_plan.rubric.sha256, **result.to_dict(), "skipped": the_plan.skipped})
    else:
        for line in result.graded:
            print(f"graded       {line}")
        for line in result.cached:
            print(f"cached       {line}")
        for line in result.unparseable:
            print(f"no grade     {line}")
        for line in result.failed:
            print(f"failed       {line}")
        for line in the_plan.skipped:
            print(f"skipped      {line}")
        if result.not_asked:
            print(f"not asked    {result.not_asked} call(s): stopped after a key or quota failure")
        if the_plan.without_verdict:
            print(f"note: {_no_verdict_words(the_plan.without_verdict)}")
        tokens = (f"; {result.input_tokens:,} input and {result.output_tokens:,} output tokens reported"
                  if result.input_tokens or result.output_tokens else "")
        print(f"{the_plan.grader}: {len(result.graded)} graded, {len(result.cached)} from the cache, "
              f"{len(result.unparseable)} without a grade, {len(result.failed)} failed{tokens}")
    return 1 if result.failed or result.unparseable or result.not_asked else 0
