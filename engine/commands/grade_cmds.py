"""grade, grades, agreement, export, backup."""
from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path

from benchtui.commands.context import CommandError, UsageError, print_json
from benchtui.grading.agreement import agreement, suite_conflicts
from benchtui.grading.exports import FORMATS, export
from benchtui.grading.grades import (
    CELL_RULE,
    DIMENSION_IDS,
    OVERALL,
    GradeError,
    add_note,
    current_grades,
    default_grader_name,
    get_grader,
    grade_history,
    invalidate_grade,
    missing_answer,
    notes_for,
    resolve_challenge,
    resolve_model,
    set_grade,
    shown_grade,
    source_words,
)
from benchtui.grading.judge_import import MARKDOWN_SUFFIXES, add_alias, import_markdown, list_aliases
from benchtui.store import grades_sql, transactions
from benchtui.store.backup import BackupError, backup


def register(sub) -> None:
    # `grades ACTION`; `grade ACTION`, the older spelling, still works (left out of the help)
    grades = sub.add_parser("grades", help="grade an answer, note it, invalidate a grade; import, list and alias "
                                           "judge grades")
    add_grade_actions(grades.add_subparsers(dest="grades_command", metavar="ACTION", required=True))
    add_grade_actions(sub.add_parser("grade").add_subparsers(dest="grades_command", metavar="ACTION", required=True))

    p = sub.add_parser("agreement", help="how far two graders agree (exact, quadratic kappa)")
    p.add_argument("grader_a")
    p.add_argument("grader_b")
    p.add_argument("--dimension", help="one dimension (default: every shared one)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_agreement)

    p = sub.add_parser("export", help="README-ready Markdown, or CSV / JSON of all grades and verdicts")
    p.add_argument("format", choices=FORMATS)
    p.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    p.add_argument("--grader", help="Markdown: one grader's grades only")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("backup", help="a consistent copy of the store, safe while it is in use")
    p.add_argument("file")
    p.set_defaults(func=cmd_backup)

    p = sub.add_parser("salvage", help="from a damaged store: the grades and notes SQLite can still read, as JSON; "
                                       "--restore puts them back into the rebuilt store")
    p.add_argument("file", help="the JSON file to write (must not exist); with --restore, the one to read")
    p.add_argument("--restore", action="store_true",
                   help="put a salvage's graders, grades, notes and aliases back into this workbench's store "
                        "(rows it already holds are not added twice)")
    p.add_argument("--json", action="store_true", help="with --restore: what was restored, as JSON")
    p.set_defaults(func=cmd_salvage)


def add_grade_actions(actions) -> None:
    """set, invalidate, history, note (one answer's grades) and import, list, alias (judge grades)."""
    p = actions.add_parser("set", help="record a grade (supersedes your previous one on the answer)")
    p.add_argument("model")
    p.add_argument("challenge", help="challenge id or display name")
    p.add_argument("grade", help="a letter A..F with +/- (A, A-, B+ ... F) or a 0-100 score")
    p.add_argument("--dimension", default=OVERALL, help=f"one of: {', '.join(DIMENSION_IDS)}")
    p.add_argument("--grader", help="who grades (default: $BENCHTUI_GRADER, else your login name)")
    p.add_argument("--judge", action="store_true", help="the grader is an LLM judge, not a person")
    p.add_argument("--note", help="why")
    p.add_argument("--allow-missing", action="store_true",
                   help="grade although the workbench holds no answer there (no folder, or only the prompt); "
                        "exports mark such grades")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_grade_set)

    p = actions.add_parser("invalidate", help="mark a grade invalid (the row is kept)")
    p.add_argument("id", type=int)
    p.add_argument("--reason", required=True)
    p.set_defaults(func=cmd_grade_invalidate)

    p = actions.add_parser("history", help="every grade of one answer, invalid ones included")
    p.add_argument("model")
    p.add_argument("challenge")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_grade_history)

    p = actions.add_parser("note", help="a note on an answer, a file line or a transcript entry")
    p.add_argument("model")
    p.add_argument("challenge")
    p.add_argument("text")
    p.add_argument("--file", dest="relpath", help="file path inside the answer folder")
    p.add_argument("--line", type=int)
    p.add_argument("--transcript", help="transcript path inside the answer folder")
    p.add_argument("--entry", type=int, help="entry number in the transcript (as `transcript search` shows it)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_grade_note)

    p = actions.add_parser("import", help="import judge grades from Markdown files",
                        description="Import judge grades from Markdown files, in the order given (a folder: its "
                                    "own .md files, by name). A judge's newest grade on a cell stands: a later "
                                    "file's grade supersedes an earlier one's, and each such replacement is listed.")
    p.add_argument("file", nargs="+", metavar="FILE", help="a Markdown file or a folder of them")
    p.add_argument("--grader", help="the judge, where the file has no 'Judge: NAME' line")
    p.add_argument("--dry-run", action="store_true",
                   help="list the grades that would be imported, and what they would supersede; write nothing")
    p.add_argument("--keep-existing", action="store_true",
                   help="leave each cell the judge already graded (from any file, or by hand) as it is")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_grades_import)

    p = actions.add_parser("list", help="the current grades")
    p.add_argument("--grader")
    p.add_argument("--dimension", help="one dimension (default: all)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_grades_list)

    p = actions.add_parser("agreement", help="judges against the suite (A-range grades on failing answers, blind "
                                             "and with evidence); with two graders, how far they agree")
    p.add_argument("grader_a", nargs="?")
    p.add_argument("grader_b", nargs="?")
    p.add_argument("--dimension", help="with two graders: one dimension (default: every shared one)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_grades_agreement)

    p = actions.add_parser("alias", help="map a judge's name for a model or challenge; no arguments lists them")
    p.add_argument("name", nargs="?")
    p.add_argument("target", nargs="?", help="model folder, or challenge id with --challenge")
    p.add_argument("--challenge", action="store_true", help="the alias names a challenge")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_grades_alias)


def _store(ctx):
    """The store, indexed first if it has never been scanned (names to map)."""
    store = ctx.store
    if not grades_sql.any_model(store):
        from benchtui.workbench.scan import scan_workbench

        scan_workbench(ctx.workbench, store)
    return store


def cmd_grade_set(args, ctx) -> int:
    store = _store(ctx)
    try:
        missing = missing_answer(store, resolve_model(store, args.model), resolve_challenge(store, args.challenge))
        if missing and not args.allow_missing:
            raise GradeError(f"{missing}: nothing to grade (grade it anyway with --allow-missing)")
        g = set_grade(store, args.model, args.challenge, args.grade, dimension=args.dimension,
                      grader=args.grader or default_grader_name(),
                      grader_kind="judge" if args.judge else "human", note=args.note)
    except GradeError as exc:
        raise UsageError(str(exc)) from exc
    if args.json:
        print_json({**g.to_dict(), "missing_answer": missing})
    else:
        replaced = f" (supersedes #{g.supersedes})" if g.supersedes else ""
        absent = f" ({missing}; exports mark it)" if missing else ""
        print(f"#{g.id} {g.model}/{g.challenge} {g.dimension}: {g.display} by {g.grader}{replaced}{absent}")
    return 0


def cmd_grade_invalidate(args, ctx) -> int:
    try:
        g = invalidate_grade(ctx.store, args.id, args.reason)
    except GradeError as exc:
        raise UsageError(str(exc)) from exc
    print(f"#{g.id} {g.model}/{g.challenge} {g.dimension} {g.display} by {g.grader}: invalid ({g.invalid_reason})")
    return 0


def cmd_grade_history(args, ctx) -> int:
    store = _store(ctx)
    try:
        model, challenge = resolve_model(store, args.model), resolve_challenge(store, args.challenge)
    except GradeError as exc:
        raise UsageError(str(exc)) from exc
    rows = grade_history(store, model, challenge)
    notes = notes_for(store, model, challenge)
    states = grade_states(store, model, challenge, rows)
    if args.json:
        print_json({"grades": [{**g.to_dict(), **states[g.id]} for g in rows], "notes": [n.to_dict() for n in notes],
                    "cell_rule": CELL_RULE})
        return 0
    for g in rows:
        print(f"#{g.id:<5} {g.created_at}  {g.dimension:<26} {g.display:<10} {g.grader:<20} "
              f"{source_words(g.source):<24} {states[g.id]['state']}{'  ' + g.note if g.note else ''}".rstrip())
    if not rows:
        print(f"no grades for {model}/{challenge}")
    else:
        print(f"the matrix, exports and rankings show, per dimension, {CELL_RULE}")
    for n in notes:
        print(f"note #{n.id} {n.created_at}  {n.author}{note_place(n)}: {n.text}")
    return 0


def grade_states(store, model: str, challenge: str, rows) -> dict[int, dict]:
    """Grade id -> whether it stands and why: {"current", "shown", "superseded_by", "state"}
    (state: one phrase for `grade history`)."""
    current = current_grades(store, model=model, challenge=challenge, dimension=None)
    current_of = {(g.grader, g.dimension): g.id for g in current}
    shown = {dim: shown_grade([g for g in current if g.dimension == dim]).id for dim in {g.dimension for g in current}}
    out = {}
    for g in rows:
        now = current_of.get((g.grader, g.dimension))
        if not g.valid:
            state = f"invalid: {g.invalid_reason}"
        elif now == g.id:
            state = ("current, shown" if shown.get(g.dimension) == g.id
                     else f"current, not shown (#{shown.get(g.dimension)} is)")
        else:
            state = f"superseded by #{now} (a newer grade by {g.grader})" if now else "superseded"
        out[g.id] = {"current": now == g.id and g.valid, "shown": shown.get(g.dimension) == g.id,
                     "superseded_by": now if g.valid and now not in (None, g.id) else None, "state": state}
    return out


def note_place(n) -> str:
    """' on kv.py:12' / ' on session.jsonl#4' / '' (the whole answer)."""
    if n.relpath:
        return f" on {n.relpath}" + (f":{n.line}" if n.line is not None else "")
    if n.transcript:
        return f" on {n.transcript}" + (f"#{n.entry}" if n.entry is not None else "")
    return ""


def cmd_grade_note(args, ctx) -> int:
    try:
        n = add_note(_store(ctx), args.model, args.challenge, args.text, relpath=args.relpath,
                     line=args.line, transcript=args.transcript, entry=args.entry)
    except GradeError as exc:
        raise UsageError(str(exc)) from exc
    if args.json:
        print_json(n.to_dict())
        return 0
    print(f"note #{n.id} on {n.model}/{n.challenge}{note_place(n)} by {n.author}")
    return 0


def _is_salvage_file(path: Path) -> bool:
    from benchtui.store.restore import RestoreError, read_salvage

    if path.suffix.lower() != ".json" or not path.is_file():
        return False
    try:
        read_salvage(path)
    except RestoreError:
        return False
    return True


def _markdown_files(names: list[str]) -> list[Path]:
    """The files to import: each file named, and each named folder's own .md files."""
    out: list[Path] = []
    for name in names:
        path = Path(name)
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() in MARKDOWN_SUFFIXES)
            if not found:
                raise UsageError(f"no Markdown (.md) files in the folder {name}")
            out += found
        elif not path.exists():
            raise UsageError(f"no such file: {name}")
        elif path.suffix.lower() not in MARKDOWN_SUFFIXES:
            raise UsageError(f"not a Markdown file: {name}; grades import reads .md files (judge reports, a README) "
                             "and the JSON `benchtui salvage FILE` writes")
        else:
            out.append(path)
    return list(dict.fromkeys(out))


def cmd_grades_import(args, ctx) -> int:
    if len(args.file) == 1 and _is_salvage_file(Path(args.file[0])):  # what `salvage` wrote
        if args.dry_run or args.keep_existing or args.grader:
            raise UsageError(f"{args.file[0]} is a salvage: it is restored as it is (rows the store already holds "
                             "are not added twice); --dry-run, --keep-existing and --grader do not apply")
        return restore_salvage(Path(args.file[0]), ctx, as_json=args.json)
    paths = _markdown_files(args.file)
    store = _store(ctx)
    results = []
    # A dry run over several files imports them all in one transaction and rolls it
    # back, so each file's report counts what the files before it would have stored.
    rehearse = args.dry_run and len(paths) > 1
    try:
        with transactions.rehearsal(store, rehearse):
            for path in paths:
                results.append((path, import_markdown(store, path, grader=args.grader,
                                                      dry_run=args.dry_run and not rehearse,
                                                      keep_existing=args.keep_existing)))
    except (GradeError, sqlite3.OperationalError) as exc:
        raise CommandError(str(exc)) from exc
    found_any = any(r.nothing_found is None for _, r in results)
    if args.json:
        rows = [{"file": str(path), **r.to_dict()} for path, r in results]
        if len(args.file) == 1 and len(rows) == 1:
            print_json(rows[0])
        else:
            print_json({"files": rows, "imported": sum(r.imported for _, r in results),
                        "skipped_existing": sum(r.skipped_existing for _, r in results)})
        return 0 if found_any else 1
    for name in args.file:  # which file's grade stands depends on the order they are read in: say it
        folder = Path(name)
        if folder.is_dir():
            files = [p.name for p in paths if p.parent == folder]
            print(f"{name}: {len(files)} files, read in name order ({', '.join(files[:5])}"
                  f"{', ...' if len(files) > 5 else ''}); where two grade one cell, the later file's grade stands")
    for path, result in results:
        _print_import(path, result, args)
    if any(r.superseded for _, r in results):
        print("to keep the earlier grades, import with --keep-existing (`benchtui grades history MODEL CHALLENGE` "
              "shows every grade and which one stands)")
    return 0 if found_any else 1


def _print_import(path: Path, result, args) -> None:
    if result.nothing_found:
        print(f"nothing imported from {path.name}: {result.nothing_found}")
    else:
        verb = "would import" if args.dry_run else "imported"
        graders = ", ".join(result.graders) or args.grader or ""
        kept = f"; {result.kept} kept as they were (--keep-existing)" if result.kept else ""
        print(f"{verb} {result.imported} grades from {path.name}" + (f" ({graders})" if graders else "")
              + f"; {result.skipped_existing} already present{kept}")
    if args.dry_run:
        for g in result.grades:
            dim = "" if g["dimension"] == OVERALL else f" {g['dimension']}"
            was = f", superseding {g['supersedes']['grade']}" if g["supersedes"] else ""
            print(f"  {g['model']}/{g['challenge']}{dim}: {g['grade']} by {g['grader']} (line {g['line']}{was})")
    for m in result.mapped:
        print(f"  mapped {m['kind']} {m['name']!r} -> {m['to']} ({m['how']})")
    for u in result.unmapped:
        print(f"  unmapped: {u}")
    for p in result.problems:
        print(f"  problem: {p}")
    if result.no_answer:
        print(f"  graded, but this workbench holds no answer there (exports mark them): "
              f"{', '.join(result.no_answer)}")
    for line in result.superseded:
        print(f"  {'would supersede' if args.dry_run else 'supersedes'} {line}")
    if result.unmapped:
        print("  map names with `benchtui grades alias NAME MODEL_FOLDER` (or --challenge NAME ID), then import again")


def cmd_grades_list(args, ctx) -> int:
    store = ctx.store
    if args.grader and get_grader(store, args.grader) is None:  # else a typo reads "no grades yet"
        raise UsageError(f"unknown grader {args.grader!r}; see `benchtui grades list`")
    if args.dimension and args.dimension not in DIMENSION_IDS:
        raise UsageError(f"unknown dimension {args.dimension!r}; one of: {', '.join(DIMENSION_IDS)}")
    rows = current_grades(store, grader=args.grader, dimension=args.dimension)
    if args.json:
        print_json([g.to_dict() for g in rows])
        return 0
    for g in rows:
        print(f"{g.model:<20} {g.challenge:<20} {g.dimension:<26} {g.display:<10} {g.grader:<18} {g.created_at}")
    if not rows:
        print("no grades yet")
    return 0


def cmd_grades_alias(args, ctx) -> int:
    store = _store(ctx)
    if args.name is None:
        rows = list_aliases(store)
        if args.json:
            print_json(rows)
        for r in rows if not args.json else []:
            print(f"{r['kind']:<10} {r['alias']:<30} -> {r['target']}")
        return 0
    if args.target is None:
        raise UsageError("give the alias and what it maps to: benchtui grades alias NAME TARGET")
    try:
        add_alias(store, "challenge" if args.challenge else "model", args.name, args.target)
    except GradeError as exc:
        raise UsageError(str(exc)) from exc
    print(f"{args.name!r} -> {args.target}")
    return 0


def cmd_grades_agreement(args, ctx) -> int:
    if args.grader_a is not None:
        if args.grader_b is None:
            raise UsageError("give two graders to compare, or none for every judge against the suite")
        return cmd_agreement(args, ctx)
    rows, effects = suite_conflicts(ctx.store)
    if args.json:
        print_json({"judges": [r.to_dict() for r in rows], "evidence_effect": [e.to_dict() for e in effects]})
        return 0
    if not rows:
        print("no judge grades on answers the suite has a verdict on (benchtui judge, or grades import)")
        return 0

    def pct(part: int, whole: int) -> str:
        return f"{part} of {whole} ({part / whole:.0%})" if whole else "-"

    print("judges against the suite (overall grades on answers with a verdict):")
    for r in rows:
        how = (f"{r.judge_model}, {'blind' if r.mode == 'blind' else 'with evidence'}, rubric {r.rubric_sha[:8]}"
               if r.judge_model and r.mode and r.rubric_sha else "imported")
        print(f"  {r.grader} ({how}): {r.graded} graded; A-range grades on answers the suite fails: "
              f"{pct(r.a_on_failing, r.a_range)} of its A-range grades; failing answers it put in the A range: "
              f"{pct(r.a_on_failing, r.failing)}")
    for e in effects:
        print(f"  {e.judge_model} (rubric {e.rubric_sha[:8]}), on the {e.failing_both} failing answer(s) graded in "
              f"both modes: A-range blind {e.a_blind}, with evidence {e.a_evidence}")
    return 0


def cmd_agreement(args, ctx) -> int:
    try:
        result = agreement(ctx.store, args.grader_a, args.grader_b, dimension=args.dimension)
    except GradeError as exc:
        raise UsageError(str(exc)) from exc
    if args.json:
        d = result.to_dict()
        print_json({"n": d["n"], "exact": d["exact"], "kappa_quadratic": d["kappa_quadratic"],
                    "disagreements": d["disagreements"], "grader_a": d["grader_a"], "grader_b": d["grader_b"]})
        return 0
    kappa = "undefined" if result.kappa_quadratic is None else f"{result.kappa_quadratic:.3f}"
    exact = "-" if result.exact is None else f"{result.exact:.0%}"
    print(f"{result.grader_a} vs {result.grader_b}: {result.n} item(s) graded by both, exact {exact}, quadratic kappa {kappa}")
    # Three kinds of rows, each under its own heading: the counts then add up (the list
    # used to mix items one grader alone graded in with "N shared items").
    both = [d for d in result.disagreements if d.grade_a and d.grade_b]
    groups = ((f"differ ({sum(1 for d in both if d.grade_a != d.grade_b)} of the {result.n})",
               [d for d in both if d.grade_a != d.grade_b]),
              ("agree, on an A-range grade the suite's verdict contradicts", [d for d in both if d.grade_a == d.grade_b]),
              ("graded by one of them only, an A-range grade the suite's verdict contradicts",
               [d for d in result.disagreements if not (d.grade_a and d.grade_b)]))
    for title, rows in groups:
        if rows:
            print(f"  {title}:")
        for d in rows:
            flag = f"  (A-range, but the suite says {d.verdict})" if d.suite_conflict else ""
            print(f"    {d.model}/{d.challenge} {d.dimension}: {d.grade_a or '-'} vs {d.grade_b or '-'}{flag}")
    return 0


def cmd_export(args, ctx) -> int:
    if args.grader and get_grader(ctx.store, args.grader) is None:
        raise UsageError(f"unknown grader {args.grader!r}; see `benchtui grades list`")
    try:
        text = export(ctx.store, args.format, grader=args.grader)
    except GradeError as exc:
        raise UsageError(str(exc)) from exc
    if args.output:
        if not Path(args.output).parent.is_dir():
            raise UsageError(f"folder {Path(args.output).parent} does not exist")
        try:
            Path(args.output).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise CommandError(f"cannot write {args.output}: {exc}") from exc
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def new_file(name: str) -> None:
    """A file a command is to create: one that exists, or in a folder that does not, is bad usage."""
    path = Path(os.path.expanduser(name))
    if path.exists():
        raise UsageError(f"{name} already exists; choose a new file name")
    if not path.parent.is_dir():
        raise UsageError(f"folder {path.parent} does not exist")


def cmd_backup(args, ctx) -> int:
    new_file(args.file)
    store = ctx.store  # opening it runs migrations, so the copy is current
    try:
        result = backup(store.path, args.file)
    except BackupError as exc:
        raise CommandError(str(exc)) from exc
    print(f"backed up {store.path} to {result.path} ({result.bytes} bytes, integrity {result.integrity})")
    return 0


def cmd_salvage(args, ctx) -> int:
    from benchtui.store.salvage import SalvageError, salvage, write

    if args.restore:
        return restore_salvage(Path(args.file), ctx, as_json=args.json)

    new_file(args.file)
    try:  # the store is opened read-only, never through ctx.store (which refuses a damaged file)
        result = salvage(ctx.workbench.store_path)
        out = write(result, args.file)
    except SalvageError as exc:
        raise CommandError(str(exc)) from exc
    print(f"salvaged from {result.source} ({result.method}) into {out}:")
    for table, rows in result.tables.items():
        print(f"  {table}: {len(rows)} rows read")
    print(f"  hand grades (current, by people): {len(result.to_dict()['hand_grades'])}")
    for gap in result.unreadable:
        print(f"  {gap['table']}: {unreadable_words(gap)} ({gap['error']})")
    if not result.unreadable:
        print("  every row of these tables was read")
    return 0


def restore_salvage(path: Path, ctx, *, as_json: bool = False) -> int:
    """A salvage's rows back into the store (engine/store/restore.py)."""
    from benchtui.store.restore import RestoreError, read_salvage, restore

    try:
        result = restore(_store(ctx), read_salvage(path))
    except RestoreError as exc:
        raise UsageError(str(exc)) from exc
    if as_json:
        print_json({"file": str(path), **result.to_dict()})
        return 0
    print(f"restored from {path}:")
    for table in ("graders", "grades", "notes", "name_aliases"):
        added, present = result.added.get(table, 0), result.present.get(table, 0)
        print(f"  {table}: {added} added" + (f", {present} already in the store" if present else ""))
    for conflict in result.conflicts:
        print(f"  {conflict}")
    return 0


def unreadable_words(gap: dict) -> str:
    after, following = gap["after_id"], gap["next_id"]
    if after is None:
        return "the table could not be read"
    if following is None:
        return "none of its rows could be read" if after == 0 else f"the rows after id {after} could not be read"
    return (f"the rows before id {following} could not be read" if after == 0
            else f"the rows between ids {after} and {following} could not be read")
