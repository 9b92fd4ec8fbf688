"""Cheap content sniffing for the scanner: is this file a transcript, and which format?

Reads only the head of the file; ``load_transcript`` confirms when it parses.
"""
from __future__ import annotations

from pathlib import Path

from benchtui.transcripts.detect import detect_format

HEAD_BYTES = 64 * 1024


def sniff_format(path: Path) -> str | None:
    """'pi', 'opencode-export', 'opencode-run', 'claude-code', 'codex' or None."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(HEAD_BYTES)
            complete = len(head) < HEAD_BYTES or not fh.read(1)
    except OSError:
        return None
    return sniff_head(head, complete)


def sniff_head(head: bytes, complete: bool) -> str | None:
    """sniff_format on bytes already read: the file's first HEAD_BYTES (or all
    of it), ``complete`` when that is the whole file. The scanner hashes every
    file whole and hands its head here rather than opening it again."""
    head = head[:HEAD_BYTES]
    if b"\x00" in head:
        return None
    text = head.decode("utf-8", errors="replace")
    if not complete:  # the last line may be cut in half
        text = text[: text.rfind("\n") + 1] if "\n" in text else text
    return detect_format(text, complete=complete)
