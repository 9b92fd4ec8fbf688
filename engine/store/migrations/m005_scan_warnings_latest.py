"""Scan warnings and binary transcripts:

- scan_warnings keeps the latest scan's warnings only (every dashboard start
  added them all again: 1,339 rows on the published copy), and is indexed the
  way it is read: by scan, then answer;
- files an older scan filed as artifacts under a transcript's name (a binary
  session.jsonl) lose their stored hash, so the next scan looks at them once
  more and flags them as the transcript they are.
"""
import sqlite_utils


def apply(db: sqlite_utils.Database) -> None:
    db.execute("delete from scan_warnings where scan_id < (select coalesce(max(scan_id), 0) from scan_warnings)")
    db["scan_warnings"].create_index(["scan_id", "model", "challenge"], index_name="idx_scan_warnings_answer",
                                     if_not_exists=True)
    db.execute("update files set sha256 = '' where kind = 'artifact' and "
               "(relpath like '%.jsonl' or relpath like '%.json' or relpath like '%.ndjson')")
