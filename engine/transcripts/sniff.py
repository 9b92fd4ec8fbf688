"""Cheap content sniffing: is this file a session transcript, and which format?

Used by the scanner on every .jsonl/.json file, so it reads only the head.
"""
from __future__ import annotations

import json
from pathlib import Path

HEAD_BYTES = 64 * 1024


def _first_objects(text: str, limit: int = 5) -> list[dict]:
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            out.append(obj)
        if len(out) >= limit:
            break
    return out


def sniff_format(path: Path) -> str | None:
    """'pi', 'opencode-export', 'opencode-run', 'claude-code', 'codex' or None."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(HEAD_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return None
    stripped = head.lstrip()
    if stripped.startswith("{") and '"messages"' in head and '"info"' in head:
        try:
            obj = json.loads(Path(path).read_text(encoding="utf-8", errors="replace"))
            if isinstance(obj, dict) and isinstance(obj.get("messages"), list):
                return "opencode-export"
        except ValueError:
            pass
    for obj in _first_objects(head):
        kind = obj.get("type")
        if kind == "session" and ("cwd" in obj or "id" in obj or "version" in obj):
            return "pi"
        if kind in {"message", "model_change", "thinking_level_change"} and "message" in obj or obj.get("type") == "message":
            return "pi"
        if kind in {"session_meta", "response_item", "turn_context", "event_msg"} and "payload" in obj:
            return "codex"
        if "sessionID" in obj and "part" in obj:
            return "opencode-run"
        if ("parentUuid" in obj or "isSidechain" in obj) and "sessionId" in obj:
            return "claude-code"
    return None
