"""Only the store room (engine/store/) speaks SQL: every other room reads and
writes the store through query functions the store room owns, so a schema
change is found in one place.

The scan reads each module's syntax tree (nothing is imported) and names each
place outside engine/store/ that
- calls ``execute``/``executemany``/``executescript`` on anything, or
  ``query`` on a store or connection (Textual's ``query`` takes a CSS selector);
- reaches a store's raw connection (``store.conn``) or its sqlite-utils view
  (``store.db``, ``db["table"]``, ``.table(...)``), or opens one itself;
- holds a string that is SQL (it starts with SELECT, INSERT, UPDATE ... SET,
  DELETE FROM, CREATE, PRAGMA, WITH ... AS, BEGIN, ...) or a piece of one that
  names a table (``from runs``, ``join grades``, ``where ... in (select``).
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
STORE_ROOM = REPO / "engine" / "store"
SCANNED = (REPO / "engine", REPO / "tui")

RAW_CALLS = {"execute", "executemany", "executescript"}
# Receivers whose ``query`` is SQL (Store.query), not Textual's DOM query.
STORE_NAMES = {"store", "conn", "connection", "db", "cursor", "cur"}


def _tables() -> set[str]:
    """The store's table names, read from its migrations' text."""
    text = "\n".join(p.read_text() for p in (STORE_ROOM / "migrations").glob("m*.py"))
    names = set(re.findall(r"""db\[\s*["'](\w+)["']\s*\]""", text))
    names |= set(re.findall(r"create\s+table\s+(?:if\s+not\s+exists\s+)?(\w+)", text, re.IGNORECASE))
    return {n for n in names if not n.startswith("_")}


TABLES = _tables()
_TABLE = "(" + "|".join(sorted(TABLES)) + r")\b"

SQL_START = re.compile(
    r"""^\s*\(?\s*(
        select\s+(\d+|\{\}|\*)(\s|,|$)          # select 1 / select {cols} / select *
      | select\s[^;]*?\bfrom\s+(\(|\[|\{\}|sqlite_master\b|""" + _TABLE + r""")
      | insert\s+(or\s+\w+\s+)?into\s
      | replace\s+into\s
      | update\s+\w+\s+set\s
      | delete\s+from\s
      | create\s+(unique\s+|temp\s+|temporary\s+|virtual\s+)?(table|index|view|trigger)\s
      | drop\s+(table|index|view|trigger)\s
      | alter\s+table\s
      | pragma\s+\w+
      | with\s+(recursive\s+)?\w+(\s*\([^)]*\))?\s+as\s*\(
      | (begin|commit|rollback|savepoint|release|vacuum|analyze)(\s+(immediate|exclusive|deferred|to\s+\w+))?\s*;?\s*$
    )""",
    re.IGNORECASE | re.VERBOSE,
)


SQL_PIECE = re.compile(
    r"\b(from|join)\s+" + _TABLE + r"(\s+\w+)?\s*($|\)|,|where\b|join\b|left\b|on\b|order\b|group\b|limit\b)"
    r"|\b(into|update)\s+" + _TABLE + r"\s*(\(|set\b)"
    r"|\bin\s*\(\s*select\s"
    r"|\bgroup\s+by\s+\w+\s*(,|$|\s+having\b)"
    r"|\border\s+by\s+\w+(\s+(asc|desc))?\s*(,|$|\s+limit\b)",
    re.IGNORECASE,
)


def _text(node: ast.AST) -> str | None:
    """A string constant's text, or an f-string's with each hole as ``{}``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    return None


def _end_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _is_store(node: ast.AST) -> bool:
    name = _end_name(node)
    return name is not None and (name in STORE_NAMES or name.endswith("_store") or name.endswith("store"))


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def sql_spoken(source: str) -> list[tuple[int, str]]:
    """(line, what) for each place in ``source`` that speaks SQL."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    found = []
    inside_fstring = {id(v) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for v in node.values}
    # a class's own method called on self (an Auditor's ``self.execute(target)``) is not a cursor's
    own_methods = {item.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
                   for item in node.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            attr = node.func.attr
            if attr in own_methods and isinstance(node.func.value, ast.Name) and node.func.value.id == "self":
                continue
            if attr in RAW_CALLS:
                found.append((node.lineno, f".{attr}(...)"))
            elif attr == "query" and _is_store(node.func.value):
                found.append((node.lineno, ".query(...) on a store"))
            elif attr == "table" and node.args and _text(node.args[0]) is not None:
                found.append((node.lineno, ".table(...) of sqlite-utils"))
            elif attr == "connect" and _end_name(node.func.value) == "sqlite3":
                found.append((node.lineno, "sqlite3.connect(...)"))
            elif attr == "Database" and _end_name(node.func.value) == "sqlite_utils":
                found.append((node.lineno, "sqlite_utils.Database(...)"))
        elif isinstance(node, ast.Attribute) and node.attr in ("conn", "db") and _is_store(node.value):
            found.append((node.lineno, f"a store's .{node.attr}"))
        elif isinstance(node, ast.Subscript) and _end_name(node.value) == "db" and _text(node.slice) is not None:
            found.append((node.lineno, "db[table] of sqlite-utils"))
        elif id(node) not in docs and id(node) not in inside_fstring:
            text = _text(node)
            if text and (SQL_START.search(text) or SQL_PIECE.search(text)):
                found.append((node.lineno, f"SQL text {text.strip()[:60]!r}"))
    return sorted(set(found))


def _modules():
    for root in SCANNED:
        for path in sorted(root.rglob("*.py")):
            if STORE_ROOM not in path.parents:
                yield path


def test_no_module_outside_the_store_room_speaks_sql():
    offenders = [f"{path.relative_to(REPO)}:{line}: {what}"
                 for path in _modules() for line, what in sql_spoken(path.read_text())]
    assert not offenders, ("SQL outside engine/store/ (give the store room a query function):\n"
                           + "\n".join(offenders))


def test_the_scan_knows_the_tables():
    assert {"answers", "runs", "grades", "checks", "scans"} <= TABLES


@pytest.mark.parametrize("source", [
    "store.execute('delete from runs')",
    "class Screen:\n    def run(self):\n        self.execute(sql)",
    "ctx.store.query('x', (1,))",
    "rows = store.conn.execute(sql).fetchall()",
    "store.db['runs'].insert(row)",
    "self.store.db.table('grades').upsert(row, pk='id')",
    "db['grades'].insert_all(rows)",
    "conn = self.app.store.conn",
    "import sqlite3\nc = sqlite3.connect(path)",
    "SQL = '''\n  select id, model from answers where present = 1'''",
    "q = f'update runs set status = {s!r} where id = ?'",
    "x = 'insert or replace into meta (key, value) values (?, ?)'",
    "x = 'PRAGMA data_version'",
    "x = 'with latest as (select max(id) from runs) select 1'",
    "x = 'BEGIN IMMEDIATE'",
    "x = ' and challenge in (select id from challenges)'",
    "x = f'... from grades where {where}'",
    "x = ' group by model, challenge'",
])
def test_the_scan_finds_sql(source):
    assert sql_spoken(source), source


@pytest.mark.parametrize("source", [
    "class Auditor:\n    def execute(self, target): pass\n    def run(self):\n        self.execute(1)",
    "for view in self.query(CodeView): pass",
    "pane.query('#file-view')",
    "self.conn.send(header)",
    "sys.path.insert(0, root)",
    "x = 'Select a model from the list to compare'",
    "x = 'update the workbench, then run `benchtui scan`'",
    "x = 'the runs from answers in this folder'",
    "x = 'delete the folder and start again'",
    "x = 'with the CUDA extra: pip install benchtui[cuda]'",
    "def f():\n    '''select id from answers: what this does'''",
])
def test_the_scan_leaves_other_words_alone(source):
    assert not sql_spoken(source), source
