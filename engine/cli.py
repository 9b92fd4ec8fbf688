"""The ``benchtui`` command. With no subcommand it opens the dashboard.

Subcommands live in ``engine/commands/*.py``; each module exposes
``register(subparsers)`` and sets ``func`` on its parsers. A handler gets the
parsed args and a :class:`Context` and returns an exit code:
0 success, 1 failure, 2 bad usage. User errors are one line on stderr.
"""
from __future__ import annotations

import functools
import importlib
import os
import sqlite3
import sys
from types import SimpleNamespace
from typing import TYPE_CHECKING

from benchtui.commands.context import EXIT_FAIL, EXIT_OK, EXIT_USAGE, CommandError, Context, UsageError
from benchtui.commands.dashboard import open_dashboard
from benchtui.store.database import StoreError, damage_message, is_damage

if TYPE_CHECKING:
    import argparse

COMMAND_MODULES = [
    "benchtui.commands.workbench_cmds",
    "benchtui.commands.transcript_cmds",
    "benchtui.commands.run_cmds",
    "benchtui.commands.grade_cmds",
    "benchtui.commands.adapter_cmds",
    "benchtui.commands.install_cmds",
    "benchtui.commands.challenge_cmds",
    "benchtui.commands.audit_cmds",
    "benchtui.commands.deck_cmds",
    "benchtui.commands.judge_cmds",
]


@functools.cache
def parser_class() -> type[argparse.ArgumentParser]:
    """The argparse parser with one-line errors; argparse is imported here, so
    that the dashboard's start-up (see ``dashboard_args``) does without it."""
    import argparse

    class Parser(argparse.ArgumentParser):
        def error(self, message: str):  # one line, exit 2, no usage dump
            where = self.prog.removeprefix("benchtui").strip()
            print(f"benchtui: error: {with_suggestions(self, message)} (see benchtui help{' ' + where if where else ''})",
                  file=sys.stderr)
            raise SystemExit(EXIT_USAGE)

        def _check_value(self, action, value):
            # an unknown command or choice: the closest visible ones, never the hidden legacy
            # spellings argparse would list among the choices
            if action.choices is not None and value not in action.choices:
                from benchtui.text.suggest import suggest

                shown = visible_choices(action)
                if value.startswith("-"):  # `benchtui -Z`: an option no command knows, not a command
                    raise argparse.ArgumentError(None, f"unknown option {value}")
                what = "command" if isinstance(action, argparse._SubParsersAction) else "choice"
                raise argparse.ArgumentError(action, f"unknown {what} {value!r}; {suggest(value, shown, 'one of')}")
            return super()._check_value(action, value)

    return Parser


def visible_choices(action) -> list[str]:
    """An argument's choices as its help lists them: a subcommand without help (an older
    spelling kept working) is left out."""
    import argparse

    if isinstance(action, argparse._SubParsersAction):
        return [a.dest for a in action._choices_actions]
    return [str(c) for c in action.choices]


def option_strings(parser) -> set[str]:
    """Every option of ``parser`` and of its subcommands, for a did-you-mean."""
    import argparse

    found: set[str] = set()
    for action in parser._actions:
        found.update(o for o in action.option_strings if o.startswith("--"))
        if isinstance(action, argparse._SubParsersAction):
            for sub in set(action.choices.values()):
                found |= option_strings(sub)
    return found


def with_suggestions(parser, message: str) -> str:
    """argparse's "unrecognized arguments: --jbos 2" with the closest options named."""
    prefix = "unrecognized arguments: "
    if not message.startswith(prefix):
        return message
    from benchtui.text.suggest import close_names

    unknown = [t.split("=", 1)[0] for t in message[len(prefix):].split() if t.startswith("-")]
    if not unknown:
        return message
    known = sorted(option_strings(parser))
    said = []
    for option in unknown:
        close = close_names(option, known, n=2) if option.startswith("--") else []
        said.append(f"unknown option {option}" + (f": did you mean {' or '.join(close)}?" if close else ""))
    return "; ".join(said)


def add_global_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workbench", metavar="PATH", help="workbench folder (default: $BENCHTUI_WORKBENCH, then the current directory)")
    parser.add_argument("--store", metavar="FILE", help="store database (default: WORKBENCH/store.db)")


GLOBAL_OPTIONS = ("--workbench", "--store")


def dashboard_args(argv: list[str]) -> SimpleNamespace | None:
    """``benchtui [--workbench PATH] [--store FILE]`` (``--opt=value`` too),
    read without argparse, whose import the dashboard's start-up would pay;
    None for anything else, which argparse then parses (and reports)."""
    values: dict[str, str | None] = dict.fromkeys(("workbench", "store"))
    tokens = iter(argv)
    for token in tokens:
        option, eq, value = token.partition("=")
        if option not in GLOBAL_OPTIONS:
            return None
        if not eq:
            value = next(tokens, None)
            if value is None or value.startswith("-"):
                return None
        values[option[2:]] = value
    return SimpleNamespace(command=None, **values)


def parse_args(argv: list[str]) -> argparse.Namespace | SimpleNamespace:
    """Global options alone mean the dashboard: skip loading every command
    module (they pull in the scanner, grades, ...), which start-up would pay."""
    dashboard = dashboard_args(argv)
    if dashboard is not None:
        return dashboard
    bare = parser_class()(prog="benchtui", add_help=False)
    add_global_options(bare)
    known, rest = bare.parse_known_args(argv)
    if not rest:
        known.command = None
        return known
    return build_parser().parse_args(argv)


def build_parser() -> argparse.ArgumentParser:
    from benchtui import __version__

    parser = parser_class()(prog="benchtui", description="Index, run, compare and grade coding-LLM answers.")
    parser.add_argument("--version", action="version", version=f"benchtui {__version__}")
    add_global_options(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=parser_class())
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    p = sub.add_parser("help", help="help on a command: `benchtui help run`, `benchtui help grades set`")
    p.add_argument("topic", nargs="*", metavar="COMMAND")
    p.set_defaults(func=lambda args, ctx: command_help(parser, args.topic))
    help_for_shared_options(parser)
    global_options_anywhere(parser)
    return parser


def global_options_anywhere(parser: argparse.ArgumentParser) -> None:
    """``--workbench`` and ``--store`` after the command as well as before it
    (``benchtui import DECK --workbench DIR``, as uv takes its global options):
    each command's parser takes them too, defaulting to nothing so that one
    given before the command stands."""
    import argparse

    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        for sub in set(action.choices.values()):
            taken = {o for a in sub._actions for o in a.option_strings}
            if not taken & set(GLOBAL_OPTIONS):
                sub.add_argument("--workbench", metavar="PATH", default=argparse.SUPPRESS,
                                 help="workbench folder, as before the command")
                sub.add_argument("--store", metavar="FILE", default=argparse.SUPPRESS,
                                 help="store database, as before the command")
            global_options_anywhere(sub)


def command_help(parser: argparse.ArgumentParser, topic: list[str]) -> int:
    """``benchtui help COMMAND [ACTION]``: that command's --help, as git help does."""
    import argparse

    for word in topic:
        subs = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
        if subs is None or word not in subs.choices:
            from benchtui.text.suggest import suggest

            shown = visible_choices(subs) if subs is not None else []
            raise UsageError(f"no help on {' '.join(topic)!r}: {parser.prog} has no {word!r}"
                             + (f"; {suggest(word, shown, 'it has')}" if shown else ""))
        parser = subs.choices[word]
    parser.print_help()
    return EXIT_OK


JSON_HELP = "print JSON instead of text: stdout holds only the JSON"


def help_for_shared_options(parser: argparse.ArgumentParser) -> None:
    """Options every command shares get one help text wherever a command left it out."""
    import argparse

    for action in parser._actions:
        if "--json" in action.option_strings and not action.help:
            action.help = JSON_HELP
        if isinstance(action, argparse._SubParsersAction):
            for sub in set(action.choices.values()):
                help_for_shared_options(sub)


def main(argv: list[str] | None = None) -> int:
    try:  # reading the arguments imports every command's module: Ctrl-C may land there too
        args = parse_args(sys.argv[1:] if argv is None else argv)
    except KeyboardInterrupt:
        print("benchtui: interrupted", file=sys.stderr)
        return 130
    ctx = Context(args)
    try:
        if args.command is None:
            return open_dashboard(ctx)
        return int(args.func(args, ctx) or 0)
    except UsageError as exc:
        print(f"benchtui: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except (CommandError, StoreError) as exc:
        print(f"benchtui: {exc}", file=sys.stderr)
        return EXIT_FAIL
    except sqlite3.DatabaseError as exc:  # damage found mid-command (a file truncated under us, ...)
        where = ctx.resolved_workbench.store_path if ctx.resolved_workbench is not None else "store.db"
        print(f"benchtui: {damage_message(where, str(exc)) if is_damage(exc) else f'store error: {exc}'}", file=sys.stderr)
        return EXIT_FAIL
    except KeyboardInterrupt as exc:  # a command may say what the interrupt left (or undid)
        print(f"benchtui: interrupted{f': {exc}' if str(exc) else ''}", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`benchtui ... | head`): stop quietly, and keep
        # Python from complaining again when it flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    finally:
        ctx.close()


if __name__ == "__main__":
    raise SystemExit(main())
