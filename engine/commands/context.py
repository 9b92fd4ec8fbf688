"""What every command shares: its exit codes and the two errors that set them, the workbench and
store it works on (resolved when first used), the check of the model and challenge names it is
given, and JSON on stdout. `benchtui.cli` catches the errors; the commands raise them."""
from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchtui.store.database import Store, StoreError
from benchtui.text.suggest import suggest
from benchtui.workbench.layout import Workbench, WorkbenchError, find_workbench

if TYPE_CHECKING:  # challenges.definition (and tomllib) is not loaded before the dashboard's first frame
    import argparse
    from types import SimpleNamespace

    from benchtui.challenges.definition import Challenge

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad arguments: exit code 2."""


class CommandError(Exception):
    """The command could not do its work: exit code 1."""


# The commands that may start a store at a --store path that does not exist yet: they build the index.
STORE_MAKERS = frozenset({"scan", "run", "import"})


class Context:
    """Lazily resolved workbench and store for a command."""

    def __init__(self, args: argparse.Namespace | SimpleNamespace):
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
    def resolved_workbench(self) -> Workbench | None:
        """The workbench if a command has found it already; None otherwise (nothing is looked up)."""
        return self._workbench

    @property
    def store(self) -> Store:
        if self._store is None:
            given = getattr(self.args, "store", None)
            if given and not Path(given).exists():
                # a mistyped --store never becomes a new empty store (parent folders included)
                # somewhere on the disk: only a command that builds the index may start one,
                # in a folder that is there
                parent = Path(given).absolute().parent
                if not parent.is_dir():
                    raise UsageError(f"no store at {given}: its folder {parent} does not exist")
                if getattr(self.args, "command", None) not in STORE_MAKERS:
                    raise UsageError(f"no store at {given}; `benchtui scan --store {given}` makes one there")
            try:
                # checked first: a damaged file gets one message, and no command writes into it
                self._store = Store(self.workbench.store_path, check=True)
            except StoreError as exc:
                raise CommandError(str(exc)) from exc
        return self._store

    def challenge(self, name: str) -> Challenge:
        """The workbench's challenge with this id or display name; an unknown name is a usage error."""
        from benchtui.challenges.definition import challenge_for_name

        found = challenge_for_name(name, self.workbench.challenges)
        if found is None:
            raise UsageError(f"unknown challenge {name!r}; {suggest(name, self.workbench.challenges, 'known challenges')}")
        return found

    def challenge_ids(self, names: Iterable[str]) -> list[str]:
        """The ids of the challenges ``-c`` names, in the order given."""
        return [self.challenge(name).id for name in names]

    def check_models(self, models: Iterable[str], known: Iterable[str] | None = None) -> None:
        """Every name in ``models`` is a known model (default: the store's); else a usage error."""
        known = list(self.store.model_names() if known is None else known)
        for m in models:
            if m not in known:
                raise UsageError(f"unknown model {m!r}; {suggest(m, known, 'known models')}")

    def close(self) -> None:
        if self._store is not None:
            self._store.close()


def print_json(obj: Any) -> None:
    print(json.dumps(obj, indent=2, sort_keys=False, default=str))
