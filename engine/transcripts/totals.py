"""Totals for a transcript and for each of its turns (a user prompt and what follows)."""
from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from benchtui.transcripts.model import ASSISTANT, TOOL_RESULT, USER, Entry, Totals, Transcript, Turn

WRITE_TOOLS = {"write", "write_file", "create_file", "create"}
EDIT_TOOLS = {"edit", "multiedit", "str_replace", "str_replace_editor", "str_replace_based_edit_tool",
              "replace", "edit_file", "apply_patch", "patch"}
PATH_KEYS = ("path", "file_path", "filePath", "filename", "file")
_PATCH_FILE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+)$", re.M)


def compute(entries: Iterable[Entry]) -> Totals:
    t = Totals()
    first = last = None
    for e in entries:
        t.entries[e.role] = t.entries.get(e.role, 0) + 1
        if e.timestamp is not None:
            first = e.timestamp if first is None else min(first, e.timestamp)
            last = e.timestamp if last is None else max(last, e.timestamp)
        t.tokens.add(e.usage)
        if e.cost:
            t.cost += e.cost
        if e.role == ASSISTANT and e.latency_s is not None:
            t.model_latency_s = (t.model_latency_s or 0.0) + e.latency_s
        if e.role == TOOL_RESULT:
            if e.is_error:
                t.tool_errors += 1
            if e.duration_s is not None:
                t.tool_time_s = (t.tool_time_s or 0.0) + e.duration_s
        for call in e.tool_calls:
            t.tool_calls += 1
            t.tools[call.name] = t.tools.get(call.name, 0) + 1
            _files(call.name, call.arguments, t)
    if first is not None and last is not None:
        t.duration_s = last - first
    return t


def _files(name: str, args: Any, t: Totals) -> None:
    low = name.lower()
    if low in WRITE_TOOLS:
        target = t.files_written
    elif low in EDIT_TOOLS:
        target = t.files_edited
    else:
        return
    paths: list[str] = []
    if isinstance(args, dict):
        for key in PATH_KEYS:
            if isinstance(args.get(key), str):
                paths.append(args[key])
                break
        patch = args.get("input") or args.get("patch")
        if not paths and isinstance(patch, str):
            paths = [m.group(2).strip() for m in _PATCH_FILE.finditer(patch)]
    elif isinstance(args, str):  # codex apply_patch takes the patch text itself
        paths = [m.group(2).strip() for m in _PATCH_FILE.finditer(args)]
    for p in paths:
        if p not in target:
            target.append(p)


def turns(entries: list[Entry]) -> list[Turn]:
    """Split the active path at each user entry; entries before the first prompt form turn 0."""
    starts = [i for i, e in enumerate(entries) if e.role == USER]
    if not entries:
        return []
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    bounds = list(zip(starts, starts[1:] + [len(entries)]))
    return [Turn(index=n, start=a, end=b, totals=compute(entries[a:b])) for n, (a, b) in enumerate(bounds)]


def fill_totals(transcript: Transcript) -> None:
    transcript.totals = compute(transcript.entries)
    transcript.turns = turns(transcript.entries)
