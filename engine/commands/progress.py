"""Progress of a long command on stderr: a Rich bar saying what it is doing, on
a terminal only. Under ``--json``, or when stderr is a log or a pipe, nothing:
stdout stays the report (or the JSON) and stderr stays the errors."""
from __future__ import annotations

import sys


class Progress:
    """``with Progress("scanning", quiet=args.json) as p: p.step("model 3", completed=3, total=9)``."""

    def __init__(self, what: str, *, quiet: bool = False, total: float | None = None):
        self.what, self.total = what, total
        self.shown = not quiet and sys.stderr.isatty()
        self.bar = None

    def __enter__(self) -> Progress:
        if self.shown:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, SpinnerColumn, TextColumn, TimeElapsedColumn
            from rich.progress import Progress as Bar

            self.bar = Bar(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                           TimeElapsedColumn(), console=Console(stderr=True), transient=True,
                           redirect_stdout=False, redirect_stderr=False)  # the report is printed once it is gone
            self.bar.start()
            self.task = self.bar.add_task(self.what, total=self.total)
        return self

    def step(self, doing: str, *, completed: float | None = None, total: float | None = None) -> None:
        """Say what it is doing now (and how far it is, where known)."""
        if self.bar is not None:
            self.bar.update(self.task, description=f"{self.what}: {doing}", completed=completed,
                            **({"total": total} if total is not None else {}))

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None
