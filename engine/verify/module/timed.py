"""The timed windows and the time figures of a module-harness run (a piece of ModuleRun).

Time per call by this side's clock around windows of whole cycles (staging
and the output's fetch included), less the same window without the answer
(engine/verify/module/timing.py ``EmptyWindow``), with its resolution (the
shared core, engine/verify/timing/core.py: no figure at or below it); every
timed call's output verified after its window. Beside it, the deck's own
timing loop run in the answer's process ("as published", its word) and the
peak fractions by the deck's formulas; a gap between the two times is flagged.
"""
from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from typing import Any

from benchtui.records.verdicts import ERROR, PASS
from benchtui.verify import wire
from benchtui.verify.module import contention, offclock
from benchtui.verify.module import rules as R
from benchtui.verify.module.checking import Checking
from benchtui.verify.module.spec import CORRECT
from benchtui.verify.module.state import BadReply, CallFailed, as_list, encode


class Timed(Checking):
    def timed_calls_least(self) -> int:
        """The fewest calls the timing at one shape makes of a right answer: three one-call
        probe windows, then its windows of at least one call each (the untimed sentinels
        beside them are left out, so this is a floor)."""
        return 3 + int(self.suite.threshold("timed_calls", min(self.spec.num_perf_trials, 20)))

    def sentinel(self, ref: Any, index: int, w: int, calls: int, c: Any, label: str) -> None:
        """One traced, untimed call slipped in before timed window ``w``: fresh secret
        inputs drawn as the window's are, written in place into the slot (picked by
        the secret seed) whose window call comes next, through the same cycle the
        window calls. The answer's process cannot tell it from a timed call but by
        detecting the trace itself; one that calls a forbidden op only when its time
        counts is seen here."""
        if not self.tracing:
            return
        seed = self._secret("sentinel", index, w)
        slot = seed % max(1, calls)
        inputs = self.inputs(ref, seed)
        expected = self.expect(inputs)
        record = self.put(inputs, in_place=True, slot=slot)
        where = {"shape": label, "seed": seed, "case": "nominal", "window": w, "call": "untimed"}
        got = self._host("cycle", slot, True, limit=self.output_limit(as_list(expected)))
        try:
            self.judge(inputs, expected, got, record, {"name": "nominal"}, deck=False, where=where, traced=True)
        except CallFailed as exc:
            c.details["where"] = where
            c.fail(f"{exc.requirement}: {label}, an untimed call before timed window {w} (seed {seed}): {exc}")

    def window(self, ref: Any, index: int, tag: int | str, calls: int, c: Any, label: str) -> tuple[float, list[float]]:
        """One timed window: ``calls`` calls on fresh secret inputs, each in its
        own slot, under this side's clock from the first call's inputs to the last
        reply. Each call's inputs are drawn, and its reference outputs computed,
        before the clock starts, but reach the answer's process only inside it:
        written into the pages that slot's last call read just before the call's
        request (``reserve``/``hand_over``), as the empty window writes its own.
        Each reply is read by value before the clock stops; every output verified
        after. What this thread waited for a CPU meanwhile (the scheduler's count,
        read outside the clock) is the checker's overhead, taken off the window as
        the empty window takes its own off. Returns the window's seconds and the
        answer's own ms per call."""
        planned = []
        for j in range(calls):
            seed = self._secret("timed", index, tag, j)
            inputs = self.inputs(ref, seed)
            expected = self.expect(inputs)
            planned.append((seed, inputs, expected, self.reserve(inputs, slot=j),
                            self.output_limit(as_list(expected))))
        methods = self.__dict__.setdefault("_methods", {})
        cycle = methods.setdefault("cycle", None) or self.host.cycle  # resolved before the clock starts
        methods["cycle"] = cycle
        replies = []
        ledger, waits = self.__dict__.get("_ledger"), self.__dict__.get("_waits")
        if ledger is not None:
            ledger.before()  # the answer's CPU time, read outside the clock on both sides of it
        if waits is not None:
            waits.start()
        queued = contention.read_wait(contention.own_wait)  # this thread's wait for a CPU, outside the clock
        start = time.perf_counter()
        for j in range(calls):
            self.flush_l2()
            self.hand_over(planned[j][3])
            replies.append(wire.call_plain(cycle, j, False, False, limit=planned[j][4]))
        wall = time.perf_counter() - start
        after = contention.read_wait(contention.own_wait)
        if queued is not None and after is not None:
            wall -= max(0, after - queued) / 1e9  # the checker's own wait for a CPU is not the answer's time
        if waits is not None:
            waits.stop(calls)
        if ledger is not None:
            ledger.after()
        self.note_held(planned, replies)
        own = []
        for j, ((seed, inputs, expected, record, _), got) in enumerate(zip(planned, replies)):
            try:
                own.append(self.judge(inputs, expected, got, record, {"name": "nominal"}, deck=False, traced=False))
            except CallFailed as exc:
                c.details["where"] = {"shape": label, "seed": seed, "case": "nominal", "window": tag, "call": j}
                c.fail(f"{exc.requirement}: {label}, timed window {tag} call {j} (seed {seed}): {exc}")
        return wall, own

    def note_held(self, planned: list[Any], replies: list[Any]) -> None:
        """What a window holds in this process at its fullest (its calls' inputs, reference
        outputs, the bytes handed over and the replies, read before any is verified or let go):
        the bytes of every distinct buffer among them, and the kernel's count of this process's
        resident memory at that moment; the most over the shape's windows is kept."""
        held = self.__dict__.get("_held")
        if held is None:
            return
        held["bytes"] = max(held["bytes"], held_bytes(self.torch, [planned, replies]))
        rss = resident_mib()
        if rss is not None:
            held["rss_mib"] = max(held["rss_mib"] or 0.0, rss)

    def timing(self, ref: Any, index: int, label: str, shape: dict[str, Any]) -> None:
        """The timed windows at one shape, every output verified (``timed_outputs``); then,
        for a right answer, the shape's time figure (kept for the summary)."""
        suite, spec = self.suite, self.spec
        from benchtui.verify.module import timing as module_timing
        from benchtui.verify.timing import core as TT

        # each timed call's output crosses the wire to be verified: windows, each of up to 32 calls
        windows = int(suite.threshold("timed_calls", min(spec.num_perf_trials, 20)))
        cap = int(suite.threshold("window_calls_max", TT.MAX_WINDOW_CALLS))
        cap_bytes = int(suite.threshold("window_bytes_max", TT.MAX_WINDOW_BYTES))
        walls, own = [], []
        self.window_sizing = None
        held = self._held = {"bytes": 0, "rss_mib": None, "rss_mib_before": resident_mib()}
        ledger = self._ledger = offclock.CpuLedger(*self.cpu_reader())
        waits = self._waits = contention.RunQueueWait(self.wait_reader())
        try:
            with suite.check(f"timed_outputs:shape{index}", requires=spec.requires(CORRECT)) as c:
                try:
                    sample = self.inputs(ref, self._secret("empty", index))
                    expected = self.expect(sample)
                    per_call = call_bytes(self.torch, sample, expected)
                    stand_in = module_timing.empty_window(str(self.device), encode(sample), expected, self.flush_l2,
                                                           self.output_limit(as_list(expected)))
                    try:
                        single = stand_in.measure(1)
                        # three windows of one call (verified, not timed) size the windows: each stands
                        # well above the empty cycle's jitter and lasts a few milliseconds at least, and
                        # holds at most cap_bytes in this process
                        probe = min(self.window(ref, index, f"probe{i}", 1, c, label)[0] for i in range(3))
                        by_time = max(TT.window_calls(probe - single["s"], single["iqr_s"], cap=cap),
                                      TT.window_calls_by_span(probe - single["s"], cap=cap))
                        calls = TT.window_calls_by_bytes(by_time, per_call, cap_bytes)
                        self.window_sizing = {"calls_by_time": by_time, "calls": calls, "bytes_per_call": per_call,
                                              "window_bytes_max": cap_bytes,
                                              "limited_by": "bytes" if calls < by_time else "time"}
                        # the empty window sampled after each timed window (its process idle while the
                        # answer's runs, and the answer's while it runs), so both see the same machine
                        stand_in.sample(calls)  # warms its slots
                        between = []
                        for w in range(windows):
                            self.sentinel(ref, index, w, calls, c, label)
                            wall, o = self.window(ref, index, w, calls, c, label)
                            walls.append(wall)
                            own.extend(o)
                            between.append(stand_in.sample(calls))
                        empty = stand_in.measure(calls, samples=3, taken=between)
                    finally:
                        stand_in.close()
                except (BadReply, wire.NotPlain, wire.TooLarge) as exc:
                    c.details["requirement"] = "reply"
                    c.verdict, c.message = ERROR, f"reply: {label}, a timed call: {exc}"
                    return
                c.value = windows * calls
                c.message = (f"{label}: the outputs of all {windows * calls} timed calls are right ({windows} windows of "
                             f"{calls}; fresh inputs each, handed over inside the window into the pages the slot reads)")
        finally:
            self.__dict__.pop("_ledger", None)
            self.__dict__.pop("_waits", None)
            self.__dict__.pop("_held", None)
        self.window_held = held
        if c.verdict != PASS or not walls:
            return
        fig = TT.figure(TT.per_call(walls, empty), empty, module_timing.TIMED_BY)
        self.time_figure(ref, index, label, shape, fig, own, ledger, waits)

    def flush_l2(self) -> None:
        """Before each timed call (and each of the empty window's), the device's L2 flushed
        by this side's own process: the cache is the device's, shared by both processes, so
        an answer's host that skips a flush of its own gains nothing, and the empty window
        flushes the same way. On the CPU there is no such cache to flush."""
        if self.device.type != "cuda":
            return
        torch = self.torch
        scratch = self.__dict__.get("_l2_scratch")
        if scratch is None:
            from benchtui.verify.module.host import L2_FLUSH_BYTES

            scratch = self._l2_scratch = torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.float32, device=self.device)
        scratch.zero_()
        torch.cuda.synchronize(self.device)

    def cpu_reader(self) -> tuple[Callable[[], int] | None, str]:
        """How the answer's process's CPU time is read (the run's monitor: the kernel's
        figure, read outside the answer's sandbox), or why it is not."""
        read = getattr(getattr(self.suite, "monitor", None), "cpu_ns", None)
        if read is None:
            return None, "no monitor of the answer's process in this run"
        return read, ""

    def wait_reader(self) -> Callable[[], int] | None:
        """How the answer's process's run-queue wait is read (the run's monitor), or None."""
        return getattr(getattr(self.suite, "monitor", None), "wait_ns", None)

    def time_figure(self, ref: Any, index: int, label: str, shape: dict[str, Any], fig: dict[str, Any],
                    own: list[float], ledger: offclock.CpuLedger,
                    waits: contention.RunQueueWait | None = None) -> None:
        """The shape's ``time`` figure: the trusted time beside the deck's own loop run in
        the answer's process (as published), the peak fractions, and the flags: a gap between
        the two times either way, and work off the clock (``ledger``), which voids the figure."""
        suite, spec = self.suite, self.spec
        from benchtui.verify.module import timing as module_timing
        from benchtui.verify.timing import core as TT

        empty = fig["empty_cycle"]
        # the deck's own procedure, on one set of inputs kept between calls (the answer's word)
        warmup = int(suite.threshold("published_warmup", 10 if spec.deck == R.HARD else 3))
        iters = int(suite.threshold("published_calls", spec.num_perf_trials))
        self.put(self.inputs(ref, spec.seeds[0] if spec.seeds else 42, deck=True), in_place=False)
        samples = self._host("published_times", warmup, iters)
        if type(samples) is not list or not samples or not all(type(x) in (int, float) for x in samples):
            raise BadReply(f"published_times replied {type(samples).__name__}, not a list of numbers")
        published = statistics.median(samples) if spec.deck == R.HARD else statistics.fmean(samples)
        windows_ms = fig["median_s"] * 1e3 if fig["resolved"] else None
        worked_off = ledger.over()
        ms = None if worked_off else windows_ms  # work off the clock: no figure, never ranked
        # the answer's own clock on the same calls, read in the same windows (the as-published loop
        # runs later, on other inputs: on a loaded machine its few samples fall anywhere)
        below = below_own(windows_ms, fig["resolution_s"] * 1e3,
                          {"own clock on the same timed calls": statistics.median(own) if own else None})
        names = {**shape}
        flops = formula_at_sizes(spec.flops_formula, names)
        nbytes = formula_at_sizes(spec.bytes_formula, names)
        peak_gbps, peak_tflops = spec.peak.get("bandwidth_gbps"), spec.peak.get("tflops")
        frac = R.peak_fraction(spec.regime, flops, nbytes, ms, peak_gbps, peak_tflops) if ms else None
        frac_pub = R.peak_fraction(spec.regime, flops, nbytes, published, peak_gbps, peak_tflops)
        dev = R.device_peak(self.device_name, spec.precision) if self.answer_device == "cuda" else None
        frac_dev = R.peak_fraction(spec.regime, flops, nbytes, ms, dev[1], dev[2]) if dev and ms else None
        shape_name = f"shape{index}"
        self.fractions["deck_peak"][shape_name] = frac
        self.fractions["deck_peak_published"][shape_name] = frac_pub
        self.fractions["device_peak"][shape_name] = frac_dev
        # on a CPU the round trip's jitter is of the order of small calls: flag only a gap of milliseconds,
        # and above what the windows spent waiting for a CPU (a busy machine's, not the answer's)
        min_gap = float(suite.threshold("gap_min_ms", 0.05 if self.answer_device == "cuda" else 2.0))
        empty_wait = empty.get("run_queue_wait_s")
        queued_ms = waits.floor_s(empty_wait) * 1e3 if waits is not None else 0.0
        gap_floor = contention.gap_floor_ms(min_gap, queued_ms)
        gap = contention.gap_flagged(ms, published, gap_floor)
        stat = "median" if spec.deck == R.HARD else "mean"
        details = {"trusted_ms": ms, "trusted_samples_ms": [x * 1e3 for x in fig["samples_s"]],
                   "resolution_ms": fig["resolution_s"] * 1e3, "calls_per_window": fig["calls_per_window"],
                   "trusted": fig, "answer_side_ms": own,
                   "as_published_ms": published, "as_published_samples_ms": samples,
                   "as_published_procedure": published_procedure(self.answer_device, warmup, iters, stat),
                   "flops": flops, "bytes": nbytes, "peak_fraction_deck_peak": frac,
                   "peak_fraction_deck_peak_as_published": frac_pub, "peak_fraction_device_peak": frac_dev,
                   "deck_peak": spec.peak, "device": self.device_name, "device_read_by": "the checker's own process",
                   "device_peak": {"matched": dev[0], "bandwidth_gbps": dev[1], "tflops": dev[2]} if dev else None,
                   "flagged": bool(gap or below or worked_off), "clock": module_timing.TIMED_BY, "empty_cycle": empty,
                   "windows_ms": windows_ms, "gap_floor_ms": round(gap_floor, 4),
                   "run_queue_wait": waits.details(empty_wait) if waits is not None else {"measured": False},
                   "off_clock": ledger.details(), "worked_off_the_clock": worked_off,
                   "below_the_answer_s_own": below, "window_sizing": self.__dict__.get("window_sizing"),
                   "checker_peak_rss_mib": checker_peak_rss_mib(),
                   "checker_peak_read_by": "the kernel's peak resident size of the checker's process (ru_maxrss)",
                   "checker_window_memory": window_memory(self.__dict__.get("window_held")),
                   "no_figure": no_figure(fig, worked_off, self.__dict__.get("window_sizing"), own)}
        off = ledger.details()
        message = (f"{label}: worked off the clock: {off['off_clock_cpu_ms']:.4g} ms of the answer's CPU time while no "
                   f"call was in flight, over {off['intervals']} intervals (allowed {off['allowance_ms']:.3g} ms, read by "
                   f"the kernel): no figure, never ranked; the windows read {TT.describe(fig)}" if worked_off
                   else f"{label}: {TT.describe(fig)} (trusted)" if fig["resolved"]
                   else f"{label}: {unresolved_text(details['no_figure'])}")
        message += (f" vs {published:.4g} ms as published (the answer's word)"
                   + (f"; peak_fraction {frac:.3g} of the deck's {spec.peak.get('hardware', 'peak')}" if frac is not None else "")
                   + (f", {frac_dev:.3g} of this {dev[0]}" if dev and frac_dev is not None else ""))
        if gap and ms is not None:
            message += (f"; FLAGGED: the as-published time is {ms / published:.1f}x below the trusted one, "
                        f"{ms - published:.3g} ms apart where {gap_floor:.3g} ms is allowed "
                        f"({queued_ms:.3g} of them what the windows waited for a CPU past the empty window) "
                        "(results memoised on unchanged inputs, CUDA-graph replay keyed on pointers, or data kept in L2)")
        for what, theirs in below.items():
            message += (f"; FLAGGED: the trusted time is below the answer's {what} ({theirs:.4g} ms), though it "
                        "brackets that forward and more (its work done before the call, or its own clock's word)")
        self.time_figures.append((f"time:shape{index}", {"value": round(ms, 6) if ms is not None else None,
                                                        "message": message, "details": details}))


def call_bytes(torch: Any, inputs: list[Any], expected: Any) -> int:
    """What one timed call holds in this process until its window is verified: its inputs
    twice (the tensors and their bytes for the pages) and the reference's outputs twice
    (kept to compare, and the reply, the same size when right)."""
    def nbytes(values: Any) -> int:
        leaves = values if isinstance(values, (list, tuple)) else [values]
        return sum(int(x.numel() * x.element_size()) for x in leaves if isinstance(x, torch.Tensor))

    return 2 * nbytes(list(inputs)) + 2 * nbytes(expected)


def no_figure(fig: dict[str, Any], worked_off: bool, sizing: dict[str, Any] | None,
              own: list[float]) -> dict[str, Any] | None:
    """Why a shape has no trusted time, with what the windows read (None where it has one):
    the answer worked off the clock, or the windows did not resolve its call, a median at or
    below the empty window's jitter per call; then the window's size and what limited it (a
    window cut to few calls by the bytes the checker may hold stands little above the empty
    one), and the answer's own clock, which a call the windows did not resolve may exceed."""
    if fig["resolved"] and not worked_off:
        return None
    raw, iqr = fig.get("raw_median_s"), fig.get("iqr_s")
    return {"why": "worked off the clock" if worked_off else "at or below the resolution",
            "measured": False, "ranked": False,
            "raw_median_ms": raw * 1e3 if isinstance(raw, float) and math.isfinite(raw) else None,
            "resolution_ms": fig["resolution_s"] * 1e3,
            "windows_iqr_ms": iqr * 1e3 if isinstance(iqr, float) and math.isfinite(iqr) else None,
            "windows": fig["windows"], "calls_per_window": fig["calls_per_window"],
            "calls_by_time": (sizing or {}).get("calls_by_time"), "limited_by": (sizing or {}).get("limited_by"),
            "answer_own_median_ms": statistics.median(own) if own else None}


def unresolved_text(why: dict[str, Any]) -> str:
    """A shape's time the windows did not resolve, said plainly: not measured, not ranked, and
    no claim that the call is fast."""
    calls, raw = why["calls_per_window"], why["raw_median_ms"]
    text = ("not measured: the windows less the empty window read a median of "
            + (f"{raw:.4g} ms" if raw is not None else "nothing") + " a call, at or below the resolution of "
            f"{why['resolution_ms']:.3g} ms (the empty window's jitter over its {calls} call{'' if calls == 1 else 's'}),"
            " so the windows did not resolve the call: no figure, not ranked")
    if why["limited_by"] == "bytes":
        text += (f"; a window held {calls} call{'' if calls == 1 else 's'}, cut from the {why['calls_by_time']} "
                 "its time asked for by the bytes the checker may hold")
    if why["answer_own_median_ms"] is not None:
        text += (f"; the answer's own clock read {why['answer_own_median_ms']:.4g} ms a forward (its word): "
                 "an unresolved call is not a fast one")
    return text


def window_memory(held: dict[str, Any] | None) -> dict[str, Any] | None:
    """What the fullest timed window held in the checker, measured there."""
    if held is None:
        return None
    return {"held_mib": round(held["bytes"] / (1 << 20), 3), "held_bytes": held["bytes"],
            "rss_mib_at_fullest_window": held["rss_mib"], "rss_mib_before_windows": held["rss_mib_before"],
            "read_by": ("the checker: the bytes of the distinct buffers its window holds (inputs, reference outputs, "
                        "bytes handed over, replies) before any is verified, and its resident memory then "
                        "(/proc/self/statm, the kernel's count)")}

def held_bytes(torch: Any, values: Any) -> int:
    """The bytes of the distinct buffers (tensors and arrays) inside ``values`` (lists, tuples
    and dicts walked): a view counted once, by where its buffer starts."""
    import numpy as np

    seen: dict[int, int] = {}
    stack = [values]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            stack.extend(x.values())
        elif isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, torch.Tensor):
            seen[x.data_ptr()] = max(seen.get(x.data_ptr(), 0), int(x.numel() * x.element_size()))
        elif isinstance(x, np.ndarray):
            at = int(x.__array_interface__["data"][0])
            seen[at] = max(seen.get(at, 0), int(x.nbytes))
    return sum(seen.values())


def resident_mib() -> float | None:
    """This process's resident memory now, as the kernel counts it (/proc/self/statm)."""
    try:
        import os

        with open("/proc/self/statm", encoding="ascii") as f:
            pages = int(f.read().split()[1])
        return round(pages * os.sysconf("SC_PAGE_SIZE") / (1 << 20), 1)
    except (OSError, ValueError, IndexError):
        return None


def checker_peak_rss_mib() -> float | None:
    """The checker's peak resident memory so far, as the kernel counts it."""
    try:
        import resource

        return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)  # KiB on Linux
    except (ImportError, OSError):
        return None


def below_own(trusted_ms: float | None, resolution_ms: float, theirs: dict[str, float | None]) -> dict[str, float]:
    """The answer's own times for the same forward that the trusted time falls below, by
    more than the resolution or 5% of theirs. The trusted time brackets staging, the call
    and the fetch, so an honest answer's stands above its own forward's."""
    if trusted_ms is None:
        return {}
    return {what: float(t) for what, t in theirs.items()
            if t is not None and t > 0 and trusted_ms + max(resolution_ms, 0.05 * t) < t}


def published_procedure(device: str, warmup: int, iters: int, stat: str) -> str:
    """What the deck's timing loop (module_host.published_times) did on this run's device:
    on a GPU, an L2 flush and CUDA events per call; on the CPU there is no L2 to flush and
    no event, so each call is timed by the process's perf counter."""
    per_call = ("L2 flushed before each, timed by CUDA events" if device == "cuda"
                else "no L2 flush (a CPU run), each timed by time.perf_counter")
    return f"{warmup} warm-ups, {iters} calls on the same inputs, {per_call} ({stat}); run in the answer's process"


def formula_at_sizes(expr: str | None, names: dict[str, Any]) -> float | None:
    """A deck's flops or bytes formula at a shape's sizes, or None where it has none or it fails."""
    if not expr:
        return None
    try:
        return float(R.eval_formula(expr, names))
    except (ValueError, ZeroDivisionError, SyntaxError):
        return None

