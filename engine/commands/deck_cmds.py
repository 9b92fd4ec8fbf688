"""import (another benchmark's deck into a workbench), published (its results beside benchtui's)."""
from __future__ import annotations

import os
import re
from pathlib import Path

from benchtui.commands.context import CommandError, UsageError, print_json
from benchtui.store import decks_sql

# "commit abc1234", "owner/repo at abc1234", "owner/repo@abc1234" (a hash holds a digit: "at defaced" is a word)
COMMIT_WORDS = re.compile(r"(?:\bcommit\s+|\b[\w.-]+/[\w.-]+(?:\s+at\s+(?:commit\s+)?|@))`?"
                          r"((?=[0-9a-f]*[0-9])[0-9a-f]{7,40})\b", re.IGNORECASE)


def register(sub) -> None:
    p = sub.add_parser("import", help="open another benchmark's deck (KernelBench, KernelBench-Hard) as a workbench")
    p.add_argument("deck", help="the deck's folder: a KernelBench-Hard repository, or a KernelBench tree")
    p.add_argument("--gpu", help="KernelBench-Hard: which problems-<gpu>/ and public/runs/<gpu>/ (e.g. h100)")
    p.add_argument("--runs", metavar="PATH", help="KernelBench: the runs folder (default: DECK/runs)")
    p.add_argument("--commit", help="the deck's commit, where the deck is not a git checkout")
    p.add_argument("--dry-run", action="store_true", help="read and check the deck; write nothing")
    p.add_argument("--strict", action="store_true", help="exit 1 when the report lists any problem")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_import)

    p = sub.add_parser("published", help="a deck's published results beside benchtui's verdicts: agreement, "
                                         "rank correlation, every disagreement")
    p.add_argument("-c", "--challenge", help="one challenge (id or display name)")
    p.add_argument("-m", "--model", help="one model's answers, each in full: figures per shape, annotations, quotes")
    p.add_argument("--deck", choices=("kernelbench-hard", "kernelbench"))
    p.add_argument("--all", action="store_true", help="list every answer, not only the disagreements")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_published)


def deck_commit(root: Path, given: str | None) -> str:
    """--commit, else the deck's own git checkout's HEAD, else a commit its ABOUT/README names."""
    if given:
        return given
    from benchtui.workbench.gitinfo import read_git

    git = read_git(root)
    if git.commit and git.top is not None and git.top == root.resolve():
        return git.commit
    for name in ("ABOUT.md", "README.md"):
        try:
            m = COMMIT_WORDS.search((root / name).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            continue
        if m:
            return m.group(1)
    return ""


def read_any_deck(path: Path, *, gpu: str | None, runs: str | None, commit: str | None):
    from benchtui.decks import kernelbench, kernelbench_hard

    if kernelbench_hard.looks_like(path):
        bench, _ = kernelbench_hard.find_bench(path)
        have = sorted(p.name.removeprefix("problems-") for p in bench.glob("problems-*") if p.is_dir())
        if gpu is None:
            if len(have) != 1:
                raise UsageError(f"{path} is a KernelBench-Hard deck with problems for {', '.join(have) or 'no GPU'}: "
                                 "pick one with --gpu")
            gpu = have[0]
        if gpu.lower() not in have:
            raise UsageError(f"{path} has no problems-{gpu.lower()}/ folder (GPUs here: {', '.join(have) or 'none'})")
        return kernelbench_hard.read_deck(path, gpu.lower(), commit=deck_commit(path, commit))
    if kernelbench.looks_like(path):
        # its runs read a run folder at a time as the import writes them: a deck of any size in bounded memory
        return kernelbench.read_deck(path, runs=Path(runs) if runs else None, commit=deck_commit(path, commit),
                                     stream=True)
    raise UsageError(f"{path} is neither a KernelBench-Hard deck (benchmarks/hard/) nor a KernelBench tree "
                     "(KernelBench/level<N>/)")


def target_root(args) -> Path:
    raw = args.workbench or os.environ.get("BENCHTUI_WORKBENCH") or str(Path.cwd())
    return Path(os.path.expanduser(raw)).resolve()


def cmd_import(args, ctx) -> int:
    from benchtui.host.resources import refuse_install_write

    path = Path(os.path.expanduser(args.deck)).resolve()
    if path.is_file():
        raise UsageError(f"{args.deck} is a file: `benchtui import` takes a deck's folder (a KernelBench or "
                         "KernelBench-Hard checkout); `benchtui grades import FILE.md` imports judge grades")
    if not path.is_dir():
        raise UsageError(f"no such deck folder: {args.deck}")
    root = target_root(args)
    if root.exists() and not root.is_dir():
        raise UsageError(f"the workbench {root} is not a folder")
    refused = refuse_install_write(root)
    if refused:
        raise UsageError(refused)
    from benchtui.commands.progress import Progress

    with Progress("importing", quiet=args.json) as progress:
        result, scan = _import(args, path, root, progress)
    if args.json:
        print_json({**result.to_dict(), "scan": scan.as_json() if scan else None})
    else:
        print_report(result)
    return 1 if args.strict and (result.problems or result.missing) else 0


def _import(args, path: Path, root: Path, progress):
    """The deck read and written; (ImportResult, the scan that followed or None)."""
    from benchtui.decks.importer import DeckImportError, import_deck
    from benchtui.decks.model import DeckError
    from benchtui.host.resources import default_store_path
    from benchtui.store.database import StoreError

    progress.step(f"reading the deck {path.name}")
    try:
        deck = read_any_deck(path, gpu=args.gpu, runs=args.runs, commit=args.commit)
    except DeckError as exc:
        raise CommandError(str(exc)) from exc
    if root == path or path in root.parents:
        raise UsageError(f"the workbench {root} is inside the deck {path}, which is never written to: "
                         "give another folder with --workbench")
    made = [] if root.exists() else [root, *(p for p in root.parents if not p.exists())]
    if not args.dry_run:
        try:  # before its store's path is chosen: a folder that does not exist yet is not writable
            root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CommandError(f"cannot make the workbench {root}: {exc}") from exc
    store_path = Path(os.path.expanduser(args.store)).resolve() if args.store else default_store_path(root)
    doing = "checking" if args.dry_run else "writing"
    progress.step(f"{doing} the runs")
    try:
        result = import_deck(deck, root, store_path, dry_run=args.dry_run,
                             on_batch=lambda r: progress.step(f"{doing} the runs: {r.answers} answers so far"))
    except BaseException as exc:
        for folder in made:  # the workbench folder this import made, undone with the rest
            try:
                folder.rmdir()
            except OSError:
                break
        if isinstance(exc, (DeckImportError, StoreError)):
            raise CommandError(f"{exc}; nothing was imported") from exc
        if isinstance(exc, OSError):
            raise CommandError(f"cannot write the workbench {root}: {exc}; nothing was imported") from exc
        if isinstance(exc, KeyboardInterrupt):
            raise KeyboardInterrupt("nothing was imported; the workbench is as it was") from None
        raise
    scan = None
    if not args.dry_run:
        from benchtui.store.database import Store
        from benchtui.workbench.layout import find_workbench
        from benchtui.workbench.scan import scan_workbench

        with Store(store_path) as store:
            scan = scan_workbench(find_workbench(str(root), None, Path.cwd(), store=str(store_path)), store,
                                  index_transcripts=False,
                                  on_model=lambda m, i, n: progress.step(f"scanning {m}", completed=i, total=n))
    return result, scan


def print_report(r) -> None:
    verb = "would import" if r.dry_run else "imported"
    gpu = f" ({r.gpu})" if r.gpu and r.gpu.lower() not in r.title.lower() else ""  # the title may name it already
    add = "would be added" if r.dry_run else "added"
    results = ([f"{r.results_board_only} more runs with only the leaderboard's figures"] if r.results_board_only else []) \
        + [f"{r.results_without_answer} without an answer"] \
        + ([f"{r.results_refused} kept without their answer, whose folder holds another"] if r.results_refused else []) \
        + [f"{r.results_written} rows new or changed"]
    print(f"{verb} {r.title}{gpu} from {r.path} (commit {r.commit or 'unknown'}) into {r.workbench}:")
    print(f"  {r.challenges} challenges ({r.challenges_written} new or changed), {r.answers} answers of {r.models} models "
          f"({r.answers_written} new), {r.results} published results ({'; '.join(results)})"
          + f", {r.annotations} annotations ({r.notes_added} line notes {add}"
          + (f"; {r.annotations_other_gpu} of runs measured on another GPU model" if r.annotations_other_gpu else "")
          + ")")
    for line in r.missing:
        print(f"  missing: {line}")
    for line in r.problems:
        print(f"  problem: {line}")
    for line in r.notes:
        print(f"  note: {line}")
    if not r.dry_run:
        print(f"  next: {next_step(r)}")


def next_step(r) -> str:
    """What to do after an import, from what it brought: running answers it has none of helps no one."""
    from benchtui.decks.model import KERNELBENCH

    published = "`benchtui published` shows the deck's published results"
    if r.answers:
        return ("`benchtui run -c CHALLENGE` runs the answers; "
                + ("`benchtui published` sets the verdicts beside the deck's" if r.results else "the deck published no results"))
    runs = ("import its runs with `benchtui import DECK --runs RUNS_FOLDER` (KernelBench writes "
            "runs/<run_name>/level_<L>_problem_<P>_sample_<S>_kernel.py), or " if r.deck == KERNELBENCH else "")
    return (f"no answers to run yet: {runs}write a model's own with `benchtui model new NAME` (a folder per problem), "
            "then `benchtui run -m NAME`" + (f"; {published}" if r.results else ""))


def _pct(x) -> str:
    return "-" if x is None else f"{x:.0%}"


def cmd_published(args, ctx) -> int:
    from benchtui.decks.compare import compare, hacks_line, published_detail, shape_figures
    from benchtui.grading.grades import GradeError, resolve_challenge, resolve_model

    store = ctx.store
    if not decks_sql.has_results(store):
        raise UsageError("no deck imported in this workbench; `benchtui import DECK` first")
    def named(column: str, name: str, resolve) -> str:
        """A name as the deck's rows hold it, else as the grades resolve it (display names, aliases)."""
        if decks_sql.results_name(store, column, name):
            return name
        try:
            return resolve(store, name)
        except GradeError as exc:
            raise UsageError(str(exc)) from exc

    challenge = named("challenge", args.challenge, resolve_challenge) if args.challenge else None
    data = compare(store, challenge=challenge, deck=args.deck)
    model = None
    if args.model:
        model = named("model", args.model, resolve_model)
        data["answers"] = [r for r in data["answers"] if r["model"] == model]
        data["disagreements"] = [r for r in data["disagreements"] if r["model"] == model]
        data["detail"] = [d for c in sorted({r["challenge"] for r in data["answers"]})
                          for d in published_detail(store, model, c)]
    if args.json:
        print_json(data)
        return 0
    o = data["overall"]
    rho = "-" if o["rank_correlation"] is None else f"{o['rank_correlation']:.2f}"
    flying = f", {o['in_flight']} in flight" if o.get("in_flight") else ""
    print(f"{o['answers']} answers, {o['published']} published results ({o['deck_pass']} PASS), {o['run_here']} run here{flying}; "
          f"judged by both: {o['judged_both']}, agreement {_pct(o['agreement'])}, rank correlation of the passes {rho}")
    if o["not_judged_here"]:
        print(f"not judged here: {o['not_judged_here']} ("
              + ", ".join(f"{n} {why}" for why, n in sorted(o["not_judged_why"].items(), key=lambda kv: -kv[1])) + ")")
    print(hacks_line(o))
    print(f"{'challenge':<36} {'answers':>7} {'deck PASS':>9} {'agree':>6} {'differ':>6} {'not judged':>10} {'rho':>5}")
    for cid, s in data["challenges"].items():
        rho = "-" if s["rank_correlation"] is None else f"{s['rank_correlation']:.2f}"
        print(f"{cid:<36} {s['answers']:>7} {s['deck_pass']:>9} {s['both_pass'] + s['both_fail']:>6} "
              f"{s['deck_pass_here_fail'] + s['deck_fail_here_pass']:>6} {s['not_judged_here']:>10} {rho:>5}")
    rows = data["answers"] if args.all or model else data["disagreements"]
    if rows:
        print(f"{model}'s answers:" if model else "every answer:" if args.all else "disagreements:")
    flagged = [] if args.all or model else [r for r in data["answers"] if r["flags"] and r not in rows]
    if flagged:  # a hack benchtui measured, said where people look even when the verdicts agree
        print("suspected hacks (flags, not verdicts; docs/verdicts.md):")
    for r in rows + flagged:
        fig = "" if r["deck_figure"] is None else f" pf {r['deck_figure']:.4f}"
        mine = "" if r["figure"] is None else f" pf {r['figure']:.4f}"
        notes = "; ".join(f"annotation: {a['verdict']}" + (f" (measured on {a['measured_on']})" if a.get("measured_on") else "")
                          for a in r["annotations"])
        print(f"  {r['model'] or '(no answer)'}/{r['challenge']} [{r['run_id']}]: deck {r['deck_verdict'] or '-'}"
              f" ({r['deck_reason'] or '-'}){fig}; benchtui {r['verdict'] or 'not run'}"
              + (f", not judged here: {r['not_judged']}" if r["not_judged"] else "")
              + f" ({r['reason'] or '-'}){mine}" + (f"; {notes}" if notes else "")
              + (f"; MARKED: {r['marks']}" if r["marks"] else "") + (f"; {r['in_flight']}" if r["in_flight"] else "")
              + (f"; FLAGGED: {', '.join(r['flags'])}" if r["flags"] else ""))
    for d in data.get("detail", []):
        print(f"{model}, run {d['run_id']} ({d['problem']}), as published:")
        for s in d["shapes"]:
            print(f"    shape {s.get('idx', '?')} {s.get('label', '')}: {shape_figures(s)}")
        for a in d["annotations"]:
            print(f"    annotation {a['source']}: {a['verdict']}: {a['summary']}"
                  + (f" (measured on {a['measured_on']}, not the GPU of the deck's peak)" if a.get("measured_on") else ""))
            for q in a["quotes"]:
                print(f"      {q['file']}:{'-'.join(map(str, q['lines'] or []))} {q['label']}")
    for imp in data["imports"] if model is None else []:
        for line in imp["problems"]:
            print(f"  the deck itself ({imp['title']}): {line}")
    return 0
