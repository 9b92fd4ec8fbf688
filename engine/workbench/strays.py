"""Files in a model's folder outside its challenge folders.

Only ``MODEL/<challenge>/`` folders are answers, but real workbenches keep
other things beside them: one-shot chat exports above all (``qwen36/stable
backwards pass.md``: ``PROMPT:`` quoting a challenge's prompt, then
``MODEL:`` and the answer). The scan names every such file, so none is
ignored without a word, and a chat export that quotes a challenge's prompt
becomes that challenge's transcript for the model (stored with a relpath
that climbs out of the answer folder: ``../stable backwards pass.md``).
"""
from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from benchtui.challenges.prompts import normalise_prompt

OUTSIDE_KIND = "outside_challenge"   # a warning: the file is not indexed
MOST_NAMED = 100         # per model; the rest are named in one record
HEAD_BYTES = 64 * 1024   # read to tell a chat export (it opens with PROMPT:)
CHAT_SUFFIXES = {".md", ".markdown", ".txt", ".text", ""}
# How close a quoted prompt must come to a challenge's (word-level similarity
# of the whitespace-normalised texts), and by how much it must beat the next
# challenge, to be taken as quoting it.
MATCH_AT = 0.8
MARGIN = 0.05
SKIP = {"__pycache__", ".git"}


@dataclass
class Stray:
    relpath: str                       # from the model folder, with '/'
    path: str
    st: os.stat_result | None          # None: could not be read (why: ``problem``)
    problem: str | None = None


@dataclass
class ChatFile:
    size: int
    mtime_ns: int
    sha256: str
    lines: int
    prompt: str


def list_strays(model_dir: Path, answer_ids: set[str], contains: Callable[[Path], bool]) -> list[Stray]:
    """Every file of ``model_dir`` that is in none of its answer folders
    (``answer_ids``), in name order; folders are walked, links never followed
    out of the workbench (``contains``)."""
    out: list[Stray] = []
    stack = [("", os.fspath(model_dir), True)]
    while stack:
        prefix, directory, top = stack.pop()
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        subdirs = []
        for entry in entries:
            if entry.name.startswith(".") or entry.name in SKIP or (top and entry.name in answer_ids):
                continue
            rel = prefix + entry.name
            try:
                if entry.is_symlink():
                    target = Path(entry.path)
                    if target.is_dir() or not contains(target):
                        out.append(Stray(rel, entry.path, None, "a link (not followed)"))
                        continue
                elif entry.is_dir(follow_symlinks=False):
                    subdirs.append((rel + "/", entry.path, False))
                    continue
                st = entry.stat()
            except OSError as exc:
                out.append(Stray(rel, entry.path, None, f"cannot stat ({exc.strerror or exc})"))
                continue
            if stat.S_ISREG(st.st_mode):
                out.append(Stray(rel, entry.path, st))
        stack.extend(reversed(subdirs))
    return out


def read_chat(stray: Stray, cap: int) -> ChatFile | None:
    """The file as a one-shot chat export, or None when it is not one (or is
    over the text cap, binary, unreadable)."""
    from benchtui.transcripts.detect import looks_like_chat
    from benchtui.transcripts.parsers.chat import quoted_prompt

    if stray.st is None or stray.st.st_size > cap or Path(stray.relpath).suffix.lower() not in CHAT_SUFFIXES:
        return None
    try:
        with open(stray.path, "rb") as fh:
            head = fh.read(HEAD_BYTES)
            if b"\x00" in head or not looks_like_chat(head.decode("utf-8", errors="replace")):
                return None
            data = head + fh.read()
        text = data.decode("utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return None
    prompt = quoted_prompt(text)
    if not prompt:
        return None
    lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
    return ChatFile(stray.st.st_size, stray.st.st_mtime_ns, hashlib.sha256(data).hexdigest(), lines, prompt)


def known_prompts(challenges: dict, answer_prompts: dict[str, list[Path]]) -> dict[str, list[str]]:
    """Challenge id -> the whitespace-normalised prompts it is known by: its own
    PROMPT.md and the PROMPT.md each model's answer folder carries (a
    published benchmark's prompts are those)."""
    out: dict[str, list[str]] = {}
    for cid, challenge in challenges.items():
        seen: set[str] = set()
        for path in [Path(challenge.prompt_path), *answer_prompts.get(cid, [])]:
            try:
                text = normalise_prompt(path.read_text(encoding="utf-8", errors="replace"))
            except OSError:
                continue
            if text and text not in seen:
                seen.add(text)
                out.setdefault(cid, []).append(text)
    return out


def similarity(quoted: str, known: str) -> float:
    """1.0 for the prompt itself, or quoted whole with a little more around
    it; else the word-level similarity of the two texts."""
    import difflib

    if quoted == known or (known in quoted and len(known) >= 0.6 * len(quoted)):
        return 1.0
    return difflib.SequenceMatcher(None, quoted.split(), known.split(), autojunk=False).ratio()


def match_prompt(prompt: str, known: dict[str, list[str]]) -> tuple[str | None, list[str]]:
    """(the challenge whose prompt ``prompt`` quotes, []), or (None, the
    challenges it is too close to tell apart), or (None, []) for none."""
    quoted = normalise_prompt(prompt)
    scores = sorted(((max((similarity(quoted, k) for k in texts), default=0.0), cid) for cid, texts in known.items()),
                    reverse=True)
    if not scores or scores[0][0] < MATCH_AT:
        return None, []
    best = scores[0][0]
    close = sorted(cid for score, cid in scores if score >= MATCH_AT and best - score < MARGIN)
    return (scores[0][1], []) if len(close) == 1 else (None, close)
