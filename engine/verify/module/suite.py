"""Checks for a kernel deck's problem whose answer is a PyTorch module.

A challenge made from a KernelBench or KernelBench-Hard problem holds the
deck's ``reference.py`` (and ``shapes.py``) and a ``[module]`` table in its
challenge.toml; its conformance.py is ``from benchtui.api import
run_module_suite as run``. The answer (``solution.py``: ``Model`` or ``ModelNew``) is imported,
built and called only in the answer's sandboxed process
(engine/verify/module/host.py); the reference runs here, in the checker, on
its own copy of every input.

Verdicts as the deck defines them, and harder:

- the deck's shapes, seeds, numeric stress cases, tolerances (read from the
  challenge), comparison (an index output judged by the input's values it
  gathers, where check.py does so) and weights
  (``load_state_dict(strict=True)`` or seeded construction) reproduced; an
  ``info`` check says whether the deck's own check.py rule alone would pass;
- fresh secret seeds beside the deck's (128 bits, every bit seeding torch's
  generators); the output of every timed call verified; the input storage
  overwritten in place between calls, so a module that memoises on identity,
  pointer or version returns stale results; inputs checked unchanged (on the
  CPU by this side, reading back the pages it wrote them into); outputs of
  the reference's shape and dtype as decoded here, of the run's device and
  exactly ``torch.Tensor`` as the answer's process reports them (its word can
  fail a call, never pass one);
- forbidden ops read from the code's syntax tree (imports, aliases,
  ``getattr``, strings) and from the aten ops (on a GPU, the library kernels)
  every untimed call dispatched, and an untimed call before each timed
  window (a dispatch mode in the answer's process: its word; see
  engine/verify/module/ops.py), beside the deck's text search. What the
  answer prints, and how it exits, mean nothing: only what comes back over
  the wire is judged.

Every reply of the answer's host is read by value (a handle in it is an
``error`` naming it) and refused past the reference's size before any of it
is decoded: the host runs beside the answer's code, which can rewrite it.

Each failure names its requirement, shape, seed and case. Figures: time per
call by this side's clock around windows of whole cycles, staging and the
output's fetch included, less the same window without the answer, with its
resolution (trusted; see engine/verify/module/timing.py and
engine/verify/timing/core.py; no figure at or below the resolution), the deck's own timing
loop run in the answer's process (labelled "as published"), peak_fraction
by the deck's formulas against the deck's hardware peak and against the
device measured; a gap between the two times is flagged.
The run is :class:`ModuleRun`, stacked from one piece per job: staging.py
(the answer's host and the inputs), trace.py (the dispatcher trace),
checking.py (calling and verifying), timed.py (timed windows and figures);
this module holds the run's order and its summary.
"""
from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from benchtui.records.verdicts import COMPILE_ERROR, ERROR, FORBIDDEN, PASS, UNBOUND
from benchtui.verify.binding import load_module
from benchtui.verify.module import ops as module_ops
from benchtui.verify.module import rules as R
from benchtui.verify.module.spec import INTERFACE, NO_FORBIDDEN, RULE_PARTS, precision_dtype
from benchtui.verify.module.spec import Spec as Spec  # where the challenges' tools read it
from benchtui.verify.module.state import Traced, cast, encode
from benchtui.verify.module.timed import Timed
from benchtui.verify.suite import describe_exception


def run(suite: Any) -> None:
    try:
        spec = Spec.read(suite.challenge_dir)
    except (OSError, ValueError, tomllib.TOMLDecodeError) as exc:
        suite.record("module_spec", ERROR, message=f"this challenge's [module] table cannot be read: {exc}")
        return
    files = R.answer_sources(suite.answer_dir)
    if spec.answer_file not in files:
        suite.record("bind", UNBOUND, message=f"no {spec.answer_file} in the answer (the deck's answer file, "
                                                f"defining {spec.answer_class})")
        return
    deck_forbidden = forbidden_checks(suite, spec, files)
    try:
        import torch  # noqa: F401
    except ImportError:
        suite.skip("module", "PyTorch is not installed here: install benchtui's torch extra (pip install 'benchtui[torch]')",
                   requires=spec.skipped())
        return
    if suite.backend != "cuda":
        why = not_on_cpu(Path(suite.challenge_dir), spec, files)
        if why:
            suite.skip("module", f"{why}; run it with --backend cuda on a machine with a GPU", requires=spec.skipped())
            return
    ModuleRun(suite, spec, files, deck_forbidden).run()


def not_on_cpu(challenge_dir: Path, spec: Spec, files: dict[str, str]) -> str | None:
    """Why this answer to this problem is not run on the CPU, or None where it fits:
    its code needs an NVIDIA GPU, or one call at the deck's sizes holds more than
    ``CPU_CALL_BYTES``. ``challenge check`` asks the same of the reference."""
    needs = R.gpu_needs(files)
    if needs:
        return (f"needs an NVIDIA GPU, and this run is on the CPU: {needs[0]}"
                + (f" (and {len(needs) - 1} more)" if len(needs) > 1 else ""))
    size = R.call_bytes(challenge_dir / spec.reference, challenge_dir / spec.shapes if spec.shapes else None)
    if size is not None and size > R.CPU_CALL_BYTES:
        return (f"one call at the deck's sizes holds {size / 2**30:.1f} GiB of inputs and weights, "
                f"over the {R.CPU_CALL_BYTES / 2**30:g} GiB this harness runs on the CPU")
    return None


def forbidden_checks(suite: Any, spec: Spec, files: dict[str, str]) -> list[str]:
    """Records the forbidden-op checks; returns what the deck's own text search finds in the answer file."""
    deck_hits = R.deck_grep(files[spec.answer_file], spec.forbidden)
    if not spec.forbidden:
        return deck_hits
    found, unparsed = R.forbidden_in_code(files, spec.forbidden, R.native_sources(Path(suite.answer_dir)))
    hits = [h for h in found if h.certain]
    could = [h for h in found if not h.certain]  # not resolved to the op: a figure, never the verdict
    details = {"deck_rule_hits": deck_hits, "hits": [str(h) for h in hits], "could_be": [str(h) for h in could],
               "unparsed": unparsed}
    deck_says = (f"the deck's text search finds {', '.join(deck_hits)}" if deck_hits
                 else "the deck's text search of solution.py finds none")
    if could:
        deck_says += f"; {len(could)} place(s) could be one, not resolved (forbidden_unresolved)"
    if hits:
        suite.record("forbidden_ops", FORBIDDEN, value=len(hits), threshold=0, requires=spec.requires(NO_FORBIDDEN),
                     message=f"{hits[0]}" + (f" and {len(hits) - 1} more" if len(hits) > 1 else "") + f"; {deck_says}",
                     details=details)
    elif deck_hits:  # text only: a comment or a docstring that names it
        suite.record("forbidden_ops", PASS, value=0, threshold=0, requires=spec.requires(NO_FORBIDDEN),
                     message=f"no forbidden op reached in the code; {deck_says} (in text that is not code), "
                             "which fails the deck's own rule", details=details)
    else:
        suite.record("forbidden_ops", PASS, value=0, threshold=0, requires=spec.requires(NO_FORBIDDEN),
                     message=f"none of {', '.join(spec.forbidden)} reached (imports, aliases, getattr, strings); {deck_says}",
                     details=details)
    if could:
        suite.info("forbidden_unresolved", value=len(could),
                   message=f"{could[0]}" + (f" and {len(could) - 1} more" if len(could) > 1 else "")
                           + "; not resolved in the code, so not a verdict: what a forward really calls is "
                             "forbidden_calls' to say", details={"could_be": [str(h) for h in could]})
    return deck_hits


class ModuleRun(Timed):
    """One answer's module-harness run: build, the checks at every shape, the forbidden-op
    trace, the figures. Its pieces (the classes it stacks) say how each part is done."""

    def __init__(self, suite: Any, spec: Spec, files: dict[str, str], deck_forbidden: list[str]):
        import torch

        self.suite, self.spec, self.files, self.torch = suite, spec, files, torch
        self.deck_forbidden = deck_forbidden
        self.device = torch.device("cuda" if suite.backend == "cuda" and torch.cuda.is_available() else "cpu")
        self.answer_device = "cuda" if suite.backend == "cuda" else "cpu"
        self.dtype = precision_dtype(spec) if spec.deck == R.KB else None
        self.deck_ok = True
        self.deck_failure = ""
        self.fractions = {"deck_peak": {}, "device_peak": {}, "deck_peak_published": {}}
        self.right_outputs = set()
        self.time_figures = []
        self.trace_targets = module_ops.targets(spec.forbidden)
        self.traced = Traced()

    # -- the whole run ----------------------------------------------------------------
    def run(self) -> None:
        suite, spec = self.suite, self.spec
        self.host = self.build_host()
        if self.host is None:
            build = suite.checks[-1] if suite.checks else None
            if build is not None and build.name.endswith("build") and build.verdict in (ERROR, COMPILE_ERROR) \
                    and not any(c.name.endswith("deck_rule") for c in suite.checks):
                suite.info("deck_rule", value="fail", message="the deck's own check.py rule alone would FAIL this answer "
                                                              f"too (importing solution.py fails: {build.message})")
            return
        ref = suite.reference()
        shapes = [None]
        if spec.shapes:
            shapes_mod = load_module(suite.challenge_dir / spec.shapes, f"benchtui_shapes_{suite.challenge_id}")
            shapes = list(getattr(shapes_mod, "SHAPES", [])) or [None]
        # read here, never from the answer's process: it picks the device peak a figure is a fraction of
        self.device_name = self.torch.cuda.get_device_name(self.device) if self.device.type == "cuda" else "cpu"
        self.n_shapes = len(shapes)
        self.too_slow = self.stalled = False
        for index, shape in enumerate(shapes):
            if not self.shape_checks(ref, index, shape):
                break
        self.forbidden_calls()
        if not (self.too_slow or self.stalled):  # stopped early: the deck's rule was not applied either
            self.summary(len(shapes))


    # -- one shape --------------------------------------------------------------------
    def shape_checks(self, ref: Any, index: int, shape: dict[str, Any] | None) -> bool:
        suite, spec, torch = self.suite, self.spec, self.torch
        label = f"shape {index}" + (f" {shape}" if shape else "")
        if shape:
            for k, v in shape.items():
                setattr(ref, k, v)
        # -- build both models
        with suite.check(f"weights:shape{index}", requires=spec.requires(INTERFACE)) as c:
            init = list(ref.get_init_inputs())
            if spec.weights == "seeded":
                seed = spec.seeds[0] if spec.seeds else 42
                torch.manual_seed(seed)
                init = [cast(x, self.dtype) for x in ref.get_init_inputs()]
                torch.manual_seed(seed)
                ref_model = ref.Model(*init)
                facts = self._host("build", encode(init), seed=seed, state=None,
                                        dtype=str(self.dtype).removeprefix("torch.") if self.dtype else None)
            else:
                from benchtui.verify.module.seeds import seed_torch

                seed_torch(self._secret("weights", index))
                ref_model = ref.Model(*init)
                try:
                    facts = self._host("build", encode(init), seed=None, state=encode(dict(ref_model.state_dict())))
                except Exception as exc:
                    if "state_dict" in str(exc) or "Missing key" in str(exc) or "Unexpected key" in str(exc):
                        self._deck_fail(f"{label}: state_dict mismatch")
                        c.fail(f"state_dict: {label}: the answer's module does not take the reference's weights with "
                               f"load_state_dict(strict=True): {describe_exception(exc)}")
                    raise
            ref_model = ref_model.to(self.device)
            if self.dtype is not None:
                ref_model = ref_model.to(self.dtype)
            ref_model.eval()
            c.message = (f"{label}: built in the answer's process ({facts['build_s']:g} s); weights "
                         + ("by seeded construction (seed " + str(spec.seeds[0] if spec.seeds else 42) + ")"
                            if spec.weights == "seeded" else "loaded from the reference's state_dict (strict)"))
        if c.verdict != PASS:
            return False
        self.ref_model = ref_model
        self.drop_pages()  # the answer's host let go of its inputs when it built the module again
        cases = [{"name": "nominal"}] + list(spec.stress)
        # -- the deck's seeds
        deck_seeds = (R.kernelbench_trial_seeds(spec.seeds[0] if spec.seeds else 42, spec.num_correct_trials)
                      if spec.deck == R.KB else list(spec.seeds))
        secret = [self._secret("inputs", index, i) for i in range(max(1, min(3, len(deck_seeds))))]
        first = len(deck_seeds) * len(cases)
        from benchtui.verify.module import edges  # ties and wider inputs: benchtui's own, every run

        # the calls every check at a shape makes of a right answer, the timed ones included: a
        # projection over the correctness calls alone said a run fits its limit that then timed out
        at_shape = (len(deck_seeds) + len(secret)) * len(cases) + edges.calls(spec) + self.timed_calls_least()
        budget = self.cpu_budget(first, at_shape) if index == 0 else None
        right = self.calls(ref, f"deck_seeds:shape{index}", label, deck_seeds, cases, deck=True, budget=budget)
        if self.too_slow or self.stalled:
            return False
        # -- fresh secret seeds
        right = self.calls(ref, f"secret_seeds:shape{index}", label, secret, cases, deck=False) and right
        if spec.property_stress:
            from benchtui.verify.module import property as module_property

            right = module_property.check(self, ref, index, label) and right
        right = edges.check(self, ref, index, label) and right
        if right and not self.failing():  # a wrong answer's time is no figure
            self.timing(ref, index, label, shape or {})
        return True


    def summary(self, shapes: int) -> None:
        suite, spec = self.suite, self.spec
        from benchtui.verify.timing import core as TT

        ok = self.deck_ok and not self.deck_forbidden
        why = self.deck_failure or (f"forbidden text {self.deck_forbidden[0]!r}" if self.deck_forbidden else "")
        lacking = spec.not_reproducible(*RULE_PARTS)
        if lacking:  # the rule without the parts it lost may pass what the whole rule fails
            suite.info("deck_rule", value="not reproducible",
                       message=(f"{lacking}: the deck's own check.py rule cannot be applied whole; of what was "
                                f"imported it would {'PASS' if ok else 'FAIL'} this answer" + (f" ({why})" if why else "")),
                       details={"deck": spec.deck, "problem": spec.problem, "missing": spec.missing,
                                "partial": "pass" if ok else "fail"})
        else:
            suite.info("deck_rule", value="pass" if ok else "fail",
                       message=(f"the deck's own check.py rule alone would {'PASS' if ok else 'FAIL'} this answer"
                                + (f" ({why})" if why else "") + " (its seeds, shapes, stress cases, tolerance and text "
                                "search; not benchtui's added checks)"),
                       details={"deck": spec.deck, "problem": spec.problem})
        failed = self.failing()
        if failed is not None:  # a wrong answer's figures are not computed, nor are its earlier shapes' shown
            suite.info("peak_fraction", value=None, message=(
                f"not computed: the answer fails ({failed.name}: {failed.verdict}), and a wrong answer's figures "
                "are not computed"), details={"failed": failed.name})
            return
        for name, figure in self.time_figures:
            suite.info(name, **figure)
        fr, covered, left = {}, {}, {}
        for k, per_shape in self.fractions.items():
            fr[k], covered[k], left[k] = TT.geomean(per_shape)
        if fr["deck_peak"] is not None or left["deck_peak"]:
            left_out = left["deck_peak"]
            message = (f"geomean over {len(covered['deck_peak'])} of {len(self.fractions['deck_peak'])} timed shapes"
                       + (f" (left out, no resolved time or no figure: {', '.join(left_out)})" if left_out else "")
                       + (f": {fr['deck_peak']:.4g} of the deck's peak ({spec.peak.get('hardware', '?')}), "
                          if fr["deck_peak"] is not None else ": no figure; ")
                       + (f"{fr['device_peak']:.4g} of this device's; " if fr["device_peak"] is not None
                          else "no device peak (not a known GPU, or no resolved time); ")
                       + (f"as published (the answer's word): {fr['deck_peak_published']:.4g}"
                          if fr["deck_peak_published"] is not None else ""))
            lacking = spec.not_reproducible("peak", "shapes")
            suite.info("peak_fraction", value=round(fr["deck_peak"], 6) if fr["deck_peak"] is not None else None,
                       message=(f"{lacking}; " if lacking else "") + message,
                       details={**fr, "shapes": covered, "left_out": left})

