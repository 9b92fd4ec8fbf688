"""One-shot chat exports: plain text (often a ``.md``) that opens with
``PROMPT:`` and the prompt, then ``MODEL:`` and the model's answer, as a
chat web page copies out. A turn starts at a line that begins ``PROMPT:`` or
``MODEL:``; a chat of several turns repeats them. There are no tools,
tokens or times to read, and the file does not name its model (the folder does).
"""
from __future__ import annotations

import re

from benchtui.transcripts.detect import looks_like_chat  # noqa: F401  (the rule that picks this format)
from benchtui.transcripts.model import (
    ASSISTANT,
    RAW,
    USER,
    W_BAD_ENTRY,
    Branch,
    Entry,
    Header,
    Transcript,
    TranscriptWarning,
)

MARKER = re.compile(r"^(PROMPT|MODEL):[ \t]*", re.MULTILINE)
ROLE = {"PROMPT": USER, "MODEL": ASSISTANT}


def sections(text: str) -> list[tuple[str, int, str]]:
    """(marker, 1-based line of the marker, the text after it up to the next marker)."""
    text = text.lstrip("\ufeff")
    marks = list(MARKER.finditer(text))
    out = []
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        out.append((m.group(1), text.count("\n", 0, m.start()) + 1, text[m.end():end].strip()))
    return out


def quoted_prompt(text: str) -> str | None:
    """The text of the first ``PROMPT:`` section: the prompt the chat quotes."""
    for marker, _, body in sections(text):
        if marker == "PROMPT":
            return body
    return None


def parse(text: str, path: str = "") -> Transcript:
    warnings: list[TranscriptWarning] = []
    header = Header(format="chat", harness="chat export")
    entries: list[Entry] = []
    found = sections(text)
    stripped = text.lstrip("\ufeff")
    first = MARKER.search(stripped)
    before = stripped[:first.start()] if first else stripped
    if before.strip():  # text ahead of the first marker: kept, and said
        warnings.append(TranscriptWarning(1, W_BAD_ENTRY, "text before the first PROMPT:/MODEL: line"))
        entries.append(Entry(index=0, line=1, role=RAW, kind="preamble", text=before.strip(), raw=before.strip()))
    for marker, line, body in found:
        entries.append(Entry(index=0, line=line, role=ROLE[marker], kind=marker.lower(), text=body))
    for i, e in enumerate(entries):
        e.index = i
    return Transcript(path=path, header=header, entries=entries,
                      branches=[Branch(leaf_id=None, active=True, fork_id=None, entries=entries)],
                      warnings=warnings)
