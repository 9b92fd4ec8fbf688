"""The ``benchtui`` command. With no subcommand it opens the dashboard.

Subcommands live in ``engine/commands/*.py``; each module exposes
``register(subparsers)`` and sets ``func`` on its parsers. A handler gets the
parsed args and a :class:`Context` and returns an exit code:
0 success, 1 failure, 2 bad usage. User errors are one line on stderr.
"""
from __future__ import annotations

import functools
import gc
import importlib
import json
import os
import shutil
import sqlite3
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING

from benchtui.store.database import Store, StoreError, damage_message, is_damage
from benchtui.workbench.layout import Workbench, WorkbenchError, find_workbench

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

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad arguments: exit code 2."""


class CommandError(Exception):
    """The command could not do its work: exit code 1."""


@functools.cache
def parser_class() -> type[argparse.ArgumentParser]:
    """The argparse parser with one-line errors; argparse is imported here, so
    that the dashboard's start-up (see ``dashboard_args``) does without it."""
    import argparse

    class Parser(argparse.ArgumentParser):
        def error(self, message: str):  # one line, exit 2, no usage dump
            print(f"benchtui: error: {message} (see benchtui --help)", file=sys.stderr)
            raise SystemExit(EXIT_USAGE)

    return Parser


def __getattr__(name: str):
    if name == "Parser":  # engine.cli.Parser, as before
        return parser_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Context:
    """Lazily resolved workbench and store for a command."""

    def __init__(self, args: argparse.Namespace):
        self.args = args
        self._workbench: Workbench | None = None
        self._store: Store | None = None

    @property
    def workbench(self) -> Workbench:
        if self._workbench is None:
            try:
                self._workbench = find_workbench(
                    self.args.workbench, os.environ.get("BENCHTUI_WORKBENCH"), Path.cwd(),
                    store=self.args.store,
                )
            except WorkbenchError as exc:
                raise UsageError(str(exc)) from exc
        return self._workbench

    @property
    def store(self) -> Store:
        if self._store is None:
            try:
                # checked first: a damaged file gets one message, and no command writes into it
                self._store = Store(self.workbench.store_path, check=True)
            except StoreError as exc:
                raise CommandError(str(exc)) from exc
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()


def print_json(obj) -> None:
    print(json.dumps(obj, indent=2, sort_keys=False, default=str))


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
    said_everywhere(parser)
    return parser


JSON_HELP = "print JSON instead of text: stdout holds only the JSON"


def said_everywhere(parser: argparse.ArgumentParser) -> None:
    """Options every command shares get one help text wherever a command left it out."""
    import argparse

    for action in parser._actions:
        if "--json" in action.option_strings and not action.help:
            action.help = JSON_HELP
        if isinstance(action, argparse._SubParsersAction):
            for sub in set(action.choices.values()):
                said_everywhere(sub)


# A store larger than this is checked for damage by the dashboard's first rescan (in its
# worker) rather than before the first frame: quick_check reads every page (~3 ms/MB).
CHECK_BEFORE_START_BYTES = 8 * 1024 * 1024


def no_terminal() -> str | None:
    """Which of standard input and output is not a terminal, said as a clause, where
    the dashboard would draw into a file or a pipe and wait for keys that never come;
    None when both are terminals."""
    missing = [name for name, stream in (("standard input", sys.stdin), ("standard output", sys.stdout))
               if stream is None or not stream.isatty()]
    if len(missing) == 2:
        return "neither standard input nor standard output is a terminal"
    return f"{missing[0]} is not a terminal" if missing else None


def open_dashboard(ctx: Context) -> int:
    """The dashboard shows the stored index at once and rescans in a worker."""
    path = ctx.workbench.store_path
    big = path.is_file() and path.stat().st_size > CHECK_BEFORE_START_BYTES
    try:  # open (and migrate) here, so a broken store is a one-line error, not a screen
        Store(path, check=not big).close()
    except StoreError as exc:
        raise CommandError(str(exc)) from exc
    if (what := no_terminal()) is not None:  # after the store: its damage is the more urgent news
        raise CommandError(f"the dashboard needs a terminal, and {what} here: run benchtui in one, "
                           "or use its commands (benchtui --help), e.g. benchtui results")
    # Start-up allocates a great deal and frees almost nothing, so Python's
    # cyclic collector would run ~100 times (~10 ms) before the first frame for
    # nothing: it is off until the app has shown that frame (run_app turns it
    # back on then), or until the app returns.
    gc.disable()
    try:
        from benchtui.store.queries import MatrixPrefetch

        # the cells a first frame can show (a row per terminal line; the models whose
        # columns fit beside the 24-cell challenge column); the rest are read in the
        # matrix's worker right after that frame
        size = shutil.get_terminal_size()
        prefetch = MatrixPrefetch(path, first=size.lines, width=size.columns - 24)
        from benchtui.tui.app import run_app  # imported late: engine stays free of textual

        return run_app(ctx.workbench, prefetch=prefetch) or 0
    finally:
        gc.enable()


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
        where = ctx._workbench.store_path if ctx._workbench is not None else "store.db"
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
