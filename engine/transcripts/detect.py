"""Which transcript format is this text? Decided by content, never by file name."""
from __future__ import annotations

import json
import re
from typing import Any

PI_TYPES = {"message", "model_change", "thinking_level_change", "compaction", "branch_summary",
            "custom", "custom_message", "label", "session_info"}
CODEX_TYPES = {"session_meta", "response_item", "turn_context", "event_msg", "compacted"}
OPENCODE_RUN_TYPES = {"step_start", "step_finish", "text", "tool_use", "reasoning", "error"}
LINES_LOOKED_AT = 50
_MODEL_LINE = re.compile(r"^MODEL:", re.MULTILINE)


def looks_like_chat(text: str) -> bool:
    """A one-shot chat export (parsers/chat.py): opens with ``PROMPT:`` (after
    blank lines or a byte-order mark) and has a ``MODEL:`` line after it."""
    body = text.lstrip("\ufeff \t\r\n")
    return body.startswith("PROMPT:") and _MODEL_LINE.search(body) is not None


def classify(obj: Any) -> str | None:
    """The format one JSON object (a line, or a whole document) belongs to."""
    if not isinstance(obj, dict):
        return None
    kind = obj.get("type")
    if isinstance(obj.get("messages"), list) and isinstance(obj.get("info"), dict):
        return "opencode-export"
    if kind == "session" and ("cwd" in obj or "version" in obj or "id" in obj):
        return "pi"
    if kind in CODEX_TYPES and "payload" in obj:
        return "codex"
    if "sessionID" in obj and ("part" in obj or kind in OPENCODE_RUN_TYPES):
        return "opencode-run"
    if "sessionId" in obj and ("uuid" in obj or "parentUuid" in obj or "isSidechain" in obj):
        return "claude-code"
    if kind == "summary" and "leafUuid" in obj:
        return "claude-code"
    if kind in PI_TYPES and ("parentId" in obj or isinstance(obj.get("message"), dict)):
        return "pi"
    return None


def detect_format(text: str, complete: bool = True) -> str | None:
    """'pi', 'opencode-export', 'opencode-run', 'claude-code', 'codex', 'chat' or None.

    ``complete=False`` means ``text`` is only the head of a file: a
    pretty-printed JSON document is then judged by its keys alone.
    """
    if looks_like_chat(text):
        return "chat"
    first = text.lstrip()[:1]
    looked = 0
    for raw in text.split("\n"):
        line = raw.strip()
        if not line:
            continue
        looked += 1
        if looked > LINES_LOOKED_AT:
            break
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):
            if looked == 1 and first == "{":
                break  # not JSON Lines: maybe one pretty-printed document
            continue
        found = classify(obj)
        if found:
            return found
    if first == "{":
        if complete:
            try:
                return classify(json.loads(text))
            except (ValueError, RecursionError):
                return None
        if '"messages"' in text and '"info"' in text:
            return "opencode-export"
    return None
