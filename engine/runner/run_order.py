"""The order a batch starts its runs in when several run at once.

The batch's wall time is set by its tail: a long run started last keeps one
slot busy while the others sit idle. So the longest runs start first. What a
run will take is read from the store (the answer's own last run) or learnt
as the batch goes (the mean of its challenge's runs so far, this batch's and
earlier ones'); a challenge no run has timed yet goes first of all, in the
order asked, so its cost is known before the rest are ordered.
"""
from __future__ import annotations

import threading
from collections import defaultdict


class LongestFirst:
    """Hands out the indexes of ``pairs`` (model, challenge), longest expected first."""

    def __init__(self, pairs: list[tuple[str, str]], last_s: dict[tuple[str, str], float]):
        self.pairs = pairs
        self.last_s = last_s
        self.pending = list(range(len(pairs)))
        # per challenge: seconds summed and runs counted, so an estimate costs no more
        # than a lookup however many runs a batch of thousands has finished
        self.by_challenge: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])
        for (_, challenge), seconds in last_s.items():
            self._add(challenge, seconds)
        self._lock = threading.Lock()

    def _add(self, challenge: str, seconds: float) -> None:
        seen = self.by_challenge[challenge]
        seen[0] += seconds
        seen[1] += 1

    def expected_s(self, i: int) -> float | None:
        pair = self.pairs[i]
        if pair in self.last_s:
            return self.last_s[pair]
        seen = self.by_challenge.get(pair[1])
        return seen[0] / seen[1] if seen else None

    def _order_key(self, i: int) -> tuple[bool, float, int]:
        expected = self.expected_s(i)
        return expected is not None, -(expected or 0.0), i

    def take(self) -> int | None:
        """The next pair to start (None: none left)."""
        with self._lock:
            if not self.pending:
                return None
            best = min(self.pending, key=self._order_key)
            self.pending.remove(best)
            return best

    def drop_rest(self) -> None:
        with self._lock:
            self.pending.clear()

    def finished(self, i: int, seconds: float | None) -> None:
        """A run of pair ``i`` took ``seconds`` (None: it did not run)."""
        if seconds is not None:
            with self._lock:
                self._add(self.pairs[i][1], seconds)
