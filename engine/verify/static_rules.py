"""Static rules checked before anything of an answer runs: forbidden imports."""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from benchtui.verify.binding import python_files


@dataclass(frozen=True)
class Hit:
    relpath: str
    line: int
    module: str

    def __str__(self) -> str:
        return f"{self.relpath}:{self.line} imports {self.module}"


def forbidden_imports(folder: Path, forbidden: tuple[str, ...] | list[str]) -> list[Hit]:
    """Every import (also ``__import__``/``importlib.import_module`` with a
    literal) of a forbidden top-level package in the answer's .py files."""
    banned = set(forbidden)
    hits: list[Hit] = []
    if not banned:
        return hits
    for path in python_files(folder):
        rel = path.relative_to(folder).as_posix()
        try:
            tree = ast.parse(path.read_bytes(), filename=rel)
        except (SyntaxError, ValueError, OSError):
            continue
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                func = node.func
                fname = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if fname in {"__import__", "import_module"}:
                    names = [node.args[0].value]
            for name in names:
                if name.split(".")[0] in banned:
                    hits.append(Hit(rel, node.lineno, name))
    return hits
