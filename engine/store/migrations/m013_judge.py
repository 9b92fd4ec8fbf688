"""The judge run from benchtui (``benchtui judge``).

``grades`` gains what a judge's grade rests on: ``judge_model`` (the model
``llm`` called), ``rubric_sha`` (the sha256 of the rubric file it was given)
and ``judge_mode`` (``blind`` or ``evidence``); NULL on grades people set and
on grades imported from Markdown.

``judge_calls`` keeps every call: its key (judge model, rubric, mode and the
sha256 of the material sent, which holds the answer's content), what came of
it (``graded``, ``unparseable``, ``refused``, ``error``), the reply's raw text
and the tokens it cost. A ``graded`` call is the cache: the same key is not
asked again.
"""
import sqlite_utils


def apply(db: sqlite_utils.Database) -> None:
    grades = db.table("grades")
    for column in ("judge_model", "rubric_sha", "judge_mode"):
        if column not in grades.columns_dict:
            grades.add_column(column, str)
    calls = db.table("judge_calls")
    calls.create(
        {"id": int, "model": str, "challenge": str, "judge_model": str, "rubric_sha": str, "mode": str,
         "material_sha": str, "status": str, "reply": str, "problem": str, "input_tokens": int,
         "output_tokens": int, "grade_ids": str, "created_at": str},
        pk="id", not_null={"model", "challenge", "judge_model", "rubric_sha", "mode", "material_sha", "status"},
    )
    calls.create_index(["judge_model", "rubric_sha", "mode", "material_sha", "status"],
                                   index_name="idx_judge_calls_key")
    calls.create_index(["model", "challenge"], index_name="idx_judge_calls_answer")
