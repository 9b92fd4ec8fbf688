"""``answers.stat_sig``: a digest of what a rescan sees of an answer's folder
without reading a file (each file's name, size, mtime, git state and
name-based kind, and the challenge's data files), written with the answer's
rows. A rescan compares it with the digest of a fresh walk: one value per
answer, where it read every file row before. NULL (every answer, here) makes
the next scan compare the files one by one once."""
import sqlite_utils


def apply(db: sqlite_utils.Database) -> None:
    table = db.table("answers")
    if "stat_sig" not in table.columns_dict:
        table.add_column("stat_sig", str)
