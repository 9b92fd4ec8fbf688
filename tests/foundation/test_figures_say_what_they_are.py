"""Figures say what they are, everywhere they are printed: a spread from too few
samples says how many there were (never 0), an unknown value reads "unknown"
(never 0.0s), a count names what it counts, a fraction names what it is a
fraction of. One test per rule, sweeping every place the rule applies."""
from __future__ import annotations

import math
import re
from pathlib import Path

from benchtui.decks.compare import shape_figures
from benchtui.records import coverage
from benchtui.transcripts.model import ASSISTANT, TOOL_RESULT, USER, Entry
from benchtui.transcripts.render import totals_lines
from benchtui.transcripts.totals import compute
from benchtui.verify.cuda import suite as cuda_suite
from benchtui.verify.timing import clock, core

ROOT = Path(__file__).resolve().parents[2]


def test_a_spread_from_too_few_samples_says_how_many():
    # the core: no IQR from three samples, and the one text every printer uses
    for median_iqr in (core.median_iqr, clock.median_iqr):
        med, iqr = median_iqr([1.0, 2.0, 3.0])
        assert med == 2.0 and math.isnan(iqr)
    assert core.spread_text(0.0, 3) == "IQR unknown: 3 samples, 4 needed"
    assert core.spread_text(2e-3, 8) == "IQR 2.000 ms"
    # every printed IQR: the speedup check's message and the CUDA roofline's
    t = clock.Timing(1e-3, float("nan"), 2e-3, float("nan"), trials=6, warmup=1, clock="perf_counter", samples=3)
    assert "IQR 0.000" not in t.describe() and t.describe().count("IQR unknown: 3 samples") == 2
    details = {"answer_median_s": 1e-3, "answer_iqr_s": float("nan"), "bytes": 10**6, "peak_bytes_per_s": 2e12,
               "roofline_s": 5e-7, "trials": 2}
    assert "IQR unknown: 2 samples, 4 needed" in cuda_suite.roofline_figures(details, "here")["roofline"][1]
    # and no other place formats an IQR on its own
    printers = []
    for path in [*ROOT.joinpath("engine").rglob("*.py"), *ROOT.joinpath("challenges").rglob("*.py"),
                 *ROOT.joinpath("tui").rglob("*.py")]:
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"IQR \{", line) and "def spread_text" not in path.read_text():
                printers.append(f"{path.relative_to(ROOT)}:{n}")
    assert printers == [], f"an IQR printed without spread_text: {printers}"


def test_an_unknown_value_prints_as_unknown():
    # an opencode-like transcript: no timestamps, no latencies, no tool durations
    entries = [Entry(index=0, line=1, role=USER, text="go"), Entry(index=1, line=2, role=ASSISTANT, text="ok"),
               Entry(index=2, line=3, role=TOOL_RESULT, text="done")]
    tot = compute(entries)
    shown = "\n".join(totals_lines(tot))
    assert "model latency: unknown" in shown and "wall time: unknown" in shown and "tool time: unknown" in shown
    assert "0.0s" not in shown
    data = tot.as_dict()
    assert data["model_latency_s"] is None and data["duration_s"] is None and data["tool_time_s"] is None
    # a latency that was recorded, even a zero one, is a figure
    timed = compute([Entry(index=0, line=1, role=ASSISTANT, text="ok", latency_s=0.0, timestamp=5.0)])
    assert "model latency: 0.0s" in "\n".join(totals_lines(timed))


def test_a_count_names_what_it_counts():
    cov = [{"checkable": True, "status": coverage.PASS}, {"checkable": True, "status": coverage.PASS},
           {"checkable": True, "status": coverage.NOT_EXERCISED}, {"checkable": True, "status": coverage.NOT_EXERCISED}]
    assert coverage.describe("skipped", cov) == "skipped: 2 of 4 requirements met"
    # a requirement no check can judge: "6 of 6" must not read as every one of seven met
    kv = [{"checkable": True, "status": coverage.PASS}] * 6 + [{"checkable": False, "status": coverage.NOT_EXERCISED}]
    assert coverage.describe("pass", kv) == "pass: 6 of 6 checkable requirements met, 1 not checkable"


def test_a_fraction_names_what_it_is_a_fraction_of():
    # the published shape the deck calls frac 0.044: compute, on a memory-bound shape at 0.516 of the bandwidth
    shape = {"idx": 0, "ms": 0.1, "tflops": 30.0, "gbps": 1052.0, "frac": 0.044, "compute_util": 0.044,
             "mem_util": 0.516, "bound": "memory"}
    text = shape_figures(shape)
    assert "0.044 of peak compute" in text and "0.516 of peak bandwidth" in text and "(memory-bound)" in text
    assert "fraction 0.044" not in text
    assert "of the deck's peak" in shape_figures({"frac": 0.3})
