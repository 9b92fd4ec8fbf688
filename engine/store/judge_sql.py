"""The judge's calls (``judge_calls``, migration m013): recording each, and the
cache lookup: a graded call with the same judge model, rubric, mode and
material is not asked again."""
from __future__ import annotations

import json

from benchtui.store.database import Store

CALL_COLUMNS = ("model", "challenge", "judge_model", "rubric_sha", "mode", "material_sha", "status", "reply",
                "problem", "input_tokens", "output_tokens", "created_at")


def insert_call(store: Store, row: dict) -> int:
    cursor = store.execute(
        f"insert into judge_calls ({', '.join(CALL_COLUMNS)}) values ({', '.join('?' * len(CALL_COLUMNS))})",
        tuple(row.get(c) for c in CALL_COLUMNS))
    assert cursor.lastrowid is not None  # an insert's row id
    return cursor.lastrowid


def set_call_grades(store: Store, call_id: int, grade_ids: list[int]) -> None:
    store.execute("update judge_calls set grade_ids = ? where id = ?", (json.dumps(grade_ids), call_id))


def cached_call(store: Store, judge_model: str, rubric_sha: str, mode: str, material_sha: str) -> dict | None:
    """The newest graded call under this key, else None."""
    rows = store.query("select * from judge_calls where judge_model = ? and rubric_sha = ? and mode = ? "
                       "and material_sha = ? and status = 'graded' order by id desc limit 1",
                       (judge_model, rubric_sha, mode, material_sha))
    return rows[0] if rows else None


def calls_of(store: Store, model: str | None = None, challenge: str | None = None) -> list[dict]:
    """Every call, oldest first; one answer's with ``model`` and ``challenge``."""
    if model is None:
        return store.query("select * from judge_calls order by id")
    return store.query("select * from judge_calls where model = ? and challenge = ? order by id", (model, challenge))
