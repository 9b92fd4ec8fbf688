"""The dispatcher trace of the answer's calls (a piece of ModuleRun).

Where the deck forbids a torch op, the untimed calls (and one untimed call
slipped before each timed window, timed.py) run under a dispatch mode in the
answer's process (engine/verify/module/host.py ``OpTrace``; on a GPU the
profiler's kernels too). What it reports is the answer's word: a forbidden op
it names is ``forbidden``; none named is an ``info``, never a pass.
"""
from __future__ import annotations

from typing import Any

from benchtui.records.verdicts import FORBIDDEN
from benchtui.verify.module import ops as module_ops
from benchtui.verify.module.spec import NO_FORBIDDEN
from benchtui.verify.module.staging import Staging
from benchtui.verify.module.state import BadReply


class Tracing(Staging):
    @property
    def tracing(self) -> bool:
        """Whether untimed calls run under the dispatcher trace: where the deck forbids a torch op."""
        return bool(self.trace_targets)

    def note_trace(self, got: dict[str, Any], where: dict[str, Any]) -> None:
        """Read a traced cycle's ops and kernels (the answer's process recorded them: its
        word) and keep each forbidden op they reach, with where it was first seen."""
        ops, kernels = got.get("ops"), got.get("kernels")
        if type(ops) is not list or type(kernels) is not list or not all(type(x) is str for x in ops + kernels):
            raise BadReply("a traced cycle replied no list of the aten ops and kernels it ran")
        traced = self.traced
        traced.calls += 1
        traced.ops.update(x[:200] for x in ops[:4096])
        traced.kernels.update(x[:300] for x in kernels[:4096])
        hits = [(op, f, "aten op") for op, f in module_ops.op_hits(ops, self.spec.forbidden)]
        hits += [(k, f, "kernel") for k, f in module_ops.kernel_hits(kernels, self.spec.forbidden)]
        for what, f, kind in hits:
            traced.hits.setdefault((what[:300], f, kind), dict(where))

    def forbidden_calls(self) -> None:
        """The ``forbidden_calls`` check over every traced call: a forbidden op reached
        is ``forbidden``; none seen is an ``info`` (the trace ran in the answer's process)."""
        suite, spec, traced = self.suite, self.spec, self.traced
        if not self.tracing or not traced.calls:
            return
        names = ", ".join(self.trace_targets)
        details = {"traced_calls": traced.calls, "ops": sorted(traced.ops), "kernels": sorted(traced.kernels),
                   "counts_as": {f: sorted(ops) for f, ops in self.trace_targets.items()},
                   "recorded_by": "a torch dispatch mode (and on a GPU the profiler's kernels) in the answer's process"}
        if traced.hits:
            ordered = sorted(traced.hits.items(), key=lambda kv: kv[0])
            found = [{"seen": what, "forbidden": f, "as": kind, "where": where} for (what, f, kind), where in ordered]
            first = ordered[0][1]
            at = ", ".join(f"{k} {first[k]}" for k in ("shape", "seed", "case", "window") if k in first)
            shown = "; ".join(f"{kind} {what[:120]} ({f})" for (what, f, kind), _ in ordered[:3])
            suite.record("forbidden_calls", FORBIDDEN, value=len(found), threshold=0,
                         requires=spec.requires(NO_FORBIDDEN),
                         message=f"{shown}" + (f" and {len(found) - 3} more" if len(found) > 3 else "")
                                 + f"; first at {at}; seen at the dispatcher over {traced.calls} traced calls "
                                   "(recorded in the answer's process)",
                         details={**details, "hits": found})
        else:  # the answer's word (a trace in its process, which it can detect or switch off): never a pass
            library = module_ops.library_calls(traced.ops, traced.kernels)
            suite.info("forbidden_calls", value=0,
                       message=f"none of {names} seen at the dispatcher over {traced.calls} traced calls "
                               f"({len(traced.ops)} distinct aten ops; recorded in the answer's process, so its word)"
                               + (f"; library routines it ran, which this deck does not forbid: {', '.join(library[:4])}"
                                  + (f" and {len(library) - 4} more" if len(library) > 4 else "") if library else ""),
                       details={**details, "library_calls": library})
