"""Facts read out of a deck's own Python files without running them: the
deck's code imports torch and is the deck's, so it is parsed (``ast``), never
imported, and only literal values are taken from it."""
from __future__ import annotations

import ast
from pathlib import Path


class NotLiteral(ValueError):
    pass


def parse(path: Path) -> ast.Module | None:
    try:
        return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return None


def dtype_name(node: ast.AST) -> str | None:
    """``torch.float32`` -> 'float32'."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "torch":
        return node.attr
    return None


def literal(node: ast.AST, names: dict[str, object] | None = None):
    """The value of a literal expression; a name is looked up in ``names``
    (module-level literals); ``torch.<dtype>`` becomes the dtype's name."""
    names = names or {}
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    if isinstance(node, ast.Attribute) and dtype_name(node):
        return dtype_name(node)
    if isinstance(node, ast.Dict):
        return {literal(k, names): literal(v, names) for k, v in zip(node.keys, node.values) if k is not None}
    if isinstance(node, (ast.List, ast.Tuple)):
        return [literal(e, names) for e in node.elts]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -literal(node.operand, names)
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError) as exc:
        raise NotLiteral(ast.dump(node)[:80]) from exc


def module_literals(tree: ast.Module) -> dict[str, object]:
    """Every ``NAME = <literal>`` at module level, in order (later ones may use earlier ones)."""
    names: dict[str, object] = {}
    for node in tree.body:
        target, value = None, None
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            target, value = node.targets[0].id, node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            target, value = node.target.id, node.value
        if target is None:
            continue
        try:
            names[target] = literal(value, names)
        except NotLiteral:
            continue
    return names


def call_kwargs(call: ast.Call, names: dict[str, object] | None = None) -> dict[str, object]:
    out = {}
    for kw in call.keywords:
        if kw.arg is None:
            continue
        try:
            out[kw.arg] = literal(kw.value, names)
        except NotLiteral:
            continue
    return out


def loop_values(tree: ast.Module, variable: str) -> list[list]:
    """Every ``for <variable> in (<literals>)`` in the file: the tuples iterated."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.For) and isinstance(node.target, ast.Name) and node.target.id == variable:
            try:
                value = literal(node.iter)
            except NotLiteral:
                continue
            if isinstance(value, list):
                found.append(value)
    return found
