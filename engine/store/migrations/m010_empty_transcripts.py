"""Files an older scan filed as artifacts under a transcript's name because
they held no text (an empty session.jsonl) lose their stored hash, so the
next scan looks at them once more and lists them as the (empty) transcript
they are, flagged as a binary one is."""
import sqlite_utils


def apply(db: sqlite_utils.Database) -> None:
    db.execute("update files set sha256 = '' where kind = 'artifact' and size < 65536 and "
               "(relpath like '%.jsonl' or relpath like '%.json' or relpath like '%.ndjson')")
