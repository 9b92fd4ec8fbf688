"""A challenge's contract table: every contract its prompt states, and the check that exercises it.

``challenges/<id>/contracts.toml`` lists what PROMPT.md states an answer
must do, one ``[[contract]]`` each::

    [[contract]]
    kind = "default"                       # see KINDS
    says = "eps defaults to 1e-5"          # PROMPT.md's own words (case, whitespace, Markdown marks aside)
    checks = ["eps_default"]               # the checks that exercise it
    # or, instead of checks: not_checkable = "why no run can judge it"

A point the prompt leaves to the answer, where an audit's operator writes a
change the checks cannot (and must not) fail, is an ``[[open]]`` row: the
audit counts such a mutant as allowed by the prompt, with the row's reason,
when one of its ``says`` is in the prompt the answer was given::

    [[open]]
    operator = "narrow_dtype"              # the audit operator whose mutants it covers
    writes = "allocated in float32"        # words of the mutant's description it must hold
    says = ["Path A (MLX): ..."]           # the prompt's words that leave the point open (one per version)
    point = "the training loop's precision: ..."   # what is left to the answer, and why

The requirements table (``[requirements]``) says what a verdict covers; this
table is finer: each default, dtype, shape, special value and reported figure
the prompt fixes, so a contract no case exercises shows as a row with no check.
``benchtui challenge check`` fails a table with a contract that names no check
and gives no reason, a check name the suite does not record, or words that are
not the prompt's.
"""
from __future__ import annotations

import ast
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchtui.challenges import coverage

FILENAME = "contracts.toml"
# what a contract fixes: the kinds of stated contract an answer can break
KINDS = {
    "requirement": "a behaviour the prompt asks for",
    "default": "an optional argument's default value",
    "dtype": "an output's dtype (or one that follows the input's)",
    "shape": "an output's exact shape",
    "special": "a special value or token (ids, -inf, EOS, empty input)",
    "figure": "a figure the answer reports (recomputed by the checker, or labelled the answer's own)",
    "size": "a size relation (remainders against tiles or blocks, capacity, the named model's configuration)",
    "numeric": "a numerical edge (ties, overflow, zero groups)",
}


@dataclass(frozen=True)
class Contract:
    kind: str
    says: str
    checks: tuple[str, ...]
    not_checkable: str

    def as_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "says": self.says, "checks": list(self.checks),
                "not_checkable": self.not_checkable}


@dataclass(frozen=True)
class OpenPoint:
    operator: str
    writes: str
    says: tuple[str, ...]
    point: str

    def covers(self, operator: str, description: str, prompt: str) -> bool:
        """A mutant of ``operator`` writing ``description``, under ``prompt`` (the answer's)."""
        text = coverage.words(prompt)
        return operator == self.operator and self.writes in description and \
            any(coverage.words(s) in text for s in self.says)


class TableError(ValueError):
    """contracts.toml cannot be read as a table of contracts."""


def table_path(folder: Path) -> Path:
    return folder / FILENAME


def load(folder: Path) -> list[Contract] | None:
    """The table of ``folder`` (a challenge folder), ``None`` when it has none; ``TableError`` when unreadable."""
    path = table_path(folder)
    if not path.is_file():
        return None
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise TableError(f"{FILENAME} cannot be read: {exc}") from exc
    rows = raw.get("contract")
    if not isinstance(rows, list) or not rows:
        raise TableError(f"{FILENAME} has no [[contract]] rows")
    out = []
    for i, row in enumerate(rows, 1):
        if not isinstance(row, dict):
            raise TableError(f"{FILENAME}: contract {i} is not a table")
        checks = row.get("checks", [])
        if not isinstance(checks, list) or not all(isinstance(c, str) for c in checks):
            raise TableError(f"{FILENAME}: contract {i}: checks must be a list of check names")
        out.append(Contract(str(row.get("kind", "")), str(row.get("says", "")), tuple(checks),
                            str(row.get("not_checkable", ""))))
    return out


def load_open(folder: Path) -> list[OpenPoint]:
    """The ``[[open]]`` rows of ``folder``'s table (none when it has no table); ``TableError`` when unreadable."""
    path = table_path(folder)
    if not path.is_file():
        return []
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise TableError(f"{FILENAME} cannot be read: {exc}") from exc
    out = []
    for i, row in enumerate(raw.get("open") or [], 1):
        if not isinstance(row, dict):
            raise TableError(f"{FILENAME}: open point {i} is not a table")
        says = row.get("says", [])
        says = [says] if isinstance(says, str) else says
        if not isinstance(says, list) or not all(isinstance(s, str) for s in says):
            raise TableError(f"{FILENAME}: open point {i}: says must be the prompt's words (a string or a list)")
        out.append(OpenPoint(str(row.get("operator", "")), str(row.get("writes", "")), tuple(says),
                             str(row.get("point", ""))))
    return out


def open_problems(points: list[OpenPoint], prompt: str, operators: set[str]) -> list[str]:
    """What makes an open point unsound: an unknown operator, no words of the mutants it covers,
    no reason, or none of its words in the challenge's own prompt."""
    text = coverage.words(prompt)
    out = []
    for i, p in enumerate(points, 1):
        label = f"open point {i} ({p.point[:50]!r})"
        if p.operator not in operators:
            out.append(f"{label}: operator {p.operator!r} is not an audit operator")
        if not p.writes.strip():
            out.append(f"{label}: writes says nothing (words of the mutants' description)")
        if not p.point.strip():
            out.append(f"{label}: no point says what the prompt leaves open")
        if not any(coverage.words(s) in text for s in p.says if s.strip()):
            out.append(f"{label}: none of its says is the prompt's own words (quote PROMPT.md)")
    return out


def problems(contracts: list[Contract], prompt: str, check_names: set[str]) -> list[str]:
    """What makes the table unsound: an unknown kind, words not the prompt's, a contract with
    neither a check nor a reason (or both), a check name the suite does not record."""
    text = coverage.words(prompt)
    out = []
    for i, c in enumerate(contracts, 1):
        label = f"contract {i} ({c.says[:50]!r})"
        if c.kind not in KINDS:
            out.append(f"{label}: kind {c.kind!r} is not one of {', '.join(sorted(KINDS))}")
        if not c.says.strip():
            out.append(f"{label}: says nothing (quote PROMPT.md)")
        elif coverage.words(c.says) not in text:
            out.append(f"{label}: not the prompt's own words (quote PROMPT.md)")
        if not c.checks and not c.not_checkable.strip():
            out.append(f"{label}: no check exercises it and no reason says why none can")
        if c.checks and c.not_checkable.strip():
            out.append(f"{label}: names checks and says it is not checkable")
        unknown = [n for n in c.checks if n not in check_names]
        if unknown:
            out.append(f"{label}: no such check: {', '.join(unknown)}")
    return out


def static_check_names(*sources: Path) -> set[str]:
    """Every plain string in the suite's source files: the check names a suite that is not
    run here (a CUDA challenge's) may record. Looser than a run's names, never stricter."""
    names: set[str] = set()
    for path in sources:
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, UnicodeDecodeError):
            continue
        names.update(n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str))
    return names


def recorded_names(checks: list[dict[str, Any]]) -> set[str]:
    """The names a run recorded, with and without a ``prefix::``."""
    names = {c["name"] for c in checks}
    return names | {n.split("::")[-1] for n in names}
