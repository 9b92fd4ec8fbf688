"""What a challenge file imports of benchtui: only ``benchtui.api`` is allowed
(``engine`` and ``tui`` were its internal names before it was one package)."""
from __future__ import annotations

import ast
from pathlib import Path

PUBLIC = "benchtui.api"
OLD_NAMES = ("engine", "tui")
IMPORTERS = ("import_module", "__import__")  # importlib.import_module("..."), __import__("...")


def _allowed(module: str) -> bool:
    top = module.split(".")[0]
    if top == "benchtui":
        return module == PUBLIC
    return top not in OLD_NAMES


def _imported(node: ast.AST) -> list[str]:
    """The module names ``node`` imports (none for any other node)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        if node.level or not node.module:
            return []
        if node.module == "benchtui":  # from benchtui import api
            return [f"benchtui.{alias.name}" for alias in node.names]
        return [node.module]
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
            and isinstance(node.args[0].value, str):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name in IMPORTERS:
            return [node.args[0].value]
    return []


def reaches_past_api(source: str, name: str = "<source>") -> list[str]:
    """'NAME:LINE imports MODULE' for each import of benchtui other than benchtui.api, or of engine/tui."""
    tree = ast.parse(source, filename=name)
    return [f"{name}:{node.lineno} imports {module}" for node in ast.walk(tree)
            for module in _imported(node) if not _allowed(module)]


def files_reaching_past_api(folder: Path) -> list[str]:
    return [hit for path in sorted(folder.rglob("*.py"))
            for hit in reaches_past_api(path.read_text(encoding="utf-8"), path.relative_to(folder).as_posix())]
