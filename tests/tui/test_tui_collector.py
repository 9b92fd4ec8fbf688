"""tui/collector.py: full garbage collections wait for a pause in the input."""
from __future__ import annotations

import gc

from tui.app import BenchApp
from tui.collector import IDLE_S, NEVER, IdleCollector


async def settle(app, pilot) -> None:
    for _ in range(3):
        await pilot.pause()
        await app.workers.wait_for_complete()
    await pilot.pause()


def test_a_full_collection_runs_once_per_pause_never_right_after_input(monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr("tui.collector.time.monotonic", lambda: clock[0])
    runs = []
    monkeypatch.setattr("tui.collector.gc.collect", lambda *a: runs.append(a) or 0)
    collector = IdleCollector()
    collector.input()
    clock[0] += IDLE_S / 2
    collector.tick()
    assert runs == []  # a key was pressed a moment ago
    clock[0] += IDLE_S
    collector.tick()
    collector.tick()
    assert len(runs) == 1 and collector.collections == 1  # once per pause
    collector.input()
    clock[0] += IDLE_S - 0.01
    collector.tick()
    assert len(runs) == 1
    clock[0] += 0.02
    collector.tick()
    assert len(runs) == 2


def test_start_freezes_and_takes_full_collections_off_allocation_counts():
    class FakeApp:
        intervals = []

        def set_interval(self, seconds, callback):
            self.intervals.append((seconds, callback))

    before, enabled = gc.get_threshold(), gc.isenabled()
    collector = IdleCollector()
    try:
        gc.disable()
        collector.start(FakeApp())
        assert gc.isenabled() and gc.get_freeze_count() > 0
        assert gc.get_threshold()[:2] == before[:2] and gc.get_threshold()[2] == NEVER
        assert FakeApp.intervals == [(IDLE_S / 2, collector.tick)]
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
        (gc.enable if enabled else gc.disable)()


async def test_the_dashboard_tells_its_collector_of_input_and_freezes_the_first_whole_matrix(demo_wb):
    class Recorder(IdleCollector):
        frozen = 0

        def freeze(self) -> None:  # the test process's objects stay collectable
            self.frozen += 1

    app = BenchApp(demo_wb, scan_on_start=False)
    app.collector = Recorder()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        assert app.collector.frozen == 1
        app.collector.collected_since_input = True
        await pilot.press("down")
        assert not app.collector.collected_since_input
        await pilot.press("s")  # another matrix load: still frozen once
        await settle(app, pilot)
        assert app.collector.frozen == 1
    assert app.errors == []
