"""The one size cap on text: files over it are flagged by the scan,
never parsed or indexed as transcripts, never read whole into memory, and
every command and screen says so in the same words."""
from __future__ import annotations

TEXT_CAP_BYTES = 10 * 1024 * 1024
BINARY_TEXT = "binary file (NUL bytes), not text"
BINARY_TRANSCRIPT = "binary file (NUL bytes), not a text transcript"
EMPTY_TRANSCRIPT = "empty file (no text), not a transcript"


def cap_words(cap: int) -> str:
    return f"{cap / (1024 * 1024):g} MB" if cap >= 1024 * 1024 else f"{cap:,} bytes"


def over_cap(size: int, cap: int | None = None) -> str:
    """'over the 10 MB size cap (52,428,800 bytes): not read as text'."""
    cap = TEXT_CAP_BYTES if cap is None else cap
    return f"over the {cap_words(cap)} size cap ({size:,} bytes): not read as text"
