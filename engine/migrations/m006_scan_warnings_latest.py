"""scan_warnings keeps the latest scan's warnings only (issue 19: every
dashboard start added them all again, 1,339 rows on the published copy), and
is indexed the way it is read: by scan, then answer."""
import sqlite_utils


def apply(db: sqlite_utils.Database) -> None:
    db.execute("delete from scan_warnings where scan_id < (select coalesce(max(scan_id), 0) from scan_warnings)")
    db["scan_warnings"].create_index(["scan_id", "model", "challenge"], index_name="idx_scan_warnings_answer",
                                     if_not_exists=True)
