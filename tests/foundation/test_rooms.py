"""Rooms keep to themselves: a module uses another's public names only, the
dashboard does not import the CLI's room, the audit's operators share one
syntax-tree module instead of copies, bench/ loads no test file by path, and
the skip for a machine without a sandbox lives in tests/conftest.py alone."""
from __future__ import annotations

import ast
import inspect
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = {"engine": "benchtui", "tui": "benchtui.tui"}
# One reach left for the store's query functions to replace: judge_import writes
# grades through grades' private _write.
ALLOWED_REACHES: set[tuple[str, str]] = set()  # none: every room uses only the public names of the others


def sources(*folders: str):
    for folder in folders:
        for path in sorted((REPO / folder).rglob("*.py")):
            if "__pycache__" not in path.parts:
                yield path, ast.parse(path.read_text(encoding="utf-8"), str(path))


def module_name(path: Path) -> str | None:
    rel = path.relative_to(REPO)
    if rel.parts[0] not in PACKAGE:
        return None
    parts = [PACKAGE[rel.parts[0]], *rel.with_suffix("").parts[1:]]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(tree: ast.AST) -> set[str]:
    """Every benchtui module (and name) a file imports."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            out |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
    return {m for m in out if m.startswith("benchtui")}


def private_reaches(path: Path, tree: ast.AST) -> list[str]:
    """``from benchtui.x import _name`` and ``x._name`` on an imported benchtui module,
    where ``x`` is not the file's own module."""
    own = module_name(path)
    found, aliases = [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("benchtui"):
            for a in node.names:
                if a.name.startswith("_") and not a.name.startswith("__") and node.module != own:
                    found.append(f"{node.module}.{a.name}")
                aliases[a.asname or a.name] = f"{node.module}.{a.name}"
        elif isinstance(node, ast.Import):
            aliases.update({a.asname: a.name for a in node.names if a.asname and a.name.startswith("benchtui")})
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases \
                and node.attr.startswith("_") and not node.attr.startswith("__") and aliases[node.value.id] != own:
            found.append(f"{aliases[node.value.id]}.{node.attr}")
    return found


def test_no_module_uses_another_modules_private_names():
    found = {(path.relative_to(REPO).as_posix(), name) for path, tree in sources("engine", "tui", "bench")
             for name in private_reaches(path, tree)}
    assert sorted(found - ALLOWED_REACHES) == []


def test_the_reach_check_sees_both_spellings(tmp_path):
    tree = ast.parse("from benchtui.audit import numeric\nfrom benchtui.audit.numeric import _bare\n"
                     "numeric._paren('x')\nnumeric.code(1)\n")
    assert sorted(private_reaches(REPO / "engine" / "audit" / "flow.py", tree)) == [
        "benchtui.audit.numeric._bare", "benchtui.audit.numeric._paren"]


def test_the_dashboard_does_not_import_the_cli_room():
    bad = {(path.name, m) for path, tree in sources("tui") for m in imported(tree)
           if m.startswith(("benchtui.commands", "benchtui.cli"))}
    assert bad == set()


def test_deck_readers_do_not_import_challenge_authoring():
    bad = {(path.name, m) for path, tree in sources("engine/decks") for m in imported(tree)
           if m.startswith("benchtui.authoring")}
    assert bad == set()


def test_the_audit_operators_share_one_copy_of_each_syntax_helper():
    from benchtui.audit import syntax

    shared = {name for name, f in vars(syntax).items() if inspect.isfunction(f) and f.__module__ == syntax.__name__}
    assert {"bare", "call_name", "code", "names_in", "paren", "plus", "targets"} <= shared
    copies = {(path.name, node.name) for path, tree in sources("engine/audit") if path.name != "syntax.py"
              for node in tree.body if isinstance(node, ast.FunctionDef) and node.name.lstrip("_") in shared}
    assert copies == set()


def test_bench_loads_no_test_file_by_path():
    bad = [f"{path.name}:{node.lineno}" for path, tree in sources("bench") for node in ast.walk(tree)
           if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "spec_from_file_location"
           and any(isinstance(c, ast.Constant) and c.value == "tests" for c in ast.walk(node))]
    assert bad == []


def test_only_conftest_skips_a_test_for_want_of_a_sandbox():
    """The `sandbox` marker (tests/conftest.py) skips, with the reason, where no
    isolating layer works; a test that catches SandboxUnavailable itself is a copy
    of that skip (test_sandbox_layers tests the exception itself)."""
    bad = [f"{path.relative_to(REPO)}:{node.lineno}" for path, tree in sources("tests")
           if path.name not in ("conftest.py", "test_sandbox_layers.py")
           for node in ast.walk(tree) if isinstance(node, ast.ExceptHandler) and node.type is not None
           and "SandboxUnavailable" in ast.unparse(node.type)]
    assert bad == []


def test_verify_imports_nothing_of_the_runner_that_drives_it():
    """The runner drives the checks (runner -> verify); the checks' side needs
    nothing back from it, so the two rooms are not tied both ways."""
    back = {(path.relative_to(REPO).as_posix(), m) for path, tree in sources("engine/verify")
            for m in imported(tree) if m.startswith("benchtui.runner")}
    assert back == set()
