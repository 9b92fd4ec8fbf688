"""Notice what other processes write to the store (a `benchtui run` in another
terminal) without ctrl+r: SQLite's ``data_version`` changes when another
connection commits; reading it costs microseconds, so a screen polls it."""
from __future__ import annotations

from collections.abc import Callable

from benchtui.store import answers_sql

WATCH_S = 2.0  # seconds between polls; tests lower it
EDITS_S = 5.0  # seconds between looks (stat) at the answer files a shown verdict rests on; tests lower it
IDLE_S = 1.0  # ... taken only once no key or mouse event came for this long: never in a key's way


def data_version(app) -> int | None:
    try:
        return answers_sql.data_version(app.store)
    except Exception:
        return None  # a closed or damaged store: the screen's own loads report it


def store_fingerprint(app) -> tuple | None:
    """Changes whenever anything is written to the store: SQLite's data_version
    moves with every other connection's commit (workers and other processes),
    total_changes with every write through the app's own. None for a closed or
    damaged store (the screen's own loads report it)."""
    try:
        return answers_sql.change_mark(app.store)
    except Exception:
        return None


def watch_store(screen, on_change: Callable[[], None], interval: float | None = None) -> None:
    """Call ``on_change`` (on the main thread) when the store changed since the
    last poll and ``screen`` is the one on top (a screen reloads on resume anyway)."""
    seen = {"version": data_version(screen.app)}

    def poll() -> None:
        version = data_version(screen.app)
        if version is None or version == seen["version"]:
            return
        if screen.app.screen is not screen:
            return  # keep the old version: the change is picked up once it is on top again
        seen["version"] = version
        on_change()

    screen.set_interval(WATCH_S if interval is None else interval, poll)
