"""Defensive accessors for JSON from other programs: wrong types read as 'absent'."""
from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from typing import Any


def dct(obj: Any, key: str) -> dict:
    v = obj.get(key) if isinstance(obj, dict) else None
    return v if isinstance(v, dict) else {}


def lst(obj: Any, key: str) -> list:
    v = obj.get(key) if isinstance(obj, dict) else None
    return v if isinstance(v, list) else []


def txt(obj: Any, key: str) -> str | None:
    v = obj.get(key) if isinstance(obj, dict) else None
    return v if isinstance(v, str) else None


def num(obj: Any, key: str) -> float | None:
    v = obj.get(key) if isinstance(obj, dict) else None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v) if math.isfinite(v) else None


def count(obj: Any, key: str) -> int:
    """A token count: non-negative int, 0 when absent or nonsense."""
    v = num(obj, key)
    if v is None or v < 0 or v > 1e15:
        return 0
    return int(v)


def flag(obj: Any, key: str) -> bool:
    v = obj.get(key) if isinstance(obj, dict) else None
    return v is True


def ident(obj: Any, key: str) -> str | None:
    """An id: strings as given, numbers stringified."""
    v = obj.get(key) if isinstance(obj, dict) else None
    if isinstance(v, str):
        return v
    if isinstance(v, int) and not isinstance(v, bool):
        return str(v)
    return None


def iso_to_epoch(value: Any) -> float | None:
    """ISO 8601 string (with Z or offset) -> Unix seconds; None when unparseable."""
    if not isinstance(value, str) or not value:
        return None
    s = value.strip()
    if s.endswith("Z") or s.endswith("z"):
        s = s[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(s)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    try:
        return dt.timestamp()
    except (OverflowError, OSError, ValueError):
        return None


def ms_to_epoch(value: Any) -> float | None:
    """Unix milliseconds (number) -> seconds; ISO strings are accepted too."""
    if isinstance(value, str):
        return iso_to_epoch(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    if not 0 <= value < 1e14:  # beyond year 5000: not a timestamp
        return None
    return value / 1000.0


def any_time(value: Any) -> float | None:
    """ISO string, Unix ms or Unix s -> Unix seconds."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return ms_to_epoch(value) if value > 1e11 else (float(value) if value >= 0 else None)
    return iso_to_epoch(value)


def epoch_to_iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    try:
        return datetime.fromtimestamp(ts, tz=UTC).isoformat().replace("+00:00", "Z")
    except (OverflowError, OSError, ValueError):
        return None


def blocks_text(content: Any, kinds: tuple[str, ...] = ("text",), key: str = "text") -> str:
    """Join the text of content blocks (a string is its own text); images become a marker."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict):
            if block.get("type") in kinds and isinstance(block.get(key), str):
                parts.append(block[key])
            elif block.get("type") in ("image", "input_image"):
                parts.append(f"[image {txt(block, 'mimeType') or txt(block, 'media_type') or ''}]".replace(" ]", "]"))
    return "\n".join(parts)


def json_args(value: Any) -> Any:
    """Tool arguments given as a JSON string are decoded; anything else is kept."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return value
    return value


def short(value: Any, limit: int = 200) -> str:
    s = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    s = s.replace("\n", "\\n")
    return s if len(s) <= limit else s[: limit - 1] + "…"
