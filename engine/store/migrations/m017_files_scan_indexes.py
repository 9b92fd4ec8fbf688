"""Partial indexes for what every rescan asks of the files table
(engine/store/scan_sql.py): the files with a problem or no hash
(``unsettled_answers``: almost none, where the query read all 60,000 rows at
bench/scale.py's size), the transcripts among them (compared with their
transcript rows), and each answer's PROMPT.md (``answer_prompts``). Each
holds only the rows its query reads."""
import sqlite_utils


def apply(db: sqlite_utils.Database) -> None:
    db.execute("create index if not exists idx_files_unsettled on files(answer_id) "
               "where problem is not null or sha256 = '' or sha256 is null")
    db.execute("create index if not exists idx_files_transcript on files(answer_id, relpath, sha256) "
               "where kind = 'transcript'")
    db.execute("create index if not exists idx_files_prompt on files(answer_id, sha256) where relpath = 'PROMPT.md'")
