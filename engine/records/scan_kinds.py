"""Kinds of scan records that say what the scan found or did rather than
what is wrong: kept beside the warnings in scan_warnings (the answer screen
and `show` list them), never counted as warnings (the scan's count, a
matrix cell's mark). Light on purpose: the dashboard's first query reads it."""
from __future__ import annotations

CHAT_KIND = "chat_transcript"   # a chat export at a model's root, indexed as an answer's transcript
WAITING_KIND = "waiting"        # a folder holding only what deploy hands out: waiting for an answer
INFO_KINDS = (CHAT_KIND, WAITING_KIND)
