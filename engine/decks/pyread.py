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


def _module_file(root: Path, module: str) -> Path | None:
    """``src.eval.x`` under ``root``: its .py file or its package's __init__.py, or None."""
    base = root.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _imports(tree: ast.Module, module: str, is_package: bool, package: str) -> set[str]:
    """The modules of ``package`` that ``module`` imports anywhere in its tree (absolute
    ``src.x`` and relative ``.x``), each with the names a ``from`` import may take as submodules."""
    out: set[str] = set()
    here = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.split(".")[0] == package)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = here.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1])
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            if target.split(".")[0] != package:
                continue
            out.add(target)
            out.update(f"{target}.{a.name}" for a in node.names if a.name != "*")
    return out


def import_closure(root: Path, module: str) -> tuple[list[str], list[str]]:
    """What importing ``module`` (``src.eval.property_stress``) from ``root`` runs of its
    own package: every package ``__init__.py`` on the way and every module imported from
    them, followed through, parsed and never run. Returns (the files found, relative to
    ``root``; the modules named and not there, as the file each would be), so a part of
    the deck that another part imports is known to be needed by both."""
    package = module.split(".")[0]
    found: list[str] = []
    missing: list[str] = []
    seen: set[str] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        parts = name.split(".")
        # importing a.b.c runs a/__init__.py and a/b/__init__.py first
        chain = [".".join(parts[:i]) for i in range(1, len(parts) + 1)]
        for step in chain:
            if step in seen:
                continue
            seen.add(step)
            path = _module_file(root, step)
            if path is None:
                # `from x import name` may take a name x defines (x a module, or a
                # package binding it): only a name no one defines counts as missing
                parent = _module_file(root, step.rpartition(".")[0]) if "." in step else None
                # (a name under a missing module: that module is the one named missing)
                attribute = "." in step and (parent is None or parent.name != "__init__.py"
                                             or _defines(parent, step.rpartition(".")[2]))
                if not attribute:
                    missing.append(step.replace(".", "/") + ".py")
                break
            found.append(path.relative_to(root).as_posix())
            tree = parse(path)
            if tree is not None:
                todo.extend(sorted(_imports(tree, step, path.name == "__init__.py", package)))
    return sorted(set(found)), sorted(set(missing))


def _defines(init: Path, name: str) -> bool:
    """Whether a package's __init__.py binds ``name`` itself (a def, a class, an assignment or an import)."""
    tree = parse(init)
    if tree is None:
        return False
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return True
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return True
        if isinstance(node, (ast.Import, ast.ImportFrom)) and any((a.asname or a.name.split(".")[0]) == name
                                                                  for a in node.names):
            return True
    return False
