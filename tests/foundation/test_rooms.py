"""Rooms keep to themselves: each stands on a floor and imports only rooms on
the floors below it, a module uses another's public names only, the dashboard
does not import the CLI's room, the audit's operators share one syntax-tree
module instead of copies, bench/ loads no test file by path, and the skip for a
machine without a sandbox lives in tests/conftest.py alone; within a room, no two
modules import each other."""
from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = {"engine": "benchtui", "tui": "benchtui.tui"}
ALLOWED_REACHES: set[tuple[str, str]] = set()  # none: every room uses only the public names of the others

# The package as the wheel installs it, ground floor first. A room is a folder of
# benchtui (benchtui.store, benchtui.tui) or one of its top-level modules (benchtui.cli);
# the package's own __init__ holds only the version, which any room may read. A room imports only rooms on
# lower floors: an import inside a function, under TYPE_CHECKING or named as a string
# for importlib is an arrow too. docs/ARCHITECTURE.md draws the same floors.
FLOORS: list[set[str]] = [
    {"records", "text", "host"},
    {"store", "challenges"},
    {"transcripts", "verify"},
    {"workbench", "decks", "api"},
    {"runner"},
    {"audit", "cluster"},
    {"grading", "authoring"},
    {"judge"},
    {"tui"},
    {"commands"},
    {"cli"},
    {"__main__"},
]
MODULE_NAME = re.compile(r"benchtui(\.[a-z_][a-z0-9_]*)+")


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


def room(module: str) -> str:
    """benchtui.store.queries -> store; benchtui -> benchtui."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def arrows(tree: ast.AST, own: str) -> list[tuple[str, int]]:
    """(benchtui module, line) for each import in a file, wherever it stands, relative ones
    resolved, and each string that names a benchtui module (importlib.import_module's)."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = own.split(".")[: len(own.split(".")) - node.level] if node.level else []
            module = ".".join([*base, node.module] if node.module else base)
            out.append((module, node.lineno))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and MODULE_NAME.fullmatch(node.value):
            out.append((node.value, node.lineno))
    return [(m, line) for m, line in out if m.startswith("benchtui.")]


def back_arrows(folders: tuple[str, ...] = ("engine", "tui")) -> list[str]:
    """Every import of a room on the same floor or one above: 'file:line: room -> room'."""
    floor = {name: level for level, rooms in enumerate(FLOORS) for name in rooms}
    found = []
    for path, tree in sources(*folders):
        own = module_name(path)
        if own is None:
            continue
        if path.name == "__init__.py":
            own += ".__init__"  # relative imports count from the package itself
        here = room(own.removesuffix(".__init__"))
        if here == "benchtui":
            continue
        for module, line in arrows(tree, own):
            there = room(module)
            if there != here and floor.get(there, -1) >= floor.get(here, len(FLOORS)):
                found.append(f"{path.relative_to(REPO).as_posix()}:{line}: {here} -> {there}")
    return found


def test_every_room_stands_on_one_floor():
    rooms = {room(module_name(path)) for path, _ in sources("engine", "tui")} - {"benchtui"}
    placed = [name for level in FLOORS for name in level]
    assert len(placed) == len(set(placed)), "a room on two floors"
    assert rooms - set(placed) == set(), "a new room: give it a floor in FLOORS and in docs/ARCHITECTURE.md"
    assert set(placed) - rooms == set(), "FLOORS names a room that is not there"


def test_no_import_runs_back_up_a_floor():
    """A room imports only rooms below it, so no two rooms are tied both ways, nothing
    imports the cli, and a reader of the floors knows what a change can reach."""
    assert back_arrows() == []


def test_the_floor_check_sees_every_spelling(tmp_path):
    tree = ast.parse("from benchtui.cli import main\nimport benchtui.runner.sandbox\n"
                     "def f():\n    from ..workbench import caps\n"
                     "COMMANDS = ['benchtui.commands.run_cmds', 'benchtui: not a module']\n")
    assert arrows(tree, "benchtui.store.queries") == [
        ("benchtui.cli", 1), ("benchtui.runner.sandbox", 2), ("benchtui.workbench", 4), ("benchtui.commands.run_cmds", 5)]


def test_the_architecture_doc_draws_the_same_floors():
    """docs/ARCHITECTURE.md's drawing: one line per floor, top first, `N  room  room`."""
    text = (REPO / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    drawing = text.split("## The floors", 1)[1].split("```", 2)[1]
    drawn = {int(m[1]): set(re.findall(r"`([^`]+)`", m[2])) for m in re.finditer(r"^\s*(\d+)\s+(.*)$", drawing, re.M)}
    assert drawn == dict(enumerate(FLOORS))


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


def module_arrows(tree: ast.AST, own: str, known: set[str]) -> set[str]:
    """The benchtui modules a file imports (``from pkg import mod`` names ``pkg.mod``), at its
    head or inside a function; an import only for type checking is left out: it ties no
    module to another when the code runs."""
    typing_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
                   for n in ast.walk(node)}
    out = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = own.split(".")[: len(own.split(".")) - node.level] if node.level else []
            module = ".".join([*base, node.module] if node.module else base)
            out |= {f"{module}.{a.name}" if f"{module}.{a.name}" in known else module for a in node.names}
    return {m for m in out if m in known and m != own}


def two_way_pairs(folders: tuple[str, ...] = ("engine", "tui")) -> list[str]:
    """Every pair of modules that import each other: 'a <-> b'."""
    files = [(module_name(path), path, tree) for path, tree in sources(*folders)]
    known = {m for m, _, _ in files if m}
    imports = {m: module_arrows(tree, m + (".__init__" if path.name == "__init__.py" else ""), known)
               for m, path, tree in files if m}
    return sorted(f"{a} <-> {b}" for a, targets in imports.items() for b in targets if a < b and a in imports.get(b, ()))


def test_no_two_modules_import_each_other():
    """Within a room too, one module stands below the other: no pair imports each other, so
    neither needs an import hidden inside a function to load, and a reader of a file's head
    sees every tie it has."""
    assert two_way_pairs() == []


def test_the_pair_check_sees_an_import_inside_a_function(tmp_path):
    folder = tmp_path / "engine"
    folder.mkdir()
    (folder / "one.py").write_text("from benchtui import two\n")
    (folder / "two.py").write_text("def f():\n    from benchtui.one import g\n")
    (folder / "three.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from benchtui import one\n")
    trees = {p.stem: ast.parse(p.read_text()) for p in folder.glob("*.py")}
    known = {"benchtui.one", "benchtui.two", "benchtui.three"}
    assert module_arrows(trees["two"], "benchtui.two", known) == {"benchtui.one"}
    assert module_arrows(trees["one"], "benchtui.one", known) == {"benchtui.two"}
    assert module_arrows(trees["three"], "benchtui.three", known) == set()


def test_verify_imports_nothing_of_the_runner_that_drives_it():
    """The runner drives the checks (runner -> verify); the checks' side needs
    nothing back from it, so the two rooms are not tied both ways."""
    back = {(path.relative_to(REPO).as_posix(), m) for path, tree in sources("engine/verify")
            for m in imported(tree) if m.startswith("benchtui.runner")}
    assert back == set()
