"""The trusted-timing core (engine/verify/timing/core.py) and the CUDA
harness's timing cycle read by value: a stand-in for the answer's library
host served over a real wire by a thread (the answer's side), whose cycle
returns a lazy object or more than its outputs; no GPU needed."""
from __future__ import annotations

import math
import socket
import threading
import time
import types

import numpy as np
import pytest
from benchtui.verify import wire
from benchtui.verify.cuda import suite as cuda_suite
from benchtui.verify.timing import core as TT

ROWS = 64
OUTPUTS = [("float32", ROWS, 0)]


class Device:
    """The checker's own view of the device (cuda_device.CheckerDevice's interface)."""

    info = {"name": "stand-in", "peak_bytes_per_s": 1e12, "l2_bytes": 1 << 20}

    def empty_cycles(self, inputs, outputs, scratch, seeds, launches=1):
        return [2e-5 + 1e-6 * (i % 3) for i, _ in enumerate(seeds)]


class Host:
    """The answer's side: a cycle that sleeps 2 ms and returns its output rows."""

    def __init__(self, reply=None):
        self.reply = reply

    def timing_setup(self, inputs, outputs, scratch, launches=1):
        pass

    def timing_release(self):
        pass

    def timing_cycle(self, seeds, trial, scalars):
        if self.reply is not None:
            return self.reply(seeds, trial)
        time.sleep(0.002)
        return {"rc": 0, "error": "", "seconds": 0.002, "outputs": [[np.full(ROWS, trial, dtype=np.float32)]]}


class Lazy:
    """Does the cycle's work only when the checker reads the reply."""

    def __init__(self, seeds, trial):
        self.trial = trial

    def get(self, key, default=None):
        return self[key]

    def __getitem__(self, key):
        time.sleep(0.002)
        return {"rc": 0, "error": "", "seconds": 0.0, "outputs": [[np.full(ROWS, self.trial, dtype=np.float32)]]}[key]


@pytest.fixture
def served():
    """A proxy for ``host`` on the other end of a real wire."""
    made = []

    def serve(host):
        here, there = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        answer = wire.Peer(wire.Connection(there), trusting=True, ops={"host": lambda _: host})
        thread = threading.Thread(target=answer.serve_forever, daemon=True)
        thread.start()
        checker = wire.Peer(wire.Connection(here), trusting=False)
        made.append((checker, thread, here, there))
        return checker.call_op("host")

    yield serve
    for checker, thread, here, there in made:
        checker.close()
        thread.join(timeout=5)
        here.close()
        there.close()


def timed(host_proxy, trials: int = 6):
    def verify(trial, seeds, outputs):
        ok = np.array_equal(outputs[0][0], np.full(ROWS, trial, dtype=np.float32))
        return ROWS, 0 if ok else ROWS, None if ok else "wrong rows"

    seeds = [[[t]] for t in range(trials)]
    return cuda_suite.timed_cycles(types.SimpleNamespace(peer=None), host_proxy, Device(), [("float32", 8, 0, 0)],
                                   OUTPUTS, 0, seeds, 1, [], verify)


def test_an_honest_cycle_over_the_wire_is_timed_with_its_resolution(served):
    run = timed(served(Host()))
    fig = run["trusted"]
    assert run["rows_wrong"] == 0 and len(run["walls"]) == 5
    assert fig["resolved"] and fig["median_s"] >= 0.0019 and fig["resolution_s"] > 0
    assert fig["empty_cycle"]["s"] == pytest.approx(2.1e-5, rel=0.2)
    details, flags, _ = cuda_suite.timing_details(run, Device.info, 1 << 10, 0.5)
    assert not flags and details["resolution_s"] == fig["resolution_s"] and details["trusted"] is fig


def test_a_lazy_cycle_reply_is_an_error_naming_the_handle(served):
    """The answer's library replaces the cycle with one returning a lazy
    object: its work would run as the checker reads the reply, after the
    clock stopped. The reply is read by value: an error, the handle named."""
    with pytest.raises(cuda_suite.CudaFault, match="handle to an object 'Lazy'"):
        timed(served(Host(reply=lambda seeds, trial: Lazy(seeds, trial))))


def test_a_cycle_reply_past_its_outputs_size_is_refused(served):
    big = {"rc": 0, "error": "", "seconds": 0.001, "outputs": [[np.zeros(ROWS, dtype=np.float32)]],
           "extra": np.zeros(16 << 20, dtype=np.uint8)}
    with pytest.raises(cuda_suite.CudaFault, match="over the 320 bytes of the output buffers"):
        timed(served(Host(reply=lambda seeds, trial: big)))


def test_a_time_at_or_below_the_resolution_is_no_figure():
    empty = TT.empty_cycle([1e-4, 1.2e-4, 0.9e-4, 1.1e-4, 1e-4], calls=4)
    assert TT.resolution_s(empty) == pytest.approx(empty["iqr_s"] / 4)
    fig = TT.figure(TT.per_call([1e-4, 1.01e-4, 0.99e-4, 1e-4], empty), empty, "test")
    assert not fig["resolved"] and fig["median_s"] is None
    assert "below the resolution" in TT.describe(fig) and "no figure" in TT.describe(fig)
    slow = TT.figure(TT.per_call([4.1e-3, 4.0e-3, 4.2e-3], empty), empty, "test")
    assert slow["resolved"] and slow["median_s"] == pytest.approx((4.1e-3 - 1e-4) / 4)
    assert "resolution" in TT.describe(slow)


def test_a_time_exactly_at_the_resolution_is_no_figure():
    """The resolution is the smallest time a window resolves: a median equal to it is
    still no figure; the next representable time above it is one."""
    empty = {"s": 0.0, "iqr_s": 0.5, "calls": 2}
    res = TT.resolution_s(empty)
    assert res == 0.25
    at = TT.figure([res] * 5, empty, "test")
    assert not at["resolved"] and at["median_s"] is None and "no figure" in TT.describe(at)
    above = TT.figure([math.nextafter(res, 1.0)] * 5, empty, "test")
    assert above["resolved"] and above["median_s"] > res


def test_a_median_the_windows_scatter_across_is_no_figure():
    """One call a window on a steady empty cycle (jitter 1 us) and windows that read 1, 9, 1, 9,
    1 ms a call: their median, 1 ms, stands far above the empty window's jitter but not above
    the windows' own spread (8 ms), so it is no figure; the same windows steady are one."""
    empty = TT.empty_cycle([1e-4, 1.01e-4, 0.99e-4, 1e-4, 1e-4], calls=1)
    scattered = TT.figure([1e-3, 9e-3, 1e-3, 9e-3, 1e-3], empty, "test")
    assert not scattered["resolved"] and scattered["median_s"] is None
    assert scattered["resolution_s"] == pytest.approx(8e-3) and "no figure" in TT.describe(scattered)
    steady = TT.figure([1e-3, 1.1e-3, 0.9e-3, 1.05e-3, 1e-3], empty, "test")
    assert steady["resolved"] and steady["median_s"] == pytest.approx(1e-3)
    assert steady["resolution_s"] == pytest.approx(5e-5)  # the windows' IQR, wider than the empty window's
    few = TT.figure([1e-3, 9e-3, 1e-3], empty, "test")  # too few windows to measure a spread
    assert few["resolved"] and few["resolution_s"] == pytest.approx(TT.resolution_s(empty))


def test_cuda_timing_details_flag_an_unresolved_time():
    empty = TT.empty_cycle([1e-4, 3e-4, 1e-4, 3e-4], calls=1)
    run = {"walls": TT.per_call([1e-4, 1.5e-4, 2e-4], empty), "events": [1e-6] * 3, "rows_wrong": 0,
           "empty_cycle": empty}
    details, flags, _ = cuda_suite.timing_details(run, Device.info, 1 << 10, 0.5)
    assert any("resolution" in f for f in flags) and details["flagged"]


def test_windows_are_sized_above_the_empty_cycle_s_jitter():
    assert TT.window_calls(1e-3, 1e-4) == 1
    assert TT.window_calls(1e-5, 1e-4) == 32  # capped
    assert TT.window_calls(2e-5, 1e-5) == 5
    assert TT.window_calls(-1e-5, 1e-4) == 32  # an estimate at or below zero: the most calls


def test_a_window_lasts_a_few_milliseconds_of_calls_at_least():
    """A 1 ms call stands well above a quiet machine's jitter in one call, but a window of one
    call carries whole what starts it (the answer's process woken after the checker drew the
    window's inputs): a window holds 5 ms of calls at least, within the cap."""
    assert TT.window_calls_by_span(1e-3) == 5
    assert TT.window_calls_by_span(2e-3) == 3
    assert TT.window_calls_by_span(0.1) == 1
    assert TT.window_calls_by_span(1e-5) == 32  # capped
    assert TT.window_calls_by_span(1e-5, cap=8) == 8
    assert TT.window_calls_by_span(-1e-3) == 32  # an estimate at or below zero: the most calls


def test_the_geomean_names_the_shapes_it_leaves_out():
    g, covered, left = TT.geomean({"shape0": 0.25, "shape1": None, "shape2": 1.0, "shape3": 0.0})
    assert g == pytest.approx(0.5) and covered == ["shape0", "shape2"] and left == ["shape1", "shape3"]
    assert TT.geomean({"shape0": None}) == (None, [], ["shape0"])


class JitteryDevice(Device):
    """An empty cycle whose jitter (IQR 0.1 ms) a window of one short launch cannot stand above."""

    def empty_cycles(self, inputs, outputs, scratch, seeds, launches=1):
        return [2e-5 + 1e-4 * (i % 2) for i, _ in enumerate(seeds)]


class Launches(Host):
    """Each launch takes ``per_launch_s`` of the checker's clock (a stand-in clock this
    host moves, so the load of the machine running the tests does not); the window
    is as many launches as set up."""

    def __init__(self, per_launch_s: float, monkeypatch):
        super().__init__()
        self.per_launch_s, self.launches, self.setups, self.calls, self.now = per_launch_s, 1, [], 0, 0.0
        monkeypatch.setattr(cuda_suite, "time", types.SimpleNamespace(perf_counter=lambda: self.now))

    def timing_setup(self, inputs, outputs, scratch, launches=1):
        self.launches = launches
        self.setups.append(launches)

    def timing_cycle(self, seeds, trial, scalars):
        self.calls += 1
        assert len(seeds) == self.launches
        self.now += 2e-5 + self.per_launch_s * self.launches
        return {"rc": 0, "error": "", "seconds": 0.0,
                "outputs": [[np.full(ROWS, 1000 * trial + launch, dtype=np.float32)] for launch in range(self.launches)]}


def windowed(host, trials: int = 6, warmup: int = 2, launches: int = 1):
    verified = []

    def verify(trial, seeds, outputs):
        assert len(outputs) == len(seeds)
        ok = all(np.array_equal(out[0], np.full(ROWS, 1000 * trial + launch, dtype=np.float32))
                 for launch, out in enumerate(outputs))
        verified.append((trial, len(outputs)))
        return ROWS * len(outputs), 0 if ok else ROWS, None if ok else "wrong rows"

    def reseed(n):
        return [[[t, launch] for launch in range(n)] for t in range(trials)]

    run = cuda_suite.timed_cycles(types.SimpleNamespace(peer=None), host, JitteryDevice(), [("float32", 8, 0, 0)],
                                  OUTPUTS, 0, reseed(launches), warmup, [], verify, launches=launches, reseed=reseed)
    return run, verified


def test_a_window_too_short_for_the_empty_cycle_s_jitter_is_widened(monkeypatch):
    """Launches of 0.13 ms against an empty cycle's 0.1 ms jitter: the window
    grows until it stands ten times above it, every launch of it verified, and
    the run says how wide its windows were."""
    host = Launches(1.3e-4, monkeypatch)
    run, verified = windowed(host)
    wide = run["launches"]
    # a warm-up cycle is 0.02 + 0.13 ms; less the empty cycle's median (0.07 ms), 0.08 ms a launch
    assert wide == TT.window_calls(8e-5, 1e-4) == 13 and host.setups == [1, wide]
    assert all(len(cycle) == wide for cycle in run["seeds"])
    assert verified[:2] == [(0, 1), (1, 1)] and verified[2:] == [(t, wide) for t in range(6)]  # warmed up again
    assert run["rows_checked"] == ROWS * (2 + 6 * wide) and run["rows_wrong"] == 0
    assert run["walls"] == pytest.approx([2e-5 + 1.3e-4 * wide - 7e-5] * 4) and run["trusted"]["resolved"]


def test_a_window_wide_enough_is_kept_and_its_warm_up_not_run_twice(monkeypatch):
    host = Launches(5e-3, monkeypatch)
    run, verified = windowed(host, launches=2)
    assert run["launches"] == 2 and host.setups == [2, 2] and host.calls == 6
    assert verified == [(t, 2) for t in range(6)] and len(run["walls"]) == 4


def test_without_reseed_the_challenge_s_window_stands(monkeypatch):
    host = Launches(1e-4, monkeypatch)
    verified = []

    def verify(trial, seeds, outputs):
        verified.append(trial)
        return ROWS, 0, None

    run = cuda_suite.timed_cycles(types.SimpleNamespace(peer=None), host, JitteryDevice(), [("float32", 8, 0, 0)],
                                  OUTPUTS, 0, [[[t]] for t in range(5)], 1, [], verify)
    assert run["launches"] == 1 and host.setups == [1] and verified == [0, 1, 2, 3, 4]
    assert run["trusted"]["calls_per_window"] == 1
