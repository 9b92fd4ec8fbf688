"""JSON Lines reading that never gives up on a file because of one line.

A line that is not JSON is repaired when the damage is the known redaction
case (an unescaped quote inside a string, ``\\"./<redacted>",``); otherwise
it is kept as a raw line. Either way a warning records the line number.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from benchtui.transcripts.model import W_BAD_JSON, W_REPAIRED, TranscriptWarning

MAX_REPAIRS = 8  # quotes escaped per line before the line is declared raw

_ID = re.compile(r'"(?:id|uuid)"\s*:\s*"([^"\\]{1,200})"')
_PARENT = re.compile(r'"(?:parentId|parentUuid)"\s*:\s*(?:"([^"\\]{1,200})"|null)')


@dataclass(slots=True)
class Line:
    number: int            # 1-based
    obj: Any               # decoded JSON (None for a raw line)
    text: str              # the line as read
    repaired: bool = False
    ok: bool = True        # False: raw line, obj is None

    def guess_ids(self) -> tuple[str | None, str | None]:
        """Best-effort id/parentId of a raw line, so a tree keeps its shape."""
        m, p = _ID.search(self.text), _PARENT.search(self.text)
        return (m.group(1) if m else None), (p.group(1) if p else None)


def _decode(text: str) -> Any:
    return json.loads(text)


def repair(text: str) -> Any:
    """Escape stray quotes where the decoder fails; the decoded object or raise ValueError."""
    attempt = text
    last_pos = -1
    for _ in range(MAX_REPAIRS):
        try:
            return _decode(attempt)
        except json.JSONDecodeError as exc:
            pos = exc.pos
            if pos <= last_pos:  # no progress: not the quote case
                break
            last_pos = pos
            q = attempt.rfind('"', 0, pos)
            # the quote must close a string early: unescaped, and not the one opening a key
            while q > 0 and _escaped(attempt, q):
                q = attempt.rfind('"', 0, q)
            if q <= 0:
                break
            attempt = attempt[:q] + '\\"' + attempt[q + 1:]
        except RecursionError:
            break
    raise ValueError("unrepairable")


def _escaped(s: str, i: int) -> bool:
    n = 0
    j = i - 1
    while j >= 0 and s[j] == "\\":
        n += 1
        j -= 1
    return n % 2 == 1


def read_lines(text: str, warnings: list[TranscriptWarning]) -> list[Line]:
    """Every non-blank line, decoded, repaired or raw; warnings appended in line order."""
    out: list[Line] = []
    loads = json.loads
    for number, raw in enumerate(text.split("\n"), start=1):
        if not raw or raw.isspace():
            continue
        try:
            out.append(Line(number, loads(raw), raw))  # json allows surrounding whitespace
            continue
        except json.JSONDecodeError as exc:
            # json's own words may end in "at" ("Unterminated string starting at")
            error = f"{exc.msg}{'' if exc.msg.endswith(' at') else ' at'} column {exc.colno}"
        except RecursionError:
            error = "nested too deeply"
        line = raw.strip()
        obj = None
        if line.startswith("{") and line.endswith("}"):
            try:
                obj = repair(line)
            except ValueError:
                obj = None
        if isinstance(obj, dict):
            warnings.append(TranscriptWarning(number, W_REPAIRED, f"invalid JSON ({error}); repaired by escaping quotes"))
            out.append(Line(number, obj, raw, repaired=True))
        else:
            warnings.append(TranscriptWarning(number, W_BAD_JSON, f"invalid JSON ({error}); kept as raw text"))
            out.append(Line(number, None, raw, ok=False))
    return out
