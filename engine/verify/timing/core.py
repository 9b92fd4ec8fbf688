"""The trusted-timing core of the CUDA harness (engine/verify/cuda/suite.py)
and the module harness (engine/verify/module/suite.py).

Both time the answer the same way: the checker's clock around a window of
whole cycles (inputs in, the call, the outputs back as plain data), minus
what the same window costs without the answer's call (the empty cycle, run
by the checker's own harness and a wire served by the checker's process).
This module holds what they share: the empty cycle's summary, the
subtraction, the median and IQR, the resolution, how many calls a window
takes so that it stands well above the empty cycle's jitter, and the one
details schema (``trusted``) both harnesses report.

A time at or below the resolution (the empty window's jitter per call, or the
windows' own spread where wider) is no figure: ``figure`` gives it no median,
and a geomean over shapes says which it left out.
"""
from __future__ import annotations

import math
import statistics
import time
from collections.abc import Mapping
from typing import Any

# the clock's own step (perf_counter's; 1 ns on Linux)
CLOCK_TICK_S = time.get_clock_info("perf_counter").resolution
# a window is sized to stand this many times above the empty window's jitter
WINDOW_RATIO = 10.0
# the most calls one window holds (each of them verified)
MAX_WINDOW_CALLS = 32
# a window holds at least this much of the answer's time (by the probe's estimate), so that what
# starts a window (the answer's process woken after the checker drew the window's inputs and ran
# its reference, its caches cold) is shared by several calls rather than carried by one or two
MIN_WINDOW_SPAN_S = 0.005
# the most bytes a window's calls hold in the checker at once (each call's inputs and the
# reference's outputs, kept to verify the replies after the clock stops, and the replies):
# a fast answer on large inputs would otherwise have the checker hold MAX_WINDOW_CALLS of them
MAX_WINDOW_BYTES = 256 << 20


# The fewest samples whose quartiles say anything: under this many the spread is unknown.
SPREAD_SAMPLES = 4


def median_iqr(samples: list[float]) -> tuple[float, float]:
    """Median and interquartile range; nan for no samples. Under
    ``SPREAD_SAMPLES`` the IQR is nan too, never 0: a spread was not measured,
    and ``spread_text`` says how many samples there were."""
    samples = [float(s) for s in samples]
    if not samples:
        return float("nan"), float("nan")
    if len(samples) < SPREAD_SAMPLES:
        return statistics.median(samples), float("nan")
    q = statistics.quantiles(samples, n=4, method="inclusive")
    return statistics.median(samples), q[2] - q[0]


def spread_text(iqr_s: float | None, samples: int, unit: float = 1e3, unit_name: str = "ms") -> str:
    """An IQR as printed everywhere: the figure, or how many samples there were
    when too few measure a spread (never a 0 that reads as no spread)."""
    if samples < SPREAD_SAMPLES or iqr_s is None or not math.isfinite(iqr_s):
        return f"IQR unknown: {samples} sample{'' if samples == 1 else 's'}, {SPREAD_SAMPLES} needed"
    return f"IQR {iqr_s * unit:.3f} {unit_name}"


def empty_cycle(samples_s: list[float], calls: int = 1, **parts: Any) -> dict[str, Any]:
    """The empty window's summary from its measured samples (seconds each):
    ``s`` (median, what is subtracted), ``iqr_s`` (its jitter), ``calls``
    (cycles per window) and the parts it was measured from."""
    med, iqr = median_iqr(samples_s)
    return {"s": med, "iqr_s": iqr, "samples": len(samples_s), "calls": int(calls), **parts}


def per_call(walls_s: list[float], empty: dict[str, Any]) -> list[float]:
    """Each window's wall time less the empty window, per call. Not clamped:
    a sample at or below zero says the window did not resolve the call."""
    calls = max(1, int(empty.get("calls", 1)))
    return [(float(w) - empty["s"]) / calls for w in walls_s]


def resolution_s(empty: dict[str, Any]) -> float:
    """The smallest per-call time a window resolves: the empty window's
    jitter (its IQR, at least the clock's step) spread over its calls."""
    jitter = empty.get("iqr_s")
    jitter = CLOCK_TICK_S if jitter is None or not math.isfinite(jitter) else max(float(jitter), CLOCK_TICK_S)
    return jitter / max(1, int(empty.get("calls", 1)))


def window_calls(per_call_estimate_s: float, jitter_s: float, ratio: float = WINDOW_RATIO,
                 cap: int = MAX_WINDOW_CALLS) -> int:
    """How many calls a window takes so that it lasts ``ratio`` times the
    empty cycle's jitter (at most ``cap``)."""
    jitter = max(float(jitter_s) if math.isfinite(jitter_s) else 0.0, CLOCK_TICK_S)
    if not per_call_estimate_s > 0:
        return max(1, int(cap))
    return max(1, min(int(cap), math.ceil(ratio * jitter / per_call_estimate_s)))


def window_calls_by_span(per_call_estimate_s: float, span_s: float = MIN_WINDOW_SPAN_S,
                         cap: int = MAX_WINDOW_CALLS) -> int:
    """How many calls a window takes so that it lasts at least ``span_s`` (at most ``cap``)."""
    if not per_call_estimate_s > 0:
        return max(1, int(cap))
    return max(1, min(int(cap), math.ceil(float(span_s) / per_call_estimate_s)))


def window_calls_by_bytes(calls: int, per_call_bytes: int, cap_bytes: int = MAX_WINDOW_BYTES) -> int:
    """``calls`` cut so that a window's calls hold at most ``cap_bytes`` (at least one call)."""
    if per_call_bytes <= 0:
        return max(1, int(calls))
    return max(1, min(int(calls), int(cap_bytes) // int(per_call_bytes)))


def figure(samples_s: list[float], empty: dict[str, Any], timed_by: str) -> dict[str, Any]:
    """The one details schema of a trusted time (seconds per call):
    ``median_s`` is None when the median is at or below ``resolution_s``: the
    empty window's jitter per call, or the windows' own spread per call (their
    IQR, where there are enough of them to measure one) where that is wider, so
    a median the windows scatter across is no figure, one call a window or many."""
    med, iqr = median_iqr(samples_s)
    res = resolution_s(empty)
    if math.isfinite(iqr) and iqr > res:
        res = iqr
    resolved = bool(med > res)  # False for nan
    return {"median_s": med if resolved else None, "iqr_s": iqr, "resolution_s": res, "resolved": resolved,
            "raw_median_s": med, "samples_s": list(samples_s), "windows": len(samples_s),
            "calls_per_window": int(empty.get("calls", 1)), "empty_cycle": empty, "timed_by": timed_by}


def describe(fig: dict[str, Any], unit: float = 1e3, unit_name: str = "ms") -> str:
    """The figure with its resolution beside it, or why there is none."""
    res = fig["resolution_s"] * unit
    if not fig["resolved"]:
        return (f"below the resolution of {res:.3g} {unit_name} a call "
                f"({fig['calls_per_window']} calls a window): no figure")
    return f"{fig['median_s'] * unit:.4g} {unit_name} (resolution {res:.2g} {unit_name})"


def geomean(values: Mapping[str, float | None]) -> tuple[float | None, list[str], list[str]]:
    """Geometric mean of the positive values of ``values`` (name -> value or
    None): (geomean or None, the names it covers, the names it left out)."""
    kept = {k: float(v) for k, v in values.items() if v is not None and math.isfinite(v) and v > 0}
    left = [k for k in values if k not in kept]
    if not kept:
        return None, [], left
    return math.exp(sum(math.log(v) for v in kept.values()) / len(kept)), list(kept), left
