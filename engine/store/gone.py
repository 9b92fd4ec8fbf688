"""What the store keeps of model folders that are gone: the runs, grades (judges'
included) and notes of a model the last scan did not find. They are kept (a grade
is never lost), named by the scan, marked wherever they are shown, and moved to a
model's new folder name by ``benchtui model move OLD NEW``."""
from __future__ import annotations

import shlex

from benchtui.store.database import Store

# the tables whose rows belong to a model by name, moved with it
MODEL_TABLES = ("runs", "grades", "notes", "audit_baselines", "audit_mutants", "audit_answers", "audit_marks")


def _present(store: Store) -> set[str]:
    return {r[0] for r in store.conn.execute("select name from models where present = 1")}


def gone_models(store: Store) -> dict[str, dict[str, int]]:
    """Each model with runs, grades or notes in the store and no folder in the workbench
    (the last scan did not find it, or never did): how many of each are kept. Empty
    before any scan found a model, when nothing can be said to be gone."""
    present = _present(store)
    if not present:
        return {}
    kept: dict[str, dict[str, int]] = {}
    judge_ids = {r[0] for r in store.conn.execute("select id from graders where kind = 'judge'")}
    for model, n in store.conn.execute("select model, count(*) from runs where status != 'trial' group by model"):
        kept.setdefault(model, {})["runs"] = n
    for model, grader, n in store.conn.execute(
            "select model, grader_id, count(*) from grades where invalidated_at is null group by model, grader_id"):
        key = "judge_grades" if grader in judge_ids else "grades"
        kept.setdefault(model, {})[key] = kept.get(model, {}).get(key, 0) + n
    for model, n in store.conn.execute("select model, count(*) from notes group by model"):
        kept.setdefault(model, {})["notes"] = n
    return {m: {k: counts.get(k, 0) for k in ("runs", "grades", "judge_grades", "notes")}
            for m, counts in sorted(kept.items()) if m not in present}


def kept_text(counts: dict[str, int]) -> str:
    """"8 runs, 2 grades, 1 judge grade" of a gone model's kept rows."""
    words = {"runs": ("run", "runs"), "grades": ("grade", "grades"), "judge_grades": ("judge grade", "judge grades"),
             "notes": ("note", "notes")}
    return ", ".join(f"{n} {words[k][n != 1]}" for k, n in counts.items() if n) or "nothing"


def gone_lines(store: Store) -> list[str]:
    """A line per model folder that is gone while the store keeps its runs or grades."""
    return [f"folder gone: {model}: the store keeps its {kept_text(counts)}; if it was renamed, "
            f"`benchtui model move {shlex.quote(model)} NEW` moves them" for model, counts in gone_models(store).items()]


def move_model(store: Store, old: str, new: str) -> dict[str, int]:
    """Every row of ``old`` in MODEL_TABLES renamed to ``new``, in one transaction:
    how many rows of each table moved."""
    moved = {}
    conn = store.conn
    conn.execute("BEGIN IMMEDIATE")
    try:
        for table in MODEL_TABLES:
            if not conn.execute("select 1 from sqlite_master where type = 'table' and name = ?", (table,)).fetchone():
                continue
            moved[table] = conn.execute(f"update {table} set model = ? where model = ?", (new, old)).rowcount
        conn.commit()
    except BaseException:
        conn.rollback()
        raise
    return moved
