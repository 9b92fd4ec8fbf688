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
"""
from __future__ import annotations

import statistics
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchtui.verify import verdicts as V
from benchtui.verify import wire
from benchtui.verify.binding import load_module
from benchtui.verify.module import ops as module_ops
from benchtui.verify.module import rules as R
from benchtui.verify.suite import CheckFailed, CheckTimeout, SkipCheck, describe_exception, missing_package

# an as-published time this many times below the trusted one is flagged
GAP_FLAG = 2.0
# the requirement ids the checks name (engine/challenges/coverage.py), by what they test:
# the answer's results (``correct``, and ``task`` where the challenge words the task
# itself), its module's interface (``interface``: it imports, builds from the
# reference's constructor arguments and takes its weights) and the deck's forbidden
# ops (``no_forbidden_ops``). A challenge names in [requirements] the ones its prompt
# words; a check whose id it does not declare names ``correct`` instead (the decks
# count a forbidden op, or a module that does not build, as a failed correctness check).
CORRECT, TASK, INTERFACE, NO_FORBIDDEN = "correct", "task", "interface", "no_forbidden_ops"
# the [module.missing] keys the deck's own rule needs (engine/decks/kernelbench_hard.py, kernelbench.py)
RULE_PARTS = ("default_tolerance", "tolerance", "stress", "property_stress", "seeds", "shapes")


@dataclass
class Spec:
    deck: str
    problem: str
    answer_file: str
    answer_class: str
    weights: str
    seeds: list[int]
    atol: float
    rtol: float
    tolerance: dict
    forbidden: list[str]
    num_correct_trials: int
    num_perf_trials: int
    flops_formula: str | None
    bytes_formula: str | None
    regime: str
    precision: str
    peak: dict
    reference: str = "reference.py"
    shapes: str | None = None
    stress: list[dict] = field(default_factory=list)
    property_stress: dict = field(default_factory=dict)  # the deck's generated cases (module/property.py)
    default_tolerance: dict = field(default_factory=dict)  # the deck's per-dtype defaults, {dtype: {atol, rtol}}
    # an index output compared as the deck's check.py compares it (engine/decks/index_rule.py):
    # {output, values, input, dim, dtype}; none: every output compared by value
    indices: dict = field(default_factory=dict)
    deck_title: str = ""
    declared: frozenset = frozenset()  # the ids of the challenge's [requirements]
    # parts of the deck the import did not find ([module.missing]): what they hold -> the part
    missing: dict = field(default_factory=dict)

    def not_reproducible(self, *what: str) -> str:
        """'not reproducible: <part> missing (...)' for the parts of ``what`` the deck lacked, or ""."""
        parts = list(dict.fromkeys(str(v) for k, v in self.missing.items() if k in what))
        return f"not reproducible: {', '.join(parts)} missing from the imported deck" if parts else ""

    def requires(self, role: str) -> tuple[str, ...]:
        """The requirement ids a check of ``role`` (correct, interface, no_forbidden_ops)
        names: the role's own id where the challenge declares it (or declares none),
        else ``correct``; a correctness check names ``task`` too where it is declared."""
        if role == CORRECT:
            return (CORRECT, TASK) if TASK in self.declared else (CORRECT,)
        if not self.declared or role in self.declared:
            return (role,)
        return self.requires(CORRECT)

    def tol(self, dtype: str, case: dict | None = None) -> tuple[float, float]:
        """(atol, rtol) for an output of ``dtype`` as the deck looks it up, from this
        challenge's tables (KernelBench: by the problem's precision)."""
        key = R.precision_dtype(self.precision) if self.deck == R.KB else dtype
        return R.tolerance(self.deck, key, self.atol, self.rtol, self.tolerance, case, self.default_tolerance)

    def skipped(self) -> tuple[str, ...]:
        """What a check standing for the whole module run (skipped here) names."""
        return tuple(dict.fromkeys(self.requires(INTERFACE) + self.requires(CORRECT)))

    @classmethod
    def read(cls, challenge_dir: Path) -> Spec:
        data = tomllib.loads((Path(challenge_dir) / "challenge.toml").read_text(encoding="utf-8"))
        m = data.get("module")
        if not isinstance(m, dict):
            raise ValueError("challenge.toml has no [module] table")
        deck = str(m.get("deck", ""))
        if deck not in (R.HARD, R.KB):
            raise ValueError(f"[module] deck {deck!r} is neither {R.HARD!r} nor {R.KB!r}")
        return cls(
            deck=deck, problem=str(m.get("problem", "")), answer_file=str(m.get("answer_file", "solution.py")),
            answer_class=str(m.get("answer_class", "Model" if deck == R.HARD else "ModelNew")),
            weights=str(m.get("weights", "load_state_dict" if deck == R.HARD else "seeded")),
            seeds=[int(s) for s in m.get("seeds", [42, 123, 456] if deck == R.HARD else [42])],
            atol=float(m.get("atol", 1e-4)), rtol=float(m.get("rtol", 1e-4)),
            tolerance=dict(m.get("tolerance", {})), forbidden=[str(f) for f in m.get("forbidden", [])],
            num_correct_trials=int(m.get("num_correct_trials", 3 if deck == R.HARD else 5)),
            num_perf_trials=int(m.get("num_perf_trials", 30 if deck == R.HARD else 100)),
            flops_formula=m.get("flops_formula"), bytes_formula=m.get("bytes_formula"),
            regime=str(m.get("regime", "compute")), precision=str(m.get("precision", "")),
            peak=dict(m.get("peak", {})), reference=str(m.get("reference", "reference.py")),
            shapes=m.get("shapes"), stress=list(m.get("stress", [])), deck_title=str(m.get("deck_title", "")),
            property_stress=dict(m.get("property_stress") or {}),
            default_tolerance=dict(m.get("default_tolerance") or {}), indices=_index_rule(m.get("indices")),
            missing=dict(m.get("missing") or {}),
            declared=frozenset(str(k) for k in (data.get("requirements") or {})),
        )


@dataclass
class Traced:
    """What the traced calls of a run dispatched (the answer's process recorded it)."""

    calls: int = 0
    ops: set[str] = field(default_factory=set)
    kernels: set[str] = field(default_factory=set)
    # (aten op or kernel, forbidden name, "aten op" or "kernel") -> where it was first seen
    hits: dict[tuple[str, str, str], dict] = field(default_factory=dict)


class BadReply(Exception):
    """A reply of the answer's host that is not the plain data it must be."""


class CallFailed(CheckFailed):
    def __init__(self, requirement: str, message: str):
        super().__init__(message)
        self.requirement = requirement


def run(suite) -> None:
    try:
        spec = Spec.read(suite.challenge_dir)
    except (OSError, ValueError, tomllib.TOMLDecodeError) as exc:
        suite.record("module_spec", V.ERROR, message=f"this challenge's [module] table cannot be read: {exc}")
        return
    files = R.answer_sources(suite.answer_dir)
    if spec.answer_file not in files:
        suite.record("bind", V.UNBOUND, message=f"no {spec.answer_file} in the answer (the deck's answer file, "
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


def forbidden_checks(suite, spec: Spec, files: dict[str, str]) -> list[str]:
    """Records the forbidden-op checks; returns what the deck's own text search finds in the answer file."""
    deck_hits = R.deck_grep(files[spec.answer_file], spec.forbidden)
    if not spec.forbidden:
        return deck_hits
    found, unparsed = R.forbidden_in_code(files, spec.forbidden)
    hits = [h for h in found if h.certain]
    could = [h for h in found if not h.certain]  # not resolved to the op: a figure, never the verdict
    details = {"deck_rule_hits": deck_hits, "hits": [str(h) for h in hits], "could_be": [str(h) for h in could],
               "unparsed": unparsed}
    deck_says = (f"the deck's text search finds {', '.join(deck_hits)}" if deck_hits
                 else "the deck's text search of solution.py finds none")
    if could:
        deck_says += f"; {len(could)} place(s) could be one, not resolved (forbidden_unresolved)"
    if hits:
        suite.record("forbidden_ops", V.FORBIDDEN, value=len(hits), threshold=0, requires=spec.requires(NO_FORBIDDEN),
                     message=f"{hits[0]}" + (f" and {len(hits) - 1} more" if len(hits) > 1 else "") + f"; {deck_says}",
                     details=details)
    elif deck_hits:  # text only: a comment or a docstring that names it
        suite.record("forbidden_ops", V.PASS, value=0, threshold=0, requires=spec.requires(NO_FORBIDDEN),
                     message=f"no forbidden op reached in the code; {deck_says} (in text that is not code), "
                             "which fails the deck's own rule", details=details)
    else:
        suite.record("forbidden_ops", V.PASS, value=0, threshold=0, requires=spec.requires(NO_FORBIDDEN),
                     message=f"none of {', '.join(spec.forbidden)} reached (imports, aliases, getattr, strings); {deck_says}",
                     details=details)
    if could:
        suite.info("forbidden_unresolved", value=len(could),
                   message=f"{could[0]}" + (f" and {len(could) - 1} more" if len(could) > 1 else "")
                           + "; not resolved in the code, so not a verdict: what a forward really calls is "
                             "forbidden_calls' to say", details={"could_be": [str(h) for h in could]})
    return deck_hits


class ModuleRun:
    def __init__(self, suite, spec: Spec, files: dict[str, str], deck_forbidden: list[str]):
        import torch

        self.suite, self.spec, self.files, self.torch = suite, spec, files, torch
        self.deck_forbidden = deck_forbidden  # the deck's text search's hits: its rule fails the answer on any
        self.device = torch.device("cuda" if suite.backend == "cuda" and torch.cuda.is_available() else "cpu")
        self.answer_device = "cuda" if suite.backend == "cuda" else "cpu"
        self.dtype = _precision_dtype(spec) if spec.deck == R.KB else None
        self.deck_ok: bool | None = True
        self.deck_failure = ""
        # per figure, shape -> value (None where the shape has no resolved figure)
        self.fractions: dict[str, dict] = {"deck_peak": {}, "device_peak": {}, "deck_peak_published": {}}
        self.right_outputs: set[str] = set()  # fingerprints of right outputs, to name a stale one
        self.time_figures: list[tuple[str, dict]] = []  # each shape's time check, recorded once the answer is right
        # the forbidden names the dispatcher trace can see, and what the traced calls reached
        self.trace_targets = module_ops.targets(spec.forbidden)
        self.traced = Traced()

    # -- the whole run ----------------------------------------------------------------
    def run(self) -> None:
        suite, spec = self.suite, self.spec
        self.host = self.build_host()
        if self.host is None:
            build = suite.checks[-1] if suite.checks else None
            if build is not None and build.name.endswith("build") and build.verdict in (V.ERROR, V.COMPILE_ERROR) \
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
        self.too_slow = False
        for index, shape in enumerate(shapes):
            if not self.shape_checks(ref, index, shape):
                break
        self.forbidden_calls()
        if not self.too_slow:  # stopped for this CPU's speed: the deck's rule was not applied either
            self.summary(len(shapes))

    def build_host(self):
        suite, spec = self.suite, self.spec
        from benchtui.verify.module.host import answer_hash

        limit = float(suite.threshold("build_timeout_s", 600.0))
        spec_wire = {"file": spec.answer_file, "cls": spec.answer_class, "device": self.answer_device,
                     "build_timeout_s": limit, "answer_hash": answer_hash(suite.answer_dir)}
        with suite.check("build", timeout_s=limit + 60, requires=spec.requires(INTERFACE)) as c:
            try:
                host = suite.peer.call_op("torch_module", spec_wire)
            except Exception as exc:
                reason = self._not_here(exc)
                if reason:
                    raise SkipCheck(reason) from None
                if getattr(exc, "remote_type", type(exc).__name__) in ("BuildTimeout", "TimeoutError"):
                    c.verdict, c.message = V.TIMEOUT, describe_exception(exc)
                    return None
                if getattr(exc, "remote_type", "") == "SystemExit":
                    suite.info("deck_rule", value="exit status", message=(
                        "the deck's check.py would end at `import solution` with the answer's exit status "
                        f"({str(exc) or 'None'}): SystemExit is not an Exception there, so a harness reading the exit "
                        "status or a printed PASS would count it"))
                    c.verdict, c.message = V.ERROR, f"{describe_exception(exc)} (the answer exits while being imported)"
                    return None
                if "Error building extension" in str(exc) or "CalledProcessError" in str(exc):
                    c.verdict, c.message = V.COMPILE_ERROR, describe_exception(exc)
                    return None
                raise
            c.value = round(float(host.import_s), 3)
            c.message = f"imported {spec.answer_file} in the answer's process ({c.value:g} s, build cache {host.cache})"
            return host
        return None

    def _not_here(self, exc: BaseException) -> str | None:
        """Why an answer cannot run on this machine (not its fault), or None."""
        text = str(exc)
        package = missing_package(exc) if "ModuleNotFoundError" in (getattr(exc, "remote_type", "") or type(exc).__name__) \
            or isinstance(exc, ModuleNotFoundError) else None
        if package == "triton":
            return "the answer uses Triton, which is not installed here (Triton kernels need a GPU)"
        if self.answer_device == "cpu" and any(s in text for s in ("not compiled with CUDA", "no NVIDIA driver",
                                                                     "CUDA_HOME", "Found no NVIDIA", "CUDA driver")):
            return f"the answer needs an NVIDIA GPU, and this run is on the CPU ({text.splitlines()[0][:160]})"
        return None

    # -- one shape --------------------------------------------------------------------
    def shape_checks(self, ref, index: int, shape: dict | None) -> bool:
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
                init = [_cast(x, self.dtype) for x in ref.get_init_inputs()]
                torch.manual_seed(seed)
                ref_model = ref.Model(*init)
                facts = self._host("build", _enc(init), seed=seed, state=None,
                                        dtype=str(self.dtype).removeprefix("torch.") if self.dtype else None)
            else:
                from benchtui.verify.module.seeds import seed_torch

                seed_torch(self._secret("weights", index))
                ref_model = ref.Model(*init)
                try:
                    facts = self._host("build", _enc(init), seed=None, state=_enc(dict(ref_model.state_dict())))
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
        if c.verdict != V.PASS:
            return False
        self.ref_model = ref_model
        self.drop_pages()  # the answer's host let go of its inputs when it built the module again
        cases = [{"name": "nominal"}] + list(spec.stress)
        # -- the deck's seeds
        deck_seeds = (R.kernelbench_trial_seeds(spec.seeds[0] if spec.seeds else 42, spec.num_correct_trials)
                      if spec.deck == R.KB else list(spec.seeds))
        secret = [self._secret("inputs", index, i) for i in range(max(1, min(3, len(deck_seeds))))]
        first = len(deck_seeds) * len(cases)
        budget = self.cpu_budget(first, (len(deck_seeds) + len(secret)) * len(cases)) if index == 0 else None
        right = self.calls(ref, f"deck_seeds:shape{index}", label, deck_seeds, cases, deck=True, timeout_s=budget)
        if self.too_slow:
            return False
        # -- fresh secret seeds
        right = self.calls(ref, f"secret_seeds:shape{index}", label, secret, cases, deck=False) and right
        if spec.property_stress:
            from benchtui.verify.module import property as module_property

            right = module_property.check(self, ref, index, label) and right
        from benchtui.verify.module import edges  # ties and wider inputs: benchtui's own, every run

        right = edges.check(self, ref, index, label) and right
        if right and not self.failing():  # a wrong answer's time is no figure
            self.timing(ref, index, label, shape or {})
        return True

    def cpu_budget(self, calls_now: int, calls_per_shape: int) -> float | None:
        """On the CPU, the seconds the first shape's first ``calls_now`` calls may take: their
        share of what is left of the run's time limit over the calls the checks make at every
        shape (fewer than they make in all: timing calls come on top). An answer slower than
        that cannot finish in the limit, and is known to after these calls, not at the limit."""
        limit = getattr(self.suite, "run_limit_s", None)
        if self.answer_device != "cpu" or not limit:
            return None
        left = limit - (time.monotonic() - getattr(self.suite, "run_started", time.monotonic()))
        return max(left * calls_now / (calls_per_shape * getattr(self, "n_shapes", 1)), 1.0)

    def too_slow_for_the_cpu(self, c, budget: float, calls: int, label: str) -> SkipCheck:
        """The first calls ran past their share of the run's limit: nothing was judged (the
        answer may be right, and a GPU run would say); the run stops here, not at its limit."""
        c.details["cpu_budget_s"] = round(budget, 2)
        self.too_slow = True
        return SkipCheck(
            f"too slow for this CPU: the answer's first {calls} calls at {label} ran past {budget:.1f} s, "
            f"their share of the run's {self.suite.run_limit_s:g} s limit over {self.n_shapes} shape(s), so its "
            "checks would not finish in it; nothing was judged. Run it with --backend cuda on a machine with a GPU, "
            "or with a longer --timeout")

    def calls(self, ref, name: str, label: str, seeds: list[int], cases: list[dict], deck: bool,
              timeout_s: float | None = None) -> bool:
        suite = self.suite
        done = 0
        with suite.check(name, timeout_s=timeout_s, requires=self.spec.requires(CORRECT)) as c:
            c.details["seeds"] = seeds
            c.details["cases"] = [case.get("name", "?") for case in cases]
            try:
                for seed in seeds:
                    inputs = self.inputs(ref, seed, deck=deck)
                    for case in cases:
                        if not self.checked_call(c, inputs, case, deck, label, seed):
                            return False
                        done += 1
            except (CheckTimeout, wire.Deadline):
                if timeout_s is None:
                    raise
                raise self.too_slow_for_the_cpu(c, timeout_s, len(seeds) * len(cases), label) from None
            c.value = done
            c.message = (f"{label}: {done} calls right ({len(seeds)} {'deck' if deck else 'fresh secret'} seeds x "
                         f"{len(cases)} cases: {', '.join(c.details['cases'])})")
        return c.verdict == V.PASS

    def checked_call(self, c, inputs: list, case: dict, deck: bool, label: str, seed,
                     in_place: bool | None = None) -> bool:
        """One verified call inside check ``c``: a wrong result fails ``c`` with the
        requirement, shape, seed and case named; the answer raising makes ``c`` an
        error and returns False (the check's calls stop there)."""
        where = {"shape": label, "seed": seed, "case": case.get("name", "?")}
        try:
            self.one_call(inputs, case, deck=deck, in_place=in_place, where=where)
        except CallFailed as exc:
            c.details["requirement"], c.details["where"] = exc.requirement, where
            c.fail(f"{exc.requirement}: {label}, seed {seed}, case {case.get('name', '?')}: {exc}")
        except (CheckTimeout, wire.Deadline, wire.PeerGone):
            raise
        except (BadReply, wire.NotPlain, wire.TooLarge) as exc:  # not the host's plain reply: an error naming it
            c.details["requirement"], c.details["where"] = "reply", where
            c.verdict = V.ERROR
            c.message = f"reply: {label}, seed {seed}, case {case.get('name', '?')}: {exc}"
            return False
        except Exception as exc:  # the answer raised: an error, named where
            self._deck_fail_if(deck, describe_exception(exc))
            c.details["requirement"], c.details["where"] = "runs", where
            c.verdict = V.ERROR
            c.message = f"runs: {label}, seed {seed}, case {case.get('name', '?')}: {describe_exception(exc)}"
            return False
        return True

    def inputs(self, ref, seed: int, deck: bool = False) -> list:
        """``get_inputs()`` under a seed: on the CPU for the deck's seeds (its
        exact inputs, seeded as the deck seeds them), on this side's GPU for
        benchtui's own (fresh values, made fast at the decks' sizes), whose
        128-bit secrets seed torch's generators with every bit (module_seeds)."""
        from benchtui.verify.module.seeds import seed_torch

        torch = self.torch
        if deck:
            torch.manual_seed(int(seed) % (2**63))
            return [_cast(x, self.dtype) for x in ref.get_inputs()]
        seed_torch(int(seed), cuda=self.device.type == "cuda")
        if self.device.type == "cpu":
            return [_cast(x, self.dtype) for x in ref.get_inputs()]
        with self.device:
            return [_cast(x, self.dtype) for x in ref.get_inputs()]

    # -- the answer's host, called by value ---------------------------------------------
    def _host(self, name: str, *args, limit=None, keep=None, **kwargs):
        """A call of the answer's host whose reply is read by value (a handle in
        it is refused), within ``limit``."""
        methods = self.__dict__.setdefault("_methods", {})
        if name not in methods:
            methods[name] = getattr(self.host, name)
        return wire.call_plain(methods[name], *args, limit=limit, keep=keep, **kwargs)

    def put(self, inputs: list, in_place: bool, slot: int = 0) -> dict:
        """A call's inputs into the answer's slot ``slot``. In place: this side
        writes the values into the pages the slot already reads (same objects,
        pointers and versions there), when their layout is the same; else
        they go as new pages, which this side keeps. Returns the slot's record
        (the pages, where each tensor lies in them, the bytes written, and
        ``reused``: whether this side wrote into the pages the last call read)."""
        from benchtui.verify.module import tensors as T

        enc = _enc(list(inputs))
        layout = [(x[T.TAG], x["shape"]) if T.is_encoded(x) else ("value", repr(x)) for x in enc]
        held = getattr(self, "_slots", {}).get(slot)
        if in_place and held is not None and held["layout"] == layout:
            for i, x in enumerate(enc):
                if T.is_encoded(x):
                    held["pages"].write(held["index"][i], x["data"])
            held.update(data={i: x["data"] for i, x in enumerate(enc) if T.is_encoded(x)}, reused=True)
            return held
        keep: list = []
        staged = self._host("share", enc, slot, keep=keep)
        pages = keep[0] if keep else None
        record = {"pages": pages, "layout": layout, "reused": False, "staged": staged,
                  "index": {i: pages.slot(x["data"]) for i, x in enumerate(enc) if T.is_encoded(x)},
                  "data": {i: x["data"] for i, x in enumerate(enc) if T.is_encoded(x)}}
        slots = self.__dict__.setdefault("_slots", {})
        if held is not None and held["pages"] is not None:
            held["pages"].close()
        slots[slot] = record
        return record

    def drop_pages(self) -> None:
        for record in self.__dict__.pop("_slots", {}).values():
            if record["pages"] is not None:
                record["pages"].close()

    @staticmethod
    def changed_pages(record: dict) -> list[int]:
        """The inputs whose pages no longer hold the bytes this side wrote, read
        by this side after the call."""
        pages = record["pages"]
        return [i for i, at in record["index"].items() if pages.read(at) != record["data"][i].tobytes()]

    def output_limit(self, want: list) -> wire.Limit:
        """The most a reply may carry: the reference's outputs' elements at the
        widest dtype a tensor may cross in (8 bytes)."""
        torch = self.torch
        numel = [w.numel() if isinstance(w, torch.Tensor) else 0 for w in want]
        return wire.Limit("the answer's reply", wire.aligned_bytes([8 * n for n in numel]) + wire.ALIGN,
                          payload_is="bytes the reference's outputs allow (their elements at 8 bytes each)")

    def one_call(self, inputs: list, case: dict, deck: bool, in_place: bool | None = None,
                 where: dict | None = None) -> float:
        """Put, run, fetch and verify one call (untimed, traced where the deck forbids a
        torch op); returns the answer's own ms."""
        torch = self.torch
        scaled = _scale_inputs(inputs, case.get("input_scales", {}))
        state_scales = case.get("state_scales", {})
        backups = _scale_state(self.ref_model, state_scales, torch)
        if state_scales:
            self._host("scale_state", dict(state_scales))
        try:
            expected = self.expect(scaled)
            # the deck's seeds get new tensors each call, as the deck's check.py makes them; benchtui's
            # own calls overwrite the same storage in place
            in_place = (not deck) if in_place is None else in_place
            record = self.put(scaled, in_place)
            got = self._host("cycle", 0, self.tracing, limit=self.output_limit(_as_list(expected)))
        finally:
            if state_scales:
                self._host("restore_state")
            for tensor, original in backups:
                with torch.no_grad():
                    tensor.copy_(original)
        return self.judge(scaled, expected, got, record, case, deck, where=where)

    def expect(self, inputs: list):
        torch = self.torch
        with torch.no_grad():
            return self.ref_model(*[x.to(self.device) if isinstance(x, torch.Tensor) else x for x in inputs])

    @property
    def tracing(self) -> bool:
        """Whether untimed calls run under the dispatcher trace: where the deck forbids a torch op."""
        return bool(self.trace_targets)

    def judge(self, inputs: list, expected, got, record: dict, case: dict, deck: bool, where: dict | None = None,
              traced: bool | None = None) -> float:
        """Verify one cycle's reply (and read its trace, before its values); returns
        the answer's own ms (its word, a figure only)."""
        staged, own, out, reported = _cycle_reply(got)
        if self.tracing if traced is None else traced:
            self.note_trace(got, where or {})
        seen = self.changed_pages(record) if self.answer_device == "cpu" else []
        last = record.get("staged") if record["reused"] else None
        record["staged"] = staged
        same_reported = last is not None and last == staged
        self.verify(inputs, expected, out, case, deck, reused=record["reused"], same_reported=same_reported)
        if seen:
            raise CallFailed("inputs_unchanged", f"the answer changed input(s) {seen} in place (read by the checker "
                                                 "from the pages it wrote them into)")
        if reported:
            raise CallFailed("inputs_unchanged", f"the answer changed input(s) {reported} in place (as the answer's "
                                                 "process reports it" + (", on the GPU where the checker holds no copy"
                                                                         if self.answer_device == "cuda" else "") + ")")
        return own

    def verify(self, inputs: list, expected, out: dict, case: dict, deck: bool, reused: bool = False,
               same_reported: bool = False) -> None:
        """Judge one call's output on what this side decoded: count, shapes and
        dtypes read from the reply's plain fields and checked against the
        reference's before any tensor is decoded, values compared after."""
        from benchtui.verify.module import tensors as T

        spec = self.spec
        want = _as_list(expected)
        facts, values = out["facts"], out["values"]
        if len(values) != len(want):
            self._deck_fail_if(deck, "output count")
            raise CallFailed("output_shape", f"{len(values)} outputs, the reference returns {len(want)}")
        announced = []
        for w, v, f in zip(want, values, facts):
            if v is None:
                self._deck_fail_if(deck, "not a tensor")
                raise CallFailed("output_type", f"the output is a {_said_type(f)}, not a tensor")
            try:
                name, shape = T.announced(v)
            except (ValueError, TypeError) as exc:
                raise BadReply(f"an output is not a tensor the wire carries: {exc}") from None
            if tuple(shape) != tuple(w.shape):
                self._deck_fail_if(deck, f"shape {tuple(shape)}")
                raise CallFailed("output_shape", f"output shape {tuple(shape)}, the reference's is {tuple(w.shape)}")
            announced.append(name)
        got = [T.decode(v) for v in values]
        # the deck's rule on these values first (its figure), then benchtui's
        for i, (w, g) in enumerate(zip(want, got)):
            if spec.deck == R.KB and g.dtype != w.dtype:
                ok_deck, msg_deck = False, f"dtype {T.dtype_name(g.dtype)} (allclose refuses mixed dtypes)"
            else:
                ok_deck, msg_deck = self.compare_output(i, inputs, want, g, case, deck_rule=True)
            if not ok_deck:
                self._deck_fail_if(deck, msg_deck)
        for i, (w, g, f) in enumerate(zip(want, got, facts)):
            # the dtype is the one this side decoded the bytes as, never the answer's word
            if g.dtype != w.dtype:
                raise CallFailed("output_dtype", f"output dtype {T.dtype_name(g.dtype)}, the reference's is "
                                                 f"{T.dtype_name(w.dtype)}")
            # what only the answer's process can tell (its tensor's exact type, its device) can fail a
            # call by its own admission, never pass one: the values judged are the bytes decoded here
            if type(f) is dict and f.get("exact_tensor") is False:
                raise CallFailed("output_type", f"the output is a {_said_type(f)}, not exactly torch.Tensor "
                                                "(a subclass could change how it compares; as the answer's process "
                                                "reports it)")
            if type(f) is dict and f.get("device") not in (None, self.answer_device):
                raise CallFailed("output_device", f"output on {str(f.get('device'))[:40]}, expected "
                                                  f"{self.answer_device} (as the answer's process reports it)")
            ok, msg = self.compare_output(i, inputs, want, g, case, deck_rule=False)
            if not ok:
                if _fingerprint(g) in self.right_outputs:
                    # what was seen, not why: the bytes equal a right output of an earlier call
                    if reused:
                        how = (" (the checker wrote these inputs into the pages the previous call read; the answer's "
                               "process reports " + ("the same pointers and versions)" if same_reported
                                                     else "other pointers or versions)"))
                    else:
                        how = " (on new input pages)"
                    raise CallFailed("fresh_result", "the output equals an earlier call's right output, for other "
                                                     "inputs" + how + "; " + msg)
                raise CallFailed("output_values", msg)
        self.right_outputs.update(_fingerprint(g) for g in got)

    def compare_output(self, i: int, inputs: list, want: list, g, case: dict, deck_rule: bool) -> tuple[bool, str]:
        """Output ``i`` against the reference's, as the deck compares it: by value at the
        tolerance of its dtype, or, for the index output the deck's check.py gathers, by the
        input's values at the returned indices (any tie-break passes). benchtui's own
        verdict (``deck_rule`` False) also refuses an index named twice in a row."""
        from benchtui.verify.module import tensors as T

        spec, rule = self.spec, self.spec.indices
        w = want[i]
        if rule and i == rule["output"] and rule["values"] < len(want) and rule["input"] < len(inputs):
            ref_values = want[rule["values"]].detach().cpu()
            x = inputs[rule["input"]]
            x = x.detach().cpu() if isinstance(x, self.torch.Tensor) else x
            atol, rtol = spec.tol(rule.get("dtype") or T.dtype_name(ref_values.dtype), case)
            ok, msg = R.gathered_indices(x, ref_values, g, rule["dim"], atol, rtol, spec.deck, distinct=not deck_rule)
            return ok, msg if ok or len(want) == 1 else f"output {i} (indices): {msg}"
        atol, rtol = spec.tol(T.dtype_name(w.dtype), case)
        ok, msg = R.compare(w.detach().cpu(), g, atol, rtol, spec.deck)
        return ok, msg if ok or len(want) == 1 else f"output {i}: {msg}"

    def failing(self):
        """The first check so far that did not pass (an info or a skip is neither), or None."""
        return next((c for c in self.suite.checks if c.verdict not in (None, V.PASS, V.INFO, V.SKIPPED)), None)

    def _deck_fail_if(self, deck: bool, message: str) -> None:
        if deck:
            self._deck_fail(message)

    def _deck_fail(self, message: str) -> None:
        if self.deck_ok:
            self.deck_ok, self.deck_failure = False, message

    def _secret(self, *label) -> int:
        """A 128-bit secret for one purpose, from the run's seed (engine/verify/seeds.py)."""
        from benchtui.verify import seeds

        return seeds.derive(int(self.suite.seed), "module:" + ":".join(str(x) for x in label))

    # -- the dispatcher trace ----------------------------------------------------------
    def note_trace(self, got: dict, where: dict) -> None:
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

    def sentinel(self, ref, index: int, w, calls: int, c, label: str) -> None:
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
        got = self._host("cycle", slot, True, limit=self.output_limit(_as_list(expected)))
        try:
            self.judge(inputs, expected, got, record, {"name": "nominal"}, deck=False, where=where, traced=True)
        except CallFailed as exc:
            c.details["where"] = where
            c.fail(f"{exc.requirement}: {label}, an untimed call before timed window {w} (seed {seed}): {exc}")

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
            suite.record("forbidden_calls", V.FORBIDDEN, value=len(found), threshold=0,
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

    # -- timing -----------------------------------------------------------------------
    def window(self, ref, index: int, tag, calls: int, c, label: str) -> tuple[float, list[float]]:
        """One timed window: ``calls`` calls on fresh secret inputs, each in its
        own slot (written in place into the pages that slot's last call read),
        under this side's clock from the first request to the last reply, each
        reply read by value before the clock stops; every output verified after.
        Returns the window's seconds and the answer's own ms per call."""
        planned = []
        for j in range(calls):
            seed = self._secret("timed", index, tag, j)
            inputs = self.inputs(ref, seed)
            expected = self.expect(inputs)
            planned.append((seed, inputs, expected, self.put(inputs, in_place=True, slot=j),
                            self.output_limit(_as_list(expected))))
        methods = self.__dict__.setdefault("_methods", {})
        cycle = methods.setdefault("cycle", None) or self.host.cycle  # resolved before the clock starts
        methods["cycle"] = cycle
        replies = []
        start = time.perf_counter()
        for j in range(calls):
            replies.append(wire.call_plain(cycle, j, False, limit=planned[j][4]))
        wall = time.perf_counter() - start
        own = []
        for j, ((seed, inputs, expected, record, _), got) in enumerate(zip(planned, replies)):
            try:
                own.append(self.judge(inputs, expected, got, record, {"name": "nominal"}, deck=False, traced=False))
            except CallFailed as exc:
                c.details["where"] = {"shape": label, "seed": seed, "case": "nominal", "window": tag, "call": j}
                c.fail(f"{exc.requirement}: {label}, timed window {tag} call {j} (seed {seed}): {exc}")
        return wall, own

    def timing(self, ref, index: int, label: str, shape: dict) -> None:
        suite, spec = self.suite, self.spec
        from benchtui.verify.module import timing as module_timing
        from benchtui.verify.timing import core as TT

        # each timed call's output crosses the wire to be verified: windows, each of up to 32 calls
        windows = int(suite.threshold("timed_calls", min(spec.num_perf_trials, 20)))
        cap = int(suite.threshold("window_calls_max", TT.MAX_WINDOW_CALLS))
        walls, own = [], []
        with suite.check(f"timed_outputs:shape{index}", requires=spec.requires(CORRECT)) as c:
            try:
                sample = self.inputs(ref, self._secret("empty", index))
                stand_in = module_timing.EmptyWindow(str(self.device), _enc(sample), self.expect(sample))
                try:
                    single = stand_in.measure(1)
                    # three windows of one call (verified, not timed) size the windows: each stands
                    # well above the empty cycle's jitter
                    probe = min(self.window(ref, index, f"probe{i}", 1, c, label)[0] for i in range(3))
                    calls = TT.window_calls(probe - single["s"], single["iqr_s"], cap=cap)
                    empty = stand_in.measure(calls)
                finally:
                    stand_in.close()
                for w in range(windows):
                    self.sentinel(ref, index, w, calls, c, label)
                    wall, o = self.window(ref, index, w, calls, c, label)
                    walls.append(wall)
                    own.extend(o)
            except (BadReply, wire.NotPlain, wire.TooLarge) as exc:
                c.details["requirement"] = "reply"
                c.verdict, c.message = V.ERROR, f"reply: {label}, a timed call: {exc}"
                return
            c.value = windows * calls
            c.message = (f"{label}: the outputs of all {windows * calls} timed calls are right ({windows} windows of "
                         f"{calls}; fresh inputs each, written in place)")
        if c.verdict != V.PASS or not walls:
            return
        fig = TT.figure(TT.per_call(walls, empty), empty, module_timing.TIMED_BY)
        # the deck's own procedure, on one set of inputs kept between calls (the answer's word)
        warmup = int(suite.threshold("published_warmup", 10 if spec.deck == R.HARD else 3))
        iters = int(suite.threshold("published_calls", spec.num_perf_trials))
        self.put(self.inputs(ref, spec.seeds[0] if spec.seeds else 42, deck=True), in_place=False)
        samples = self._host("published_times", warmup, iters)
        if type(samples) is not list or not samples or not all(type(x) in (int, float) for x in samples):
            raise BadReply(f"published_times replied {type(samples).__name__}, not a list of numbers")
        published = statistics.median(samples) if spec.deck == R.HARD else statistics.fmean(samples)
        ms = fig["median_s"] * 1e3 if fig["resolved"] else None
        names = {**shape}
        flops = _formula(spec.flops_formula, names)
        nbytes = _formula(spec.bytes_formula, names)
        peak_gbps, peak_tflops = spec.peak.get("bandwidth_gbps"), spec.peak.get("tflops")
        frac = R.peak_fraction(spec.regime, flops, nbytes, ms, peak_gbps, peak_tflops) if ms else None
        frac_pub = R.peak_fraction(spec.regime, flops, nbytes, published, peak_gbps, peak_tflops)
        dev = R.device_peak(self.device_name, spec.precision) if self.answer_device == "cuda" else None
        frac_dev = R.peak_fraction(spec.regime, flops, nbytes, ms, dev[1], dev[2]) if dev and ms else None
        shape_name = f"shape{index}"
        self.fractions["deck_peak"][shape_name] = frac
        self.fractions["deck_peak_published"][shape_name] = frac_pub
        self.fractions["device_peak"][shape_name] = frac_dev
        # on a CPU the round trip's jitter is of the order of small calls: flag only a gap of milliseconds
        min_gap = float(suite.threshold("gap_min_ms", 0.05 if self.answer_device == "cuda" else 2.0))
        gap = ms is not None and published > 0 and ms / published > GAP_FLAG and ms - published > min_gap
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
                   "flagged": bool(gap), "clock": module_timing.TIMED_BY, "empty_cycle": empty}
        message = (f"{label}: {TT.describe(fig)} (trusted) vs {published:.4g} ms as published (the answer's word)"
                   + (f"; peak_fraction {frac:.3g} of the deck's {spec.peak.get('hardware', 'peak')}" if frac is not None else "")
                   + (f", {frac_dev:.3g} of this {dev[0]}" if frac_dev is not None else ""))
        if gap:
            message += (f"; FLAGGED: the as-published time is {ms / published:.1f}x below the trusted one "
                        "(results memoised on unchanged inputs, CUDA-graph replay keyed on pointers, or data kept in L2)")
        self.time_figures.append((f"time:shape{index}", {"value": round(ms, 6) if ms is not None else None,
                                                        "message": message, "details": details}))

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


# -- helpers ------------------------------------------------------------------------------

def published_procedure(device: str, warmup: int, iters: int, stat: str) -> str:
    """What the deck's timing loop (module_host.published_times) did on this run's device:
    on a GPU, an L2 flush and CUDA events per call; on the CPU there is no L2 to flush and
    no event, so each call is timed by the process's perf counter."""
    per_call = ("L2 flushed before each, timed by CUDA events" if device == "cuda"
                else "no L2 flush (a CPU run), each timed by time.perf_counter")
    return f"{warmup} warm-ups, {iters} calls on the same inputs, {per_call} ({stat}); run in the answer's process"


def _as_list(expected) -> list:
    return list(expected) if isinstance(expected, (tuple, list)) else [expected]


def _said_type(fact) -> str:
    """The output's type as the answer's process names it (its word)."""
    return str(fact.get("type", "?"))[:120] if type(fact) is dict else "?"


def _cycle_reply(got) -> tuple[dict, float, dict, list]:
    """(staged, own ms, output, reported changes) of a cycle's reply, checked
    to be the plain shape the host sends; anything else is a BadReply naming it."""
    if type(got) is not dict or not {"staged", "ms", "out", "changed"} <= set(got):
        raise BadReply(f"the cycle replied a {type(got).__name__}"
                       + (f" with keys {sorted(map(str, got))[:6]}" if type(got) is dict else "")
                       + ", not the host's plain dict")
    staged, ms, out, changed = got["staged"], got["ms"], got["out"], got["changed"]
    if type(ms) not in (int, float):
        raise BadReply(f"the cycle's own time is a {type(ms).__name__}, not a number")
    if type(out) is not dict or type(out.get("facts")) is not list or type(out.get("values")) is not list \
            or len(out["facts"]) != len(out["values"]):
        raise BadReply("the cycle's output is not the host's plain facts and values")
    if type(changed) is not list or not all(type(i) is int for i in changed):
        raise BadReply("the cycle's input report is not a list of indices")
    if type(staged) is not dict:
        raise BadReply(f"the cycle's staging report is a {type(staged).__name__}, not a dict")
    return staged, float(ms), out, changed


def _enc(x: Any):
    from benchtui.verify.module import tensors as T

    return T.encode_tree(x)


def _fingerprint(t) -> str:
    """A tensor's dtype, shape and up to 4,096 evenly spaced elements, hashed."""
    import hashlib

    import torch

    flat = t.reshape(-1)
    step = max(1, flat.numel() // 4096)
    sample = flat[::step].contiguous()
    data = sample.view(torch.uint8).numpy().tobytes() if sample.numel() else b""
    return hashlib.sha256(f"{t.dtype}{tuple(t.shape)}".encode() + data).hexdigest()


def _index_rule(table) -> dict:
    """``[module.indices]`` as the harness uses it ({} where the challenge has none)."""
    if table is None:
        return {}
    try:
        rule = {k: int(table[k]) for k in ("output", "values", "input", "dim")}
    except (KeyError, TypeError, ValueError):
        raise ValueError("[module.indices] needs integers output, values, input and dim") from None
    return {**rule, "dtype": str(table["dtype"]) if table.get("dtype") else None}


def _formula(expr: str | None, names: dict) -> float | None:
    if not expr:
        return None
    try:
        return R.eval_formula(expr, names)
    except (ValueError, ZeroDivisionError, SyntaxError):
        return None


def _precision_dtype(spec: Spec):
    import torch

    return {"fp16": torch.float16, "bf16": torch.bfloat16, "float16": torch.float16,
            "bfloat16": torch.bfloat16}.get(spec.precision.lower(), torch.float32)


def _cast(x, dtype):
    import torch

    if dtype is not None and isinstance(x, torch.Tensor) and x.is_floating_point():
        return x.to(dtype)
    return x


def _scale_inputs(inputs: list, scales: dict) -> list:
    out = list(inputs)
    for idx, scale in (scales or {}).items():
        i = int(idx)
        out[i] = (out[i].float() * float(scale)).to(out[i].dtype)
    return out


def _scale_state(model, scales: dict, torch) -> list:
    backups = []
    if not scales:
        return backups
    state = dict(model.named_parameters())
    state.update(dict(model.named_buffers()))
    for name, scale in scales.items():
        tensor = state[name]
        backups.append((tensor, tensor.detach().clone()))
        with torch.no_grad():
            tensor.copy_((tensor.float() * float(scale)).to(tensor.dtype))
    return backups
