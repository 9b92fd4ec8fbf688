"""What every piece of one module-harness run shares (engine/verify/module/suite.py).

:class:`ModuleRun` is built from pieces, one job each, stacked in this order
(each may use the ones below it): staging (the answer's host and the inputs,
staging.py), the dispatcher trace (trace.py), calling and verifying
(checking.py), the timed windows and their figures (timed.py). This module
holds the state they share, declared once, and the two errors a reply raises.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from benchtui.verify.module.spec import Spec
from benchtui.verify.suite import CheckFailed


class BadReply(Exception):
    """A reply of the answer's host that is not the plain data it must be."""


class CallFailed(CheckFailed):
    """One call's output (or its inputs afterwards) is wrong, naming the requirement it breaks."""

    def __init__(self, requirement: str, message: str):
        super().__init__(message)
        self.requirement = requirement


@dataclass
class Traced:
    """What the traced calls of a run dispatched (the answer's process recorded it)."""

    calls: int = 0
    ops: set[str] = field(default_factory=set)
    kernels: set[str] = field(default_factory=set)
    # (aten op or kernel, forbidden name, "aten op" or "kernel") -> where it was first seen
    hits: dict[tuple[str, str, str], dict[str, Any]] = field(default_factory=dict)


class RunState:
    """The attributes of a run, typed once for every piece. Set by ModuleRun.__init__ and
    ModuleRun.run; a test may build a bare run (``ModuleRun.__new__``) and set only those
    a piece reads."""

    suite: Any  # benchtui.verify.suite.Suite
    spec: Spec
    files: dict[str, str]
    torch: Any  # the torch module, imported once the run is known to need it
    deck_forbidden: list[str]  # the deck's text search's hits: its rule fails the answer on any
    device: Any  # this side's torch.device
    answer_device: str  # "cuda" or "cpu": where the answer's process runs its module
    dtype: Any  # the torch dtype a KernelBench problem's precision casts to, or None
    deck_ok: bool | None
    deck_failure: str
    # per figure, shape -> value (None where the shape has no resolved figure)
    fractions: dict[str, dict[str, float | None]]
    right_outputs: set[str]  # fingerprints of right outputs, to name a stale one
    time_figures: list[tuple[str, dict[str, Any]]]  # each shape's time check, recorded once the answer is right
    trace_targets: dict[str, frozenset[str]]  # the forbidden names the dispatcher trace can see
    traced: Traced
    host: Any  # a wire.Proxy to the answer's ModuleHost
    ref_model: Any
    device_name: str
    n_shapes: int
    too_slow: bool
    stalled: bool  # a call did not return within what was left of the run's limit
    window_sizing: dict[str, Any] | None  # the shape being timed: its window's calls, by time and by bytes
    window_held: dict[str, Any] | None  # the shape being timed: what its fullest window held in the checker, measured


def as_list(expected: Any) -> list[Any]:
    """A forward's result as the list of its outputs."""
    return list(expected) if isinstance(expected, (tuple, list)) else [expected]


def cast(x: Any, dtype: Any) -> Any:
    """A floating-point tensor in ``dtype`` (anything else, or no dtype: unchanged)."""
    import torch

    if dtype is not None and isinstance(x, torch.Tensor) and x.is_floating_point():
        return x.to(dtype)
    return x


def encode(x: Any) -> Any:
    """A value as the wire carries tensors (engine/verify/module/tensors.py)."""
    from benchtui.verify.module import tensors as T

    return T.encode_tree(x)
