"""One parser module per format; each exposes ``parse(text, path) -> Transcript``."""
from __future__ import annotations

from collections.abc import Callable

from benchtui.transcripts.model import Transcript
from benchtui.transcripts.parsers import chat, claude_code, codex, opencode_export, opencode_run, pi

PARSERS: dict[str, Callable[[str, str], Transcript]] = {
    "pi": pi.parse,
    "opencode-export": opencode_export.parse,
    "opencode-run": opencode_run.parse,
    "claude-code": claude_code.parse,
    "codex": codex.parse,
    "chat": chat.parse,
}
