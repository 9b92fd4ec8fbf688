"""``answers.stat_walk``: what a rescan needs to stat an answer's files
without listing its folders again: each folder's (inode, ctime) as it was
listed and the regular files it held (engine/workbench/answer_stat.py).
NULL (every answer, here) makes the next rescan list the folder once."""
import sqlite_utils


def apply(db: sqlite_utils.Database) -> None:
    table = db.table("answers")
    if "stat_walk" not in table.columns_dict:
        table.add_column("stat_walk", str)
