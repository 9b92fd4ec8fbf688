"""Python's cyclic garbage collector, kept out of key presses.

A full collection walks every object the program holds. At 10,000 answers
(the whole matrix, its cell renderings, the leaderboard's tables, Textual's
widgets) one took 50-190 ms on this project's 2-core machine, and they came
inside key presses: a sort that takes 60 ms took 210. So, for the dashboard
that `benchtui` runs (never for apps made in tests, which would keep each
other's garbage):

- what start-up and the first whole matrix made lives as long as the app,
  and is frozen (``gc.freeze``: out of the collector's reach; reference
  counting still frees it, only reference cycles among it stay until exit);
- full collections are not started by allocation counts any more, but when
  the person has not pressed a key or moved the mouse for ``IDLE_S``, once
  per such pause. Young objects are still collected as before (generations
  0 and 1, a few milliseconds each).
"""
from __future__ import annotations

import gc
import time

IDLE_S = 2.0  # no input for this long: a full collection will not delay a key
NEVER = 1 << 30  # generation 2's threshold: allocation counts never start a full collection


class IdleCollector:
    def __init__(self) -> None:
        self.last_input = time.monotonic()
        self.collected_since_input = True
        self.collections = 0  # full collections run at idle (tests read it)

    def start(self, app) -> None:
        """From the first frame on (``app.after_first_frame``)."""
        gc.freeze()
        first, second, _ = gc.get_threshold()
        gc.set_threshold(first, second, NEVER)
        gc.enable()
        app.set_interval(IDLE_S / 2, self.tick)

    def freeze(self) -> None:
        """Objects made so far live as long as the app: out of the collector's reach."""
        gc.freeze()

    def input(self) -> None:
        self.last_input = time.monotonic()
        self.collected_since_input = False

    def tick(self) -> None:
        if not self.collected_since_input and time.monotonic() - self.last_input >= IDLE_S:
            self.collected_since_input = True
            gc.collect()
            self.collections += 1
