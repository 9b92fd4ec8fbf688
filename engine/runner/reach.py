"""Which of the answer's functions a check reached, and what its adapter did.

Runs in the answer's process (``reach_start`` / ``reach_stop`` ops of
``engine.runner.answer_server``) while the checker asks for it, around the
correctness checks only (a profile hook slows every Python call down, so
timings and memory scenarios run without it). Measured, not declared:

- ``calls``: "file.py:Qualname" -> calls of each function defined in the
  answer's files, from anywhere (the adapter or the answer's own code);
- ``entries``: adapter function -> how often the checker called it;
- ``direct``: adapter function -> "file.py:Qualname" -> calls the adapter's
  own code made into that answer function while serving that entry. An
  adapter that calls the answer's attention once per sequence in every
  ``decode`` shows up here as B calls per entry: the batching is its own.

It runs beside the answer, so an answer could tamper with it: it steers the
coverage report (a requirement met only by the adapter counts as not
exercised), and the checker never takes it as proof of a pass.
"""
from __future__ import annotations

import sys
from collections import Counter, defaultdict
from pathlib import Path
from types import CodeType, FrameType
from typing import Any


class Reach:
    def __init__(self, folder: Path, adapter: Path | None):
        self.folder = str(Path(folder).resolve()) + "/"
        self.adapter = {str(adapter), str(Path(adapter).resolve())} if adapter else set()
        self.calls: Counter[str] = Counter()
        self.entries: Counter[str] = Counter()
        self.direct: dict[str, Counter[str]] = defaultdict(Counter)
        self.entry: str | None = None
        self._names: dict[CodeType, str] = {}

    def _kind(self, filename: str) -> str | None:
        if filename in self.adapter:
            return "adapter"
        if filename.startswith(self.folder):
            return "answer"
        return None

    def _key(self, code: CodeType) -> str:
        key = self._names.get(code)
        if key is None:
            key = self._names[code] = f"{code.co_filename[len(self.folder):]}:{code.co_qualname}"
        return key

    def __call__(self, frame: FrameType, event: str, arg: object) -> None:
        if event != "call":
            return
        code = frame.f_code
        kind = self._kind(code.co_filename)
        if kind is None:
            return
        caller = frame.f_back
        caller_kind = self._kind(caller.f_code.co_filename) if caller is not None else None
        if kind == "adapter":
            if caller_kind is None:  # called from the wire: the checker asked for it
                self.entry = code.co_name
                self.entries[code.co_name] += 1
            return
        self.calls[self._key(code)] += 1
        if caller_kind == "adapter" and self.entry is not None:
            self.direct[self.entry][self._key(code)] += 1

    def report(self) -> dict[str, dict[str, Any]]:
        return {"calls": dict(self.calls), "entries": dict(self.entries),
                "direct": {entry: dict(c) for entry, c in self.direct.items()}}


_active: Reach | None = None


def start(folder: Path, adapter: Path | None) -> None:
    global _active
    _active = Reach(folder, adapter)
    sys.setprofile(_active)


def stop() -> dict[str, dict[str, Any]]:
    global _active
    sys.setprofile(None)
    out = _active.report() if _active is not None else {"calls": {}, "entries": {}, "direct": {}}
    _active = None
    return out
