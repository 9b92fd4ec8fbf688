"""Grades area: the name-alias table the user edits, and indices for the
queries the grading screen, importer and reports run.

``name_aliases`` maps a name found in imported Markdown (a judge's spelling
of a model or challenge) to a model folder or challenge id. Users edit it
with ``benchtui grades alias`` or any SQLite tool.
"""
import sqlite_utils


def apply(db: sqlite_utils.Database) -> None:
    db["name_aliases"].create(
        {"id": int, "kind": str, "alias": str, "target": str, "created_at": str},
        pk="id", not_null={"kind", "alias", "target"},
    )
    db["name_aliases"].create_index(["kind", "alias"], unique=True)
    # Current-grade lookups: newest valid row per (cell, grader).
    db["grades"].create_index(["model", "challenge", "dimension", "grader_id", "id"],
                              index_name="idx_grades_cell_grader")
    db["grades"].create_index(["grader_id", "dimension"], index_name="idx_grades_grader")
    db["notes"].create_index(["model", "challenge"], index_name="idx_notes_answer")
