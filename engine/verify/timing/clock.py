"""Timing an answer against the reference on the same inputs.

Warm-up, then alternating trials (answer, reference) until a time budget,
fresh inputs each trial; median and interquartile range per side; speedup is
reference / answer. Device work is synchronised inside the timed region:
CUDA events on the GPU, ``mx.eval`` for MLX.
"""
from __future__ import annotations

import contextlib
import gc
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from typing import Any

from benchtui.verify.timing.core import median_iqr, spread_text


@dataclass
class Timing:
    answer_median_s: float
    answer_iqr_s: float
    reference_median_s: float
    reference_iqr_s: float
    trials: int
    warmup: int
    clock: str
    # pair means each median is taken over (one per answer-first/reference-first pair)
    samples: int = 0

    @property
    def speedup(self) -> float:
        return self.reference_median_s / self.answer_median_s if self.answer_median_s > 0 else float("inf")

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "speedup": self.speedup}

    def describe(self) -> str:
        return (f"answer {self.answer_median_s * 1e3:.3f} ms ({spread_text(self.answer_iqr_s, self.samples)}), "
                f"reference {self.reference_median_s * 1e3:.3f} ms ({spread_text(self.reference_iqr_s, self.samples)}), "
                f"{self.trials} trials, {self.clock}")


class Clock:
    """Wall clock; ``finish`` forces lazy/async results before the stop."""

    name = "perf_counter"

    def measure(self, fn: Callable[[], Any]) -> float:
        with _no_gc():
            start = time.perf_counter()
            self.finish(fn())
            return time.perf_counter() - start

    def finish(self, result: Any) -> None:
        return None


class MlxClock(Clock):
    name = "perf_counter+mx.eval"

    def finish(self, result: Any) -> None:
        import mlx.core as mx

        leaves = [x for x in _flatten(result) if isinstance(x, mx.array)]
        if leaves:
            mx.eval(*leaves)


class CudaEventClock(Clock):
    name = "cuda events"

    def measure(self, fn: Callable[[], Any]) -> float:
        import cupy

        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        with _no_gc():
            start.record()
            fn()
            stop.record()
            stop.synchronize()
        return float(cupy.cuda.get_elapsed_time(start, stop)) / 1e3


@contextlib.contextmanager
def _no_gc() -> Iterator[None]:
    """A collection landing inside one side's timed call would bias the pair."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextlib.contextmanager
def _heap_frozen() -> Iterator[None]:
    """The objects alive before the trials moved out of the collector's sight
    (``gc.freeze``) while they run: the collection before each trial then walks
    only what the trials made. A checker holding a large heap (torch loaded, a
    long-lived host process) otherwise pays a full walk of it every trial, a
    tenth of a second or more each, for garbage that is not there."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _flatten(x: object) -> Iterator[object]:
    if isinstance(x, (list, tuple)):
        for item in x:
            yield from _flatten(item)
    elif isinstance(x, dict):
        for item in x.values():
            yield from _flatten(item)
    else:
        yield x


def clock_for(backend: str) -> Clock:
    return {"cuda": CudaEventClock, "mlx": MlxClock}.get(backend, Clock)()


def time_pair(answer: Callable[[Any], Any], reference: Callable[[Any], Any], make_inputs: Callable[[int], Any], *,
              clock: Clock | None = None, budget_s: float = 2.0, warmup: int = 2,
              min_trials: int = 8, max_trials: int = 200, answer_clock: Clock | None = None,
              stage: Callable[[Any], Any] | None = None) -> Timing:
    """Time ``answer(inputs)`` against ``reference(inputs)``, alternating.

    ``make_inputs(trial)`` gives fresh inputs per trial (defeats output
    caching); both sides see the same inputs in a trial. ``stage`` (untimed)
    turns a trial's inputs into what the answer is called with (sent to its
    process ahead of time); ``answer_clock`` times the answer's side.
    """
    clock = clock or Clock()
    answer_clock = answer_clock or clock
    stage = stage or (lambda x: x)
    warm = 0.0
    for i in range(warmup):
        inputs = make_inputs(-1 - i)
        staged = stage(inputs)
        warm = max(warm, answer_clock.measure(lambda: answer(staged)))  # noqa: B023 - called at once, within this iteration
        clock.measure(lambda: reference(inputs))  # noqa: B023 - called at once, within this iteration
    # Trials come in pairs (one with the answer first, one with the reference
    # first), and the pairs in quads (AR RA, then RA AR), so neither side goes
    # first more often, nor always in the same kind of trial.
    group = 4
    if warm * min_trials > 2 * budget_s:
        # The trials asked for would take the answer alone over twice the budget:
        # it is far slower than the budget was set for, and more trials only add
        # wall time to a figure far from any comparison. One balanced pair
        # (answer first once, reference first once) still times it.
        min_trials, group = 2, 2
    ans, ref = [], []
    deadline = time.perf_counter() + budget_s
    trial = 0
    with _heap_frozen():
        while trial < max_trials and (trial < min_trials or trial % group or time.perf_counter() < deadline):
            inputs = make_inputs(trial)
            staged = stage(inputs)
            gc.collect()
            if answer_first(trial):
                ans.append(answer_clock.measure(lambda: answer(staged)))  # noqa: B023 - called at once, within this iteration
                ref.append(clock.measure(lambda: reference(inputs)))  # noqa: B023 - called at once, within this iteration
            else:
                ref.append(clock.measure(lambda: reference(inputs)))  # noqa: B023 - called at once, within this iteration
                ans.append(answer_clock.measure(lambda: answer(staged)))  # noqa: B023 - called at once, within this iteration
            trial += 1
    # Each side ran once first and once second in every pair; averaging over the
    # pair cancels that position effect (the first call after fresh inputs is
    # often ~10% faster), which a median of raw samples would keep as noise.
    ans_means, ref_means = pair_means(ans), pair_means(ref)
    a_med, a_iqr = median_iqr(ans_means)
    r_med, r_iqr = median_iqr(ref_means)
    return Timing(a_med, a_iqr, r_med, r_iqr, trial, warmup, answer_clock.name, len(ans_means))


def answer_first(trial: int) -> bool:
    return trial % 2 == (trial // 2) % 2


def pair_means(samples: list[float]) -> list[float]:
    return [(samples[i] + samples[i + 1]) / 2 for i in range(0, len(samples) - 1, 2)]
