"""Transcripts: parsed header and totals on each row, entries, full-text search.

Columns added to ``transcripts`` describe the last successful (or failed)
parse; ``parsed_sha256`` tells the indexer whether the file changed since.
"""
import sqlite_utils

NEW_COLUMNS = {
    "harness": str, "version": str, "model": str, "provider": str, "session_id": str,
    "started_at": str, "cwd": str, "title": str,
    "entries": int, "branches": int, "warnings": int, "repaired": int,
    "tool_calls": int, "tool_errors": int,
    "tokens_input": int, "tokens_output": int, "tokens_cache_read": int,
    "tokens_cache_write": int, "tokens_reasoning": int,
    "cost": float, "duration_s": float, "model_latency_s": float, "tool_time_s": float,
    "totals_json": str, "warnings_json": str, "parsed_sha256": str, "parser_version": int,
    "parsed_at": str, "parse_s": float,
}


def apply(db: sqlite_utils.Database) -> None:
    table = db["transcripts"]
    have = set(table.columns_dict)
    for name, kind in NEW_COLUMNS.items():
        if name not in have:
            table.add_column(name, kind)
    db["transcript_entries"].create(
        {"id": int, "transcript_id": int, "branch": int, "position": int, "turn": int,
         "line": int, "role": str, "kind": str, "entry_id": str, "parent_id": str,
         "timestamp": float, "text": str, "thinking": str, "tool_text": str,
         "tool_names": str, "tool_calls": int, "is_error": int, "repaired": int,
         "tokens_input": int, "tokens_output": int, "tokens_cache_read": int,
         "tokens_cache_write": int, "tokens_reasoning": int, "cost": float,
         "latency_s": float, "duration_s": float},
        pk="id", foreign_keys=[("transcript_id", "transcripts", "id")],
    )
    db["transcript_entries"].create_index(["transcript_id", "branch", "position"])
    db["transcript_entries"].enable_fts(["text", "thinking", "tool_text"], create_triggers=True,
                                        tokenize="porter")
