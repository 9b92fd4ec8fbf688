"""docs/ARCHITECTURE.md stays a true map: every module of engine/ and tui/ is
named in it, and every repository path it names exists."""
from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "ARCHITECTURE.md"
TOP = ("engine", "tui", "challenges", "models", "tests", "bench", "docs")
# a path in backticks: `engine/audit/syntax.py`, `tests/tui/`, `engine/store/migrations/mNNN_*.py`
PATH = re.compile(r"`((?:{})/[\w./*-]*)`".format("|".join(TOP)))
# migrations are named by their file name and listed as one pattern
MIGRATIONS = "engine/store/migrations/mNNN_*.py"


def named(text: str) -> set[str]:
    return set(PATH.findall(text))


def holds_code(path: Path) -> bool:
    """More than a docstring: a package's ``__init__.py`` that is only one names its room, not a module."""
    body = ast.parse(path.read_text(encoding="utf-8")).body
    return any(not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)) for n in body)


def modules() -> set[str]:
    out = set()
    for top in ("engine", "tui"):
        for path in (REPO / top).rglob("*.py"):
            rel = path.relative_to(REPO)
            if "__pycache__" not in rel.parts and (path.name != "__init__.py" or holds_code(path)):
                out.add(rel.as_posix())
    return out


def exists(path: str) -> bool:
    pattern = path.replace("mNNN", "m[0-9][0-9][0-9]")
    return any(REPO.glob(pattern)) if "*" in pattern else (REPO / path).exists()


def missing_modules(text: str) -> list[str]:
    mentioned = named(text)
    return sorted(m for m in modules() if m not in mentioned
                  and not (m.startswith("engine/store/migrations/m") and MIGRATIONS in mentioned))


def test_every_module_is_on_the_map():
    assert missing_modules(DOC.read_text(encoding="utf-8")) == []


def test_every_path_the_map_names_exists():
    assert sorted(p for p in named(DOC.read_text(encoding="utf-8")) if not exists(p)) == []


def test_the_checks_see_a_module_left_out_and_a_path_made_up():
    text = DOC.read_text(encoding="utf-8")
    assert "engine/audit/syntax.py" in missing_modules(text.replace("`engine/audit/syntax.py`", "syntax"))
    assert "engine/store/migrations/m001_foundation.py" in missing_modules(text.replace(f"`{MIGRATIONS}`", ""))
    assert not exists("engine/verify/search.py") and exists(MIGRATIONS)
    assert "engine/verify/search.py" in named(text + "\n- `engine/verify/search.py` searching\n")
