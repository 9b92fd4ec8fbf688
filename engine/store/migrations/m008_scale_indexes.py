"""Covering indexes for the matrix's first frame at scale.

At 10,000 answers the matrix's reads walked the runs table (rows that carry
each run's stdout and stderr) for the latest verdict, and ran a correlated
subquery per grade for the current grades. With these, both are answered
from an index alone: the newest run per answer, and the newest valid overall
grade per grader and answer."""
import sqlite_utils


def apply(db: sqlite_utils.Database) -> None:
    db.execute("create index if not exists idx_runs_latest on runs (model, challenge, id, status, verdict)")
    db.execute("create index if not exists idx_grades_current on grades "
               "(dimension, invalidated_at, model, challenge, grader_id, id, letter)")
