"""Timing an answer against the reference in the same process, same inputs.

Warm-up, then alternating trials (answer, reference) until a time budget,
fresh inputs each trial; median and interquartile range per side; speedup is
reference / answer. Device work is synchronised inside the timed region:
CUDA events on the GPU, ``mx.eval`` for MLX.
"""
from __future__ import annotations

import statistics
import time
from dataclasses import asdict, dataclass
from typing import Any, Callable


@dataclass
class Timing:
    answer_median_s: float
    answer_iqr_s: float
    reference_median_s: float
    reference_iqr_s: float
    trials: int
    warmup: int
    clock: str

    @property
    def speedup(self) -> float:
        return self.reference_median_s / self.answer_median_s if self.answer_median_s > 0 else float("inf")

    def as_dict(self) -> dict:
        return {**asdict(self), "speedup": self.speedup}

    def describe(self) -> str:
        return (f"answer {self.answer_median_s * 1e3:.3f} ms (IQR {self.answer_iqr_s * 1e3:.3f}), "
                f"reference {self.reference_median_s * 1e3:.3f} ms (IQR {self.reference_iqr_s * 1e3:.3f}), "
                f"{self.trials} trials, {self.clock}")


def median_iqr(samples: list[float]) -> tuple[float, float]:
    if len(samples) < 4:
        return statistics.median(samples), 0.0
    q = statistics.quantiles(samples, n=4, method="inclusive")
    return statistics.median(samples), q[2] - q[0]


class Clock:
    """Wall clock; ``finish`` forces lazy/async results before the stop."""

    name = "perf_counter"

    def measure(self, fn: Callable[[], Any]) -> float:
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
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        return cupy.cuda.get_elapsed_time(start, stop) / 1e3


def _flatten(x):
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
              min_trials: int = 5, max_trials: int = 200) -> Timing:
    """Time ``answer(inputs)`` against ``reference(inputs)``, alternating.

    ``make_inputs(trial)`` gives fresh inputs per trial (defeats output
    caching); both sides see the same inputs in a trial.
    """
    clock = clock or Clock()
    for i in range(warmup):
        inputs = make_inputs(-1 - i)
        clock.measure(lambda: answer(inputs))
        clock.measure(lambda: reference(inputs))
    ans, ref = [], []
    deadline = time.perf_counter() + budget_s
    trial = 0
    while trial < max_trials and (trial < min_trials or time.perf_counter() < deadline):
        inputs = make_inputs(trial)
        # Alternate the order so neither side always runs on a warm cache.
        if trial % 2:
            ref.append(clock.measure(lambda: reference(inputs)))
            ans.append(clock.measure(lambda: answer(inputs)))
        else:
            ans.append(clock.measure(lambda: answer(inputs)))
            ref.append(clock.measure(lambda: reference(inputs)))
        trial += 1
    a_med, a_iqr = median_iqr(ans)
    r_med, r_iqr = median_iqr(ref)
    return Timing(a_med, a_iqr, r_med, r_iqr, trial, warmup, clock.name)
