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
from collections.abc import Callable
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

ANSWER, ADAPTER = 1, 2  # a code object's kind (0: neither)


class Reach:
    def __init__(self, folder: Path, adapter: Path | None):
        self.folder = str(Path(folder).resolve()) + "/"
        self.adapter = {str(adapter), str(Path(adapter).resolve())} if adapter else set()
        self.counts: dict[CodeType, int] = {}  # answer function -> calls; named only in the report
        self.entries: Counter[str] = Counter()
        self.direct: dict[str, Counter[CodeType]] = defaultdict(Counter)
        self.entry: str | None = None

    def _kind(self, filename: str) -> int:
        if filename in self.adapter:
            return ADAPTER
        if filename.startswith(self.folder):
            return ANSWER
        return 0

    def _name(self, code: CodeType) -> str:
        return f"{code.co_filename[len(self.folder):]}:{code.co_qualname}"

    def hook(self) -> Callable[[FrameType, str, object], None]:
        """The profile function: called on every Python and C call and return in the
        process, so it does as little as it can per event. Each file's kind is worked
        out once, and calls are counted by code object, named only in the report
        (a loop over a generator in the answer's code is a call per item)."""
        kinds: dict[str, int] = {}  # by file name: equal code objects of two files compare equal
        kind_of, counts, entries, direct = self._kind, self.counts, self.entries, self.direct

        def profile(frame: FrameType, event: str, arg: object) -> None:
            if event != "call":
                return
            code = frame.f_code
            kind = kinds.get(code.co_filename)
            if kind is None:
                kind = kinds[code.co_filename] = kind_of(code.co_filename)
            if not kind:
                return
            caller = frame.f_back
            caller_kind = 0
            if caller is not None:
                filename = caller.f_code.co_filename
                known = kinds.get(filename)
                if known is None:
                    known = kinds[filename] = kind_of(filename)
                caller_kind = known
            if kind == ADAPTER:
                if not caller_kind:  # called from the wire: the checker asked for it
                    self.entry = code.co_name
                    entries[code.co_name] += 1
                return
            counts[code] = counts.get(code, 0) + 1
            if caller_kind == ADAPTER and self.entry is not None:
                direct[self.entry][code] += 1

        return profile

    def report(self) -> dict[str, dict[str, Any]]:
        calls: Counter[str] = Counter()
        for code, n in self.counts.items():  # a module imported again has new code objects of the same name
            calls[self._name(code)] += n
        direct: dict[str, dict[str, int]] = {}
        for entry, counted in self.direct.items():
            named: Counter[str] = Counter()
            for code, n in counted.items():
                named[self._name(code)] += n
            direct[entry] = dict(named)
        return {"calls": dict(calls), "entries": dict(self.entries), "direct": direct}


_active: Reach | None = None


def start(folder: Path, adapter: Path | None) -> None:
    global _active
    _active = Reach(folder, adapter)
    sys.setprofile(_active.hook())


def stop() -> dict[str, dict[str, Any]]:
    global _active
    sys.setprofile(None)
    out = _active.report() if _active is not None else {"calls": {}, "entries": {}, "direct": {}}
    _active = None
    return out
