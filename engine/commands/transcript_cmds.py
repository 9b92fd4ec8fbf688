"""``benchtui transcript show|stats|search``: read any transcript file, search the store."""
from __future__ import annotations

import argparse
import dataclasses
import os
import re
import sys
from pathlib import Path

from benchtui.commands.context import CommandError, UsageError, print_json
from benchtui.store import answers_sql, transcripts_sql
from benchtui.transcripts import FORMATS, Transcript, TranscriptError, load_transcript
from benchtui.transcripts.render import RenderOptions, render_text

WARNINGS_SHOWN = 20


def register(subparsers) -> None:
    p = subparsers.add_parser("transcript", help="read, summarise and search session transcripts")
    sub = p.add_subparsers(dest="transcript_command", metavar="ACTION")
    p.set_defaults(func=_usage(p))

    show = sub.add_parser("show", help="print a transcript as readable text", description=(
        "TARGET: a transcript file, MODEL CHALLENGE [FILE] (the answer's transcript), or "
        "MODEL/CHALLENGE/FILE #N as `transcript search` prints it (show starts at entry N)."))
    show.add_argument("target", nargs="+", metavar="TARGET")
    show.add_argument("--no-tools", action="store_true", help="hide tool calls and results")
    show.add_argument("--no-thinking", action="store_true", help="hide thinking")
    show.add_argument("--errors", action="store_true", help="only failed tools, errors, bad lines")
    show.add_argument("--format", choices=FORMATS, help="skip detection")
    show.set_defaults(func=cmd_show)

    stats = sub.add_parser("stats", help="totals of a transcript", description=show.description)
    stats.add_argument("target", nargs="+", metavar="TARGET")
    stats.add_argument("--json", action="store_true", help="print JSON")
    stats.add_argument("--format", choices=FORMATS)
    stats.set_defaults(func=cmd_stats)

    search = sub.add_parser("search", help="full-text search over all stored transcripts")
    search.add_argument("query")
    search.add_argument("--limit", type=int, default=50)
    search.add_argument("-m", "--model", action="append", default=[], help="only this model's transcripts (repeatable)")
    search.add_argument("-c", "--challenge", action="append", default=[],
                        help="only this challenge's transcripts (repeatable)")
    search.add_argument("--json", action="store_true", help="print JSON")
    search.set_defaults(func=cmd_search)


def _usage(parser: argparse.ArgumentParser):
    def handler(args, ctx) -> int:
        raise UsageError("transcript needs an action: show, stats or search")
    return handler


def transcript_path(path: Path, workbench: str | None) -> Path:
    """Where PATH is: a relative one is read from the workbench (``--workbench``,
    else $BENCHTUI_WORKBENCH) first, as every path the store prints is relative
    to it, then from the current folder; an absolute one as it is."""
    path = Path(os.path.expanduser(path))
    if path.is_absolute():
        return path
    bases = [Path(os.path.expanduser(workbench))] if workbench else []
    bases.append(Path.cwd())
    for base in bases:
        if (base / path).exists():
            return base / path
    where = " and in ".join(str(b) for b in bases) if workbench else "the current folder"
    raise CommandError(f"{path}: no such file (looked in {where})")


def answer_transcript(ctx, model: str, challenge: str, name: str | None = None) -> Path:
    """The transcript of answer MODEL CHALLENGE (names resolved as every command
    resolves them); ``name`` picks one of several by its path in the answer folder."""
    from benchtui.commands.workbench_cmds import resolve_answer
    from benchtui.workbench.scan import scan_workbench

    scan_workbench(ctx.workbench, ctx.store, index_transcripts=False)
    model, challenge = resolve_answer(ctx, model, challenge)
    folder = answers_sql.answer_path(ctx.store, model, challenge)
    names = transcripts_sql.transcript_relpaths(ctx.store, model, challenge)
    if name is not None:
        picked = [n for n in names if n == name] or [n for n in names if Path(n).name == name]
        if len(picked) != 1:
            raise UsageError(f"{model}/{challenge} has no transcript {name!r}; it has: {', '.join(names) or 'none'}")
        names = picked
    if not names:
        raise CommandError(f"{model}/{challenge} has no transcript")
    if len(names) > 1:
        raise UsageError(f"{model}/{challenge} has {len(names)} transcripts: name one after the challenge "
                         f"({', '.join(names)})")
    return ctx.workbench.root / folder / names[0]


def find_transcript(ctx, target: list[str]) -> Path:
    """A transcript file, MODEL CHALLENGE [FILE], or MODEL/CHALLENGE/FILE (how
    `transcript search` names a hit)."""
    if len(target) > 3:
        raise UsageError("give a transcript file, or MODEL CHALLENGE [FILE]")
    if len(target) > 1:
        return answer_transcript(ctx, *target)
    workbench = getattr(ctx.args, "workbench", None) or os.environ.get("BENCHTUI_WORKBENCH")
    try:
        return transcript_path(Path(target[0]), workbench)
    except CommandError as missing:
        model, _, rest = target[0].partition("/")
        challenge, _, name = rest.partition("/")
        if not (model and challenge and name) or Path(os.path.expanduser(target[0])).is_absolute():
            raise
        try:
            return answer_transcript(ctx, model, challenge, name)
        except UsageError:  # no workbench, or no such model: the file's absence is the message
            try:
                known = model in ctx.store.model_names()
            except (UsageError, CommandError):
                known = False
            if known:
                raise
            raise missing from None


_HIT_ENTRY = re.compile(r"(.*?)\s*#(\d+)(?:\s*\(branch (\d+)\))?")


def split_hit(target: list[str]) -> tuple[list[str], int | None, int]:
    """TARGET less the ``#N`` and ``(branch K)`` of a `transcript search` hit
    (copied as one word or several): ``(target, N or None, K)``."""
    tokens, branch = list(target), 0
    if len(tokens) >= 3 and tokens[-2] == "(branch" and re.fullmatch(r"\d+\)", tokens[-1]):
        branch, tokens = int(tokens[-1][:-1]), tokens[:-2]
    m = _HIT_ENTRY.fullmatch(tokens[-1]) if tokens else None
    if not m or not (m[1] or len(tokens) > 1):
        return list(target), None, 0
    return tokens[:-1] + ([m[1]] if m[1] else []), int(m[2]), int(m[3]) if m[3] else branch


def _load(args, ctx) -> Transcript:
    target, _, _ = split_hit(args.target)
    path = find_transcript(ctx, target)
    try:
        return load_transcript(path, args.format)
    except TranscriptError as exc:
        raise CommandError(str(exc)) from None


def cmd_show(args, ctx) -> int:
    t = _load(args, ctx)
    _, position, branch = split_hit(args.target)
    if position is not None:  # a search hit: its path, from that entry on
        if branch and not 0 <= branch < len(t.branches):
            raise UsageError(f"{Path(t.path).name} has no branch {branch}")
        path = t.branches[branch].entries if branch else t.entries
        if not any(e.index == position for e in path):
            last = max((e.index for e in path), default=-1)
            raise UsageError(f"entry #{position}: {Path(t.path).name} has entries 0 to {last}"
                             + (f" on branch {branch}" if branch else ""))
        t = dataclasses.replace(t, entries=[e for e in path if e.index >= position])
    opts = RenderOptions(tools=not args.no_tools, thinking=not args.no_thinking, errors_only=args.errors)
    print(render_text(t, opts), end="")
    return 0


def stats_dict(t: Transcript) -> dict:
    tot = t.totals
    return {
        "format": t.header.format, "model": t.header.model, "provider": t.header.provider,
        "entries": dict(tot.entries), "tool_calls": tot.tool_calls, "tool_errors": tot.tool_errors,
        "tokens": {"input": tot.tokens.input, "output": tot.tokens.output,
                   "cache_read": tot.tokens.cache_read, "cache_write": tot.tokens.cache_write},
        "cost": round(tot.cost, 6), "duration_s": tot.as_dict()["duration_s"],
        "branches": len(t.branches), "warnings": [w.as_dict() for w in t.warnings],
        # beyond the documented keys: more detail for scripts
        "tools": dict(tot.tools), "reasoning_tokens": tot.tokens.reasoning,
        "model_latency_s": tot.as_dict()["model_latency_s"], "tool_time_s": tot.as_dict()["tool_time_s"],
        "files_written": tot.files_written, "files_edited": tot.files_edited, "turns": len(t.turns),
    }


def cmd_stats(args, ctx) -> int:
    t = _load(args, ctx)
    data = stats_dict(t)
    if args.json:
        print_json(data)
        return 0
    from benchtui.transcripts.render import totals_lines
    h = t.header
    print(f"{' '.join(args.target)}: {h.format}, model {'/'.join(x for x in (h.provider, h.model) if x) or '?'}, "
          f"{len(t.entries)} entries on the active path, {len(t.branches)} branch(es), {len(t.turns)} turn(s)")
    for line in totals_lines(t.totals):
        print("  " + line)
    for w in t.warnings[:WARNINGS_SHOWN]:
        print(f"  warning: line {w.line}: {w.kind}: {w.detail}")
    if len(t.warnings) > WARNINGS_SHOWN:  # hundreds of lines would bury the totals
        print(f"  ... {len(t.warnings) - WARNINGS_SHOWN} more warning(s), {len(t.warnings)} in all (--json lists every one)")
    return 0


def _search_scope(ctx, models: list[str], challenges: list[str]) -> tuple[list[str], list[str]]:
    """``-m``/``-c`` names checked against the workbench (challenges by id or display name)."""
    ctx.check_models(models)
    return sorted(set(models)), sorted(set(ctx.challenge_ids(challenges)))


def cmd_search(args, ctx) -> int:
    from benchtui.transcripts.index import not_searched, search
    from benchtui.workbench.scan import scan_workbench

    if args.limit < 1:
        raise UsageError("--limit must be at least 1")
    store = ctx.store
    scan_workbench(ctx.workbench, store)  # never search a stale index (scan also indexes transcripts)
    models, challenges = _search_scope(ctx, args.model, args.challenge)
    hits = search(store, args.query, args.limit, models, challenges)
    # what the index does not hold is said, hits or none, on stderr: --json's stdout stays the hits
    if missed := not_searched(store, models, challenges):
        print(f"benchtui: not searched: {missed}", file=sys.stderr)
    if args.json:
        print_json(hits)
        return 0
    if not hits:
        print(f"no transcript entry matches {args.query!r}")
        return 1
    for h in hits:
        where = f"{h['model']}/{h['challenge']}/{h['relpath']}"
        branch = "" if h["branch"] == 0 else f" (branch {h['branch']})"
        print(f"{where} #{h['position']}{branch} line {h['line']} {h['role']}: {h['snippet']}")
    return 0
