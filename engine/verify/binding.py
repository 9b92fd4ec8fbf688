"""Find a submission's entry points without importing every file.

Top-level functions and classes are located by parsing each .py file (AST);
only the module that defines the chosen name is imported, with the answer
folder on ``sys.path`` so imports between the answer's files work.
"""
from __future__ import annotations

import ast
import importlib.util
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

# Files an answer ships to exercise itself; never preferred for binding.
# The name the answer's process imports a reviewer's adapter under (engine.runner.answer_server).
ADAPTER_MODULE = "benchtui_adapter"

SELF_TEST_PATTERNS = (r"^test_.*\.py$", r".*_test\.py$", r"^demo.*\.py$", r"^bench(mark)?.*\.py$", r"^conftest\.py$")


class Unbound(Exception):
    """No entry point found; ``looked_for`` and ``searched`` explain why."""

    def __init__(self, looked_for: list[str], searched: list[str], detail: str = ""):
        self.looked_for, self.searched = looked_for, searched
        files = ", ".join(searched) if searched else "no .py files"
        super().__init__(f"looked for {' / '.join(looked_for)} in {files}" + (f"; {detail}" if detail else ""))


@dataclass
class Definition:
    file: Path
    relpath: str
    name: str
    kind: str  # "function" or "class"
    lineno: int
    params: list[str] = field(default_factory=list)
    methods: list[str] = field(default_factory=list)


def squash(name: str) -> str:
    """Compare names loosely: 'LayerNorm_Backward' == 'layernormbackward'."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def is_self_test(relpath: str) -> bool:
    name = Path(relpath).name
    return any(re.match(p, name) for p in SELF_TEST_PATTERNS)


def python_files(folder: Path) -> list[Path]:
    files = [p for p in folder.rglob("*.py") if "__pycache__" not in p.parts and not any(part.startswith(".") for part in p.relative_to(folder).parts)]
    return sorted(files, key=lambda p: (is_self_test(p.name), len(p.relative_to(folder).parts), str(p)))


def definitions(folder: Path) -> list[Definition]:
    """Top-level defs and classes of every parseable .py file in ``folder``."""
    found = []
    for path in python_files(folder):
        try:
            tree = ast.parse(path.read_bytes(), filename=str(path))
        except (SyntaxError, ValueError, OSError):
            continue
        rel = path.relative_to(folder).as_posix()
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                params = [a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs]
                found.append(Definition(path, rel, node.name, "function", node.lineno, params))
            elif isinstance(node, ast.ClassDef):
                methods = [n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
                found.append(Definition(path, rel, node.name, "class", node.lineno, methods=methods))
            elif isinstance(node, ast.Assign):  # `forward = LayerNorm.forward` style aliases
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        found.append(Definition(path, rel, target.id, "assign", node.lineno))
    return found


def load_module(path: Path, name: str) -> ModuleType:
    """Execute a .py file as module ``name`` (registered in sys.modules)."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def import_file(folder: Path, path: Path) -> ModuleType:
    """Import an answer file as a module named after its path (in the answer's
    own process: the checker never imports answer code)."""
    rel = path.relative_to(folder).with_suffix("")
    for entry in (str(folder), str(path.parent)):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    return load_module(path, ".".join(rel.parts))


class Binder:
    """Looks up names across an answer folder (by parsing, never importing) and
    has the answer's process import what it finds: ``importer(relpath)``
    returns the module, a proxy when it lives in another process."""

    def __init__(self, folder: Path, importer: Callable[[str], Any] | None = None):
        self.folder = Path(folder)
        self.importer = importer
        self._defs: list[Definition] | None = None
        self._modules: dict[Path, ModuleType] = {}
        # Several implementations in one folder: the file bound first (relpath),
        # and every lookup made, to find the other files defining the same names.
        self.prefer_file: str | None = None
        self.lookups: list[tuple[tuple[str, ...], str | None, tuple[str, ...], Definition | None]] = []

    @property
    def defs(self) -> list[Definition]:
        if self._defs is None:
            found = definitions(self.folder)
            if self.prefer_file:  # stable: the preferred file's definitions first
                found.sort(key=lambda d: d.relpath != self.prefer_file)
            self._defs = found
        return self._defs

    def searched(self) -> list[str]:
        return [p.relative_to(self.folder).as_posix() for p in python_files(self.folder)]

    def find(self, names: Iterable[str], *, kind: str | None = None, methods: Iterable[str] = (),
             include_self_tests: bool = False) -> Definition | None:
        """First definition matching ``names`` exactly, then loosely.

        ``kind`` limits to "function" or "class"; ``methods`` requires a class
        to define all of them.
        """
        names = list(names)

        def ok(d: Definition) -> bool:
            if kind and d.kind != kind and not (kind == "function" and d.kind == "assign"):
                return False
            if methods and not set(methods) <= set(d.methods):
                return False
            return include_self_tests or not is_self_test(d.relpath)

        found = None
        for match in (lambda d, n: d.name == n, lambda d, n: squash(d.name) == squash(n)):
            for name in names:
                for d in self.defs:
                    if ok(d) and match(d, name):
                        found = d
                        break
                if found:
                    break
            if found:
                break
        self.lookups.append((tuple(names), kind, tuple(methods), found))
        return found

    def implementations(self) -> list[str]:
        """Non-test files (relpaths) that could have answered this suite's lookups:
        the file each lookup bound, then every other file defining a name that a
        bound lookup asked for (exactly or loosely), in the binder's file order."""
        bound = [d.relpath for _, _, _, d in self.lookups if d is not None]
        files = list(dict.fromkeys(bound))
        for names, kind, methods, d in self.lookups:
            if d is None:
                continue
            wanted = {squash(n) for n in names}
            for other in self.defs:
                if other.relpath in files or is_self_test(other.relpath) or squash(other.name) not in wanted:
                    continue
                if kind and other.kind != kind and not (kind == "function" and other.kind == "assign"):
                    continue
                if methods and not set(methods) <= set(other.methods):
                    continue
                files.append(other.relpath)
        return files

    def classes_with(self, methods: Iterable[str]) -> list[Definition]:
        return [d for d in self.defs if d.kind == "class" and set(methods) <= set(d.methods) and not is_self_test(d.relpath)]

    def module(self, path: Path) -> ModuleType:
        """Import an answer file as a module named after its path."""
        path = Path(path)
        if path not in self._modules:
            if self.importer is not None:
                self._modules[path] = self.importer(path.relative_to(self.folder).as_posix())
            else:
                self._modules[path] = import_file(self.folder, path)
        return self._modules[path]

    def load(self, d: Definition) -> Any:
        return getattr(self.module(d.file), d.name)

    def bind(self, names: Iterable[str], *, kind: str | None = None, methods: Iterable[str] = ()) -> Any:
        """Import and return the object for the first match, or raise Unbound."""
        d = self.find(names, kind=kind, methods=methods)
        if d is None:
            what = list(names) + ([f"class with {', '.join(methods)}"] if methods else [])
            raise Unbound(what, self.searched())
        return self.load(d)
