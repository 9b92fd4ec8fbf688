"""Runs record the prompt version the answer was judged against
(engine/challenges/prompts.py): the version whose hash matches the answer's
whitespace-normalised PROMPT.md, NULL when unknown or missing."""
import sqlite_utils


def apply(db: sqlite_utils.Database) -> None:
    if "prompt_version" not in db["runs"].columns_dict:
        db["runs"].add_column("prompt_version", str)
