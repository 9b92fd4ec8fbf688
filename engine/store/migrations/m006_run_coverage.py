"""Runs record what their verdict covers (engine/challenges/coverage.py): per
requirement of the answer's prompt, pass / fail / not_exercised with the
reason and the checks that named it, as JSON; NULL for older runs."""
import sqlite_utils


def apply(db: sqlite_utils.Database) -> None:
    if "coverage" not in db["runs"].columns_dict:
        db["runs"].add_column("coverage", str)
