"""Opening the dashboard from a command: with no subcommand, and after `demo` has copied the demo
workbench out."""
from __future__ import annotations

import gc
import shutil
import sys

from benchtui.commands.context import CommandError, Context
from benchtui.store.database import Store, StoreError

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
        from benchtui.tui.app import run_app  # imported late: the commands' start-up stays free of textual

        return run_app(ctx.workbench, prefetch=prefetch) or 0
    finally:
        gc.enable()
