"""Grades are written in one transaction that takes the write lock up front:
a store another process holds past the busy timeout gets one line and nothing
written; the grading room's modules use each other's public names only."""
import ast
import sqlite3
from pathlib import Path

import pytest
from benchtui.grading import grades
from benchtui.grading.judge_import import add_alias, list_aliases

GRADING = Path(__file__).resolve().parents[2] / "engine" / "grading"


@pytest.fixture
def held(store):
    """The store's write lock held by another connection; this one waits 50 ms for it."""
    other = sqlite3.connect(str(store.path), isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    store.conn.execute("PRAGMA busy_timeout=50")
    yield store
    other.execute("ROLLBACK")
    other.close()


def test_a_busy_store_says_so_and_writes_nothing(held):
    with pytest.raises(grades.GradeError, match="store is busy, nothing written"):
        grades.ensure_grader(held, "ana")
    with pytest.raises(grades.GradeError, match="store is busy, nothing written"):
        add_alias(held, "model", "Careful", "demo-careful")
    assert grades.list_graders(held) == [] and list_aliases(held) == []


def test_an_error_inside_rolls_the_whole_transaction_back(store):
    with pytest.raises(RuntimeError), grades.write_transaction(store):
        grades.ensure_grader(store, "ana")  # joins the open transaction
        raise RuntimeError("half way")
    assert grades.list_graders(store) == []
    with grades.write_transaction(store):
        grades.ensure_grader(store, "ana")
    assert [g.name for g in grades.list_graders(store)] == ["ana"]


def test_the_grading_room_imports_no_private_name_of_another_module():
    private = [f"{path.name}:{node.lineno}: {node.module}.{alias.name}"
               for path in sorted(GRADING.glob("*.py"))
               for node in ast.walk(ast.parse(path.read_text()))
               if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("benchtui")
               for alias in node.names if alias.name.startswith("_")]
    assert not private, private
