"""What every CUDA challenge's hidden checks share (fuse, paged_attention).

- ``compile_answer``: each .cu file of the answer compiled on its own by nvcc
  (no GPU needed), one check per file;
- ``checker_device`` / ``build_in_answer_process``: the checker's own view of
  the GPU, and the answer's library built and served in the answer's sandbox;
- ``timed_cycles``: the timing loop. The checker's clock brackets each whole
  cycle (inputs made from the checker's seeds, L2 flushed, every launch of
  the call, the outputs back) in one round trip; what the same cycle costs
  without the call (``measure_empty_cycle``: the checker's own harness, plus the
  wire's cost for that reply measured without the answer's process) is
  subtracted. The answer's CUDA events are kept beside it, labelled as the
  answer's. A suite verifies each cycle's outputs through a callback.

Everything here runs in the checker's process; nothing of the answer's is
imported, and every figure the answer's process sends is labelled as its.
"""
from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from benchtui.records.verdicts import COMPILE_ERROR, PASS, TIMEOUT, UNBOUND
from benchtui.verify import wire
from benchtui.verify.cuda import build as cuda_build
from benchtui.verify.cuda import device as cuda_device
from benchtui.verify.suite import Suite
from benchtui.verify.timing import core as trusted_timing

TIMED_BY = ("the checker's clock around each whole cycle (inputs made, L2 flushed, the call, the outputs back) minus "
            "the same cycle without the call run by the checker's own harness and the wire's cost measured in the "
            "checker; events_median_s is the answer's process's own CUDA events")
DEVICE_READ_BY = "the checker's own harness, before the answer's library loaded"

# what ``checker_device`` gives: this process's harness on the GPU, or why there is none
Device = cuda_device.CheckerDevice | BaseException | None
# a cycle's seeds: ``[launch][input]``; a run's: ``[cycle][launch][input]``
CycleSeeds = Sequence[Sequence[int]]
# each verified cycle: (trial, its seeds, outputs[launch][output]) -> (items checked, items wrong, why)
Verify = Callable[[int, Any, list[list[Any]]], tuple[int, int, str | None]]


class CudaFault(Exception):
    """The answer's call failed on the device (its CUDA error named)."""


def error_text(exc: BaseException | None) -> str:
    """An exception as one short line, its type first (at most 400 characters)."""
    return f"{type(exc).__name__}: {exc}"[:400]


# -- without a GPU: does each file compile? --------------------------------------

def answer_sources(folder: Path) -> list[Path]:
    """Every .cu file (or, when there is none, every .cuh) outside hidden folders."""
    def visible(p: Path) -> bool:
        return not any(part.startswith(".") for part in p.relative_to(folder).parts)

    for pattern in ("*.cu", "*.cuh"):
        found = sorted(p for p in folder.rglob(pattern) if p.is_file() and visible(p))
        if found:
            return found
    return []


def compile_answer(suite: Suite, requires: tuple[str, ...] = ("compiles",)) -> None:
    """One ``nvcc_compile:<file>`` check per source: nvcc -std=c++17 -c, the
    answer's folder on the include path (``nvcc_arch``, ``compile_timeout_s``)."""
    folder = suite.answer_dir
    sources = answer_sources(folder)
    if not sources:
        suite.record("nvcc_compile", UNBOUND, message="no .cu or .cuh file in the answer (looked for *.cu, *.cuh)",
                     requires=requires)
        return
    nvcc = cuda_build.find_nvcc()
    if nvcc is None:
        suite.skip("nvcc_compile", "nvcc not found (PATH, $CUDA_HOME, /usr/local/cuda/bin): cannot compile",
                   requires=requires)
        return
    arch = suite.threshold("nvcc_arch", "sm_90")
    limit = float(suite.threshold("compile_timeout_s", 120.0))
    for source in sources:
        rel = source.relative_to(folder).as_posix()
        name = f"nvcc_compile:{rel}"
        result = cuda_build.compile_check(source, include_dirs=[folder], arch=arch, timeout_s=limit, nvcc=nvcc)
        details = {"command": " ".join(result.command[1:]), "output": result.output, "cached": result.cached}
        if result.timed_out:
            suite.record(name, TIMEOUT, value=round(result.seconds, 3), threshold=limit,
                         message=result.summary(), details=details, requires=requires)
        elif result.ok:
            suite.record(name, PASS, value=round(result.seconds, 3), threshold="0 errors",
                         message=f"nvcc -std=c++17 -c: {result.summary()}", details=details, requires=requires)
        else:
            suite.record(name, COMPILE_ERROR, value=result.error_count, threshold="0 errors", requires=requires,
                         message=result.summary(), details={**details, "errors": result.errors[:20]})


# -- with a GPU ------------------------------------------------------------------------

def gpu_unavailable(suite: Suite) -> str:
    """Why this run cannot use a GPU ("" when it can)."""
    if suite.backend != "cuda":
        return f"needs an NVIDIA GPU: this run's backend is {suite.backend}, not cuda"
    usable, reason = cuda_build.gpu_status()
    return "" if usable else f"needs an NVIDIA GPU: {reason}"


def gpu_preamble(suite: Suite, names: list[str], signature: str,
                 requires_of: Callable[[str], tuple[str, ...]]) -> Device:
    """What every CUDA challenge's GPU checks do first: without a usable GPU, a
    .cu adapter or nvcc, each of ``names`` is skipped or unbound with the reason
    (returns None). Otherwise the GPU lock is taken for the rest of the run and
    the device's facts are read by this process's own harness, before the
    answer's library is built or loaded anywhere, so nothing the answer leaves
    running can touch them; returns that device (or the exception that stopped
    it)."""
    def skip(reason: str) -> None:
        for name in names:
            suite.skip(name, reason, requires=requires_of(name))

    reason = gpu_unavailable(suite)
    if reason:
        skip(reason)
        return None
    adapter = suite.adapter_path
    if adapter is None or Path(adapter).suffix != ".cu":
        looked = (f".benchtui/adapters/{suite.challenge_id}/{suite.model}.cu, else "
                  f"challenges/{suite.challenge_id}/adapters/{suite.model}.cu, exposing {signature}")
        for name in names:
            suite.record(name, UNBOUND, message=f"no adapter: looked for {looked}",
                         details={"looked_for": [looked]}, requires=requires_of(name))
        return None
    if cuda_build.find_nvcc() is None:
        skip("nvcc not found: cannot build the answer")
        return None
    suite.hold_gpu()  # one GPU job at a time per device, from here to the end of the run
    return checker_device()


def checker_device() -> cuda_device.CheckerDevice | Exception:
    """This process's own harness on the GPU (cuda_device.CheckerDevice), or
    the exception that stopped it (the timing figures then say why)."""
    try:
        return cuda_device.CheckerDevice(Path(tempfile.mkdtemp(prefix="benchtui-checker-harness-")))
    except Exception as exc:
        return exc


def build_in_answer_process(suite: Suite, symbol: str, params: list[str], requires: tuple[str, ...] = ("compiles",)) -> Any:
    """nvcc builds the adapter and the answer inside the answer's sandbox, which
    loads the library; this process gets a proxy and never loads it. Records
    ``build_library``; returns the proxy or None."""
    facts, host, why = suite.cuda_library(symbol, params, timeout_s=float(suite.threshold("build_timeout_s", 300.0)))
    details = {k: facts.get(k) for k in ("command", "output", "errors")}
    if not facts.get("ok"):
        verdict = TIMEOUT if facts.get("timed_out") else COMPILE_ERROR
        suite.record("build_library", verdict, value=facts.get("error_count"), threshold="0 errors",
                     message=facts.get("summary", ""), details=details, requires=requires)
        return None
    if host is None:
        suite.record("build_library", UNBOUND, message=why, details=details, requires=requires)
        return None
    suite.record("build_library", PASS, value=facts.get("seconds"), message=f"built in {facts.get('seconds', 0):.1f} s "
                 "by nvcc in the answer's sandbox", details=details, requires=requires)
    return host


def device_info(device: Device) -> dict[str, Any]:
    """The device's facts as this process read them (never the answer's process)."""
    return _checker(device).info


def _checker(device: Device) -> cuda_device.CheckerDevice:
    if device is None or isinstance(device, BaseException):
        raise RuntimeError(f"this process has no view of the GPU: {error_text(device) if device else 'none'}")
    return device


# -- timing ------------------------------------------------------------------------------

def _reply_template(outputs: list[Sequence[Any]], launches: int) -> dict[str, Any]:
    return {"rc": 0, "error": "", "seconds": 0.0,
            "outputs": [[np.zeros(int(n), dtype=cuda_device.DTYPES[d][1]) for d, n, _ in outputs]
                        for _ in range(max(1, launches))]}


def measure_empty_cycle(suite: Suite, device: Device, inputs: list[Sequence[Any]], outputs: list[Sequence[Any]],
                        scratch: int, seeds: Sequence[CycleSeeds], warmup: int, launches: int = 1) -> dict[str, Any]:
    """What a timed cycle costs without the answer's call: the same cycle by
    this process's own harness, plus a round trip bringing back as much as
    the outputs over a wire served by this process, paired sample by sample
    and summarised by the trusted-timing core. ``seeds[cycle][launch][input]``."""
    cycles = _checker(device).empty_cycles(inputs, outputs, scratch, seeds, launches)
    cycles = list(cycles[warmup:] or cycles)
    trips = (wire.echo_round_trips(_reply_template(outputs, launches), samples=len(cycles))
             if suite.peer is not None else [0.0] * len(cycles))
    return trusted_timing.empty_cycle([h + w for h, w in zip(cycles, trips)], 1,
                                      harness_s=trusted_timing.median_iqr(cycles)[0], wire_s=trusted_timing.median_iqr(trips)[0])


def _reply_limit(outputs: list[Sequence[Any]], launches: int) -> wire.Limit:
    """The most a cycle's reply may carry: its output buffers, as the checker sized them."""
    sizes = [int(n) * cuda_device.element_size(d) for d, n, _ in outputs] * max(1, launches)
    return wire.Limit("the timed cycle's reply", wire.aligned_bytes(sizes) + wire.ALIGN,
                      payload_is="bytes of the output buffers the checker sized")


def _cycle_reply(got: Any, trial: int, launches: int) -> dict[str, Any]:
    """A cycle's reply checked to be the plain dict the harness sends: an
    error naming what else came back."""
    if type(got) is not dict:
        raise CudaFault(f"timed call {trial}: the cycle replied a {type(got).__name__}, not the harness's plain dict")
    if got.get("error") or got.get("rc"):
        raise CudaFault(f"timed call {trial}: {str(got.get('error') or got.get('rc'))[:400]}")
    outs = got.get("outputs")
    if type(got.get("seconds")) not in (int, float) or type(outs) is not list or len(outs) != max(1, launches) \
            or not all(type(o) is list and all(isinstance(a, np.ndarray) for a in o) for o in outs):
        raise CudaFault(f"timed call {trial}: the cycle's reply is not plain times and output arrays")
    return got


def timed_cycles(suite: Suite, host: Any, device: Device, inputs: list[Sequence[Any]], outputs: list[Sequence[Any]],
                 scratch: int, seeds: Sequence[CycleSeeds], warmup: int, scalars: Sequence[Any], verify: Verify,
                 launches: int = 1, reseed: Callable[[int], Sequence[CycleSeeds]] | None = None) -> dict[str, Any]:
    """Timed cycles on fresh inputs made in the answer's process from this
    side's seeds (``seeds[cycle][launch][input]``), ``launches`` launches of
    the entry point per cycle. Each reply is read by value, decoded whole
    before the clock stops (a handle in it is an error naming it) and within
    the outputs' size. ``verify(trial, cycle_seeds, outputs)`` returns
    (items checked, items wrong, why) for each cycle's outputs
    (``outputs[launch][output]``). The first ``warmup`` cycles are verified
    but not timed.

    ``reseed(n)``, where given, returns the same cycles' seeds with ``n``
    launches each: when the warm-up cycles show a window of ``launches`` too
    short to stand ``trusted_timing.WINDOW_RATIO`` times above the empty
    cycle's jitter, the window is widened (at most
    ``trusted_timing.MAX_WINDOW_CALLS`` launches, every one verified) and the
    warm-up run again at that width.

    Returns the checker's times less the empty cycle (``walls``, per cycle,
    not clamped), the answer's events (``events``), the verification counts,
    the empty cycle, the core's figure (``trusted``), and the ``launches``
    and ``seeds`` the timed windows used."""
    launches = max(1, launches)
    counts: dict[str, Any] = {"checked": 0, "wrong": 0, "why": None}
    empty = measure_empty_cycle(suite, device, inputs, outputs, scratch, seeds, warmup, launches)
    first = 0
    if reseed is not None and warmup > 0:
        warm = _cycles(host, inputs, outputs, scratch, seeds[:warmup], 0, 0, scalars, verify, launches, counts)
        per_launch = (trusted_timing.median_iqr(warm["raw"])[0] - empty["s"]) / launches
        wanted = trusted_timing.window_calls(per_launch, empty["iqr_s"])
        if wanted > launches:  # widened: the new windows are warmed up again
            launches, seeds = wanted, reseed(wanted)
            if len(seeds) <= warmup or any(len(c) != launches for c in seeds):
                raise CudaFault(f"the challenge's reseed({launches}) gave seeds of another shape")
            empty = measure_empty_cycle(suite, device, inputs, outputs, scratch, seeds, warmup, launches)
        else:  # wide enough: those were the warm-up
            first = warmup
    run = _cycles(host, inputs, outputs, scratch, seeds[first:], first, warmup, scalars, verify, launches, counts)
    walls = trusted_timing.per_call(run["raw"], empty)
    return {"events": run["events"], "walls": walls, "rows_checked": counts["checked"], "rows_wrong": counts["wrong"],
            "why": counts["why"], "empty_cycle": empty, "trusted": trusted_timing.figure(walls, empty, TIMED_BY),
            "launches": launches, "seeds": seeds}


def _cycles(host: Any, inputs: list[Sequence[Any]], outputs: list[Sequence[Any]], scratch: int,
            seeds: Sequence[CycleSeeds], first: int, warmup: int, scalars: Sequence[Any], verify: Verify, launches: int,
            counts: dict[str, Any]) -> dict[str, list[float]]:
    """One pass of cycles over ``seeds`` (trials numbered from ``first``), each
    verified into ``counts``; the checker's wall time (``raw``) and the
    answer's events of the trials from ``warmup`` on (all, when 0)."""
    host.timing_setup(inputs, outputs, scratch, launches)
    cycle, limit = host.timing_cycle, _reply_limit(outputs, launches)
    events: list[float] = []
    raw: list[float] = []
    try:
        for trial, cycle_seeds in enumerate(seeds, start=first):
            start = time.perf_counter()
            if wire.is_proxy(cycle):
                got = wire.call_plain(cycle, cycle_seeds, trial, scalars, limit=limit)
            else:  # a stand-in in this process (tests)
                got = cycle(cycle_seeds, trial, scalars)
            wall = time.perf_counter() - start
            got = _cycle_reply(got, trial, launches)
            n, bad, why = verify(trial, cycle_seeds, got["outputs"])
            counts["checked"] += n
            counts["wrong"] += bad
            counts["why"] = counts["why"] or (f"call {trial}, {why}" if bad else None)
            if trial >= warmup:
                events.append(float(got["seconds"]))
                raw.append(wall)
    except (wire.NotPlain, wire.TooLarge) as exc:
        raise CudaFault(f"timed call: {exc}") from None
    finally:
        host.timing_release()
    return {"events": events, "raw": raw}


def timing_details(run: dict[str, Any], info: dict[str, Any], moved: int,
                   events_agree: float) -> tuple[dict[str, Any], list[str], str]:
    """What every figure of a timed run carries: (details, flags, what the
    answer's events said when they disagree). Judged on the medians of all
    timed calls, never on one noisy call; a flagged run is shown, never ranked."""
    med, iqr = trusted_timing.median_iqr(run["walls"])  # this side's clock: the figure that ranks
    events_med, events_iqr = trusted_timing.median_iqr(run["events"])  # the answer's own CUDA events: shown, never ranked
    trusted = run.get("trusted") or trusted_timing.figure(run["walls"], run["empty_cycle"], TIMED_BY)
    peak = float(info.get("peak_bytes_per_s") or 0.0)
    roofline_s = moved / peak if peak > 0 else float("nan")
    flags = []
    if run["rows_wrong"]:
        flags.append("the timed calls' outputs are wrong")
    if run["walls"] and not trusted["resolved"]:
        flags.append(f"{med * 1e3:.4f} ms is at or below the resolution of {trusted['resolution_s'] * 1e3:.4f} ms "
                     "(the empty cycle's jitter): no figure")
    if peak > 0 and med < roofline_s:
        flags.append(f"{med * 1e3:.3f} ms is below the roofline's {roofline_s * 1e3:.3f} ms: physically impossible")
    said = ""
    if med > 0 and not events_med >= events_agree * med:
        said = (f"; the answer's own CUDA events say {events_med * 1e3:.3f} ms "
                f"({events_med / med:.2f}x this side's clock)")
    details: dict[str, Any] = {"gpu": info, "bytes": moved, "answer_median_s": med, "answer_iqr_s": iqr, "events_median_s": events_med,
               "events_iqr_s": events_iqr, "events_disagree": bool(said), "empty_cycle_s": run["empty_cycle"]["s"],
               "empty_cycle": run["empty_cycle"], "trials": len(run["walls"]), "roofline_s": roofline_s,
               "resolution_s": trusted["resolution_s"], "trusted": trusted,
               "peak_bytes_per_s": peak, "device_read_by": DEVICE_READ_BY, "timed_by": TIMED_BY}
    if flags:
        details["flagged"] = flags
    return details, flags, said


def roofline_figures(details: dict[str, Any], where: str) -> dict[str, tuple[float | None, str]]:
    """``bandwidth`` (fraction of the checker-read peak) and ``roofline``
    (time over bytes moved / peak): name -> (value or None, message)."""
    med, iqr, moved = details["answer_median_s"], details["answer_iqr_s"], details["bytes"]
    peak, roofline_s = details["peak_bytes_per_s"], details["roofline_s"]
    ok = med > 0 and peak > 0
    return {
        "bandwidth": (moved / med / peak if ok else None,
                      f"{moved / med / 1e9:.0f} GB/s of {peak / 1e9:.0f} GB/s peak ({100 * moved / med / peak:.1f}%), "
                      f"{where}" if ok else "no peak bandwidth"),
        "roofline": (med / roofline_s if ok else None,
                     f"{med / roofline_s:.2f}x the roofline's {roofline_s * 1e3:.3f} ms "
                     f"(median {med * 1e3:.3f} ms, {trusted_timing.spread_text(iqr, details.get('trials', 0))}), {where}"
                     if ok else "no peak bandwidth"),
    }
