"""What the ctrl+p palette searches: every jump target's text, indexed once.

At bench/scale.py's size (50 models x 200 challenges) there are ~80,000
targets (models, challenges, answers, files, transcripts). The palette used
to score each with Textual's fuzzy matcher on every keystroke (over 10 s a
key); here a keystroke is a substring search over one joined, lower-cased
string (``str.find`` in C), stopped once ``LIMIT`` targets are found, with a
subsequence (fuzzy) search as the fallback. Targets are kept in priority
order (models, challenges, answers, then each answer's files), so the first
``LIMIT`` found are the ones worth showing; the palette scores and highlights
only those.

The index is built from the store in one pass of three queries, kept on the
app and rebuilt only when a scan has run since (the scans table's newest
row); the matrix builds it in its worker after each rescan, so the palette
usually opens on a built one. No Textual import here: workers build it.
"""
from __future__ import annotations

import re
import threading
from bisect import bisect_right
from dataclasses import dataclass

from benchtui.store import answers_sql

LIMIT = 50  # targets a keystroke hands to the palette at most


@dataclass(frozen=True)
class Target:
    text: str           # what the palette shows: "answer glm5/kv"
    help: str
    action: str         # "matrix", "answer" or "transcript"
    model: str | None = None
    challenge: str | None = None
    relpath: str | None = None


HELP = {"model": "jump to the model's column", "challenge": "jump to the challenge's row",
        "answer": "open the answer", "transcript": "open the transcript", "file": "open the answer at this file"}


class PaletteIndex:
    def __init__(self, rows: list[tuple[str, str | None, str | None, str | None]], version=None) -> None:
        """``rows``: (kind, model, challenge, relpath), kind one of HELP's keys, in priority order."""
        self.version = version
        self.rows = rows
        texts = [_text(*r) for r in rows]
        self.texts = texts
        self._lows = [t.lower() for t in texts]
        self._joined = "\n".join(self._lows)
        starts, at = [], 0
        for low in self._lows:
            starts.append(at)
            at += len(low) + 1
        self._starts = starts

    def __len__(self) -> int:
        return len(self.rows)

    def target(self, i: int) -> Target:
        kind, model, challenge, relpath = self.rows[i]
        action = "matrix" if kind in ("model", "challenge") else "transcript" if kind == "transcript" else "answer"
        return Target(self.texts[i], HELP[kind], action, model, challenge, relpath)

    def first(self, n: int) -> list[Target]:
        return [self.target(i) for i in range(min(n, len(self.rows)))]

    def search(self, query: str, limit: int = LIMIT) -> list[Target]:
        """Targets holding every word of ``query`` as a substring (any order), in
        priority order; if none does, targets holding every word's letters in
        order (the fuzzy matcher's rule). At most ``limit``."""
        terms = query.lower().split()
        if not terms:
            return []
        found = self._substrings(terms, limit)
        if not found:
            found = self._subsequences(terms, limit)
        return [self.target(i) for i in found]

    def _entry_at(self, pos: int) -> int:
        return bisect_right(self._starts, pos) - 1

    def _substrings(self, terms: list[str], limit: int) -> list[int]:
        joined, lows, starts = self._joined, self._lows, self._starts
        # walk the rarest word's places (str.count is C, a few ms) and test the others there
        lead = min(terms, key=joined.count) if len(terms) > 1 else terms[0]
        rest = [t for t in terms if t is not lead]
        out: list[int] = []
        pos = joined.find(lead)
        while pos != -1 and len(out) < limit:
            i = self._entry_at(pos)
            if all(t in lows[i] for t in rest):
                out.append(i)
            nxt = starts[i + 1] if i + 1 < len(starts) else len(joined)
            pos = joined.find(lead, nxt)
        return out

    def _subsequences(self, terms: list[str], limit: int) -> list[int]:
        # the longest word leads (more letters, fewer lines to test the others on)
        patterns = sorted((_subsequence(t) for t in terms), key=lambda p: -len(p.pattern))
        lead, rest = patterns[0], patterns[1:]
        if not all(p.search(self._joined) for p in rest):
            return []  # a word no target holds (a typo): said without walking the lead's matches
        out: list[int] = []
        seen = -1
        for match in lead.finditer(self._joined):
            i = self._entry_at(match.start())
            if i == seen:
                continue
            seen = i
            if all(p.search(self._lows[i]) for p in rest):
                out.append(i)
                if len(out) >= limit:
                    break
        return out


def _subsequence(term: str) -> re.Pattern:
    """``term``'s letters in order within one line. Each gap is possessive and
    stops at the next letter: the first place a letter can go is always as good
    as a later one, so nothing is retried. The lazy ``a[^\n]*?b`` it replaces
    backtracked through every combination when a line did not match: ~0.2 s a
    key over 70,000 targets for a query nothing held (a typo), now ~20 ms."""
    head, rest = re.escape(term[0]), term[1:]
    return re.compile(head + "".join(f"[^{re.escape(c)}\n]*+{re.escape(c)}" for c in rest))


def _text(kind: str, model: str | None, challenge: str | None, relpath: str | None) -> str:
    if kind == "model":
        return f"model {model}"
    if kind == "challenge":
        return f"challenge {challenge}"
    if kind == "answer":
        return f"answer {model}/{challenge}"
    return f"{kind} {model}/{challenge}/{relpath}"


def store_version(store) -> object:
    """Changes whenever a scan starts or finishes (the targets come from scans only)."""
    return answers_sql.last_scan_mark(store)


def build_index(store) -> PaletteIndex:
    version = store_version(store)
    rows: list[tuple] = [("model", name, None, None) for name in store.model_names()]
    rows += [("challenge", None, cid, None) for cid in store.challenge_ids()]
    rows += [("answer", m, c, None) for m, c in answers_sql.present_answer_cells(store)]
    rows += [("transcript" if kind == "transcript" else "file", m, c, rel)
             for m, c, rel, kind in answers_sql.present_answer_files(store)]
    return PaletteIndex(rows, version)


_LOCK = threading.Lock()


def palette_index(app, store=None) -> PaletteIndex:
    """The app's index, rebuilt if a scan has run since it was built. ``store``:
    a connection for this thread (a worker's); the app's own otherwise."""
    store = store or app.store
    with _LOCK:
        index = getattr(app, "_palette_index", None)
        if index is None or index.version != store_version(store):
            index = build_index(store)
            app._palette_index = index
        return index
