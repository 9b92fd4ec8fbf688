"""The store's timestamps: one reading of the clock each, so they never run backwards."""
import time
import types

from benchtui.store import database


def test_now_iso_formats_one_reading_of_the_clock(monkeypatch):
    # just before a second boundary, then just after it
    readings = iter([1_750_000_000.9996, 1_750_000_001.0004])
    fake = types.SimpleNamespace(time=lambda: next(readings), gmtime=time.gmtime, strftime=time.strftime)
    monkeypatch.setattr(database, "time", fake)
    first, second = database.now_iso(), database.now_iso()
    assert (first, second) == ("2025-06-15T15:06:40.999Z", "2025-06-15T15:06:41.000Z")
    assert first < second
