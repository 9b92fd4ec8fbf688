"""KernelBench-Hard's property stress, reproduced in the module harness.

For some problems the deck's check.py runs ``src/eval/property_stress.py``:
Hypothesis generates structural cases (long memory, ragged routing, short
sequences), each a mutation of one set of nominal inputs (seed 0xC0DE) at one
shape. Its first case is a fixed one, applied after the answer has been
called eleven times on the nominal inputs, by writing the mutated values into
those inputs' own storage (same objects, pointers and versions): a result
cached on a probe of the inputs, or replayed on their pointers, is stale.

The import copies the deck's ``src/`` package into the challenge
(``[module.property_stress]``); it runs here, in the checker, as the deck's
reference does. The cases come from a fresh secret seed each run (the deck
draws a fresh one too), recorded in the check's details to replay a failure.
Each case's inputs go through the harness's usual verified call.
"""
from __future__ import annotations

import contextlib
import importlib
import sys
from pathlib import Path

from benchtui.records.verdicts import ERROR, PASS
from benchtui.verify.suite import describe_exception, missing_package

NOMINAL_SEED = 0xC0DE  # the deck's seed for the inputs its property cases mutate
WARM_CALLS = 11        # the deck's prime_replay_state: past its timing loop's ten warm-ups


@contextlib.contextmanager
def _deck_package(root: Path):
    """Import from ``root`` (the copied deck's folder holding ``src/``) without
    leaving its ``src`` package in sys.modules or on sys.path."""
    def ours():
        return {k: m for k, m in sys.modules.items() if k == "src" or k.startswith("src.")}

    held = ours()
    for name in held:
        del sys.modules[name]
    sys.path.insert(0, str(root))
    try:
        yield
    finally:
        sys.path.remove(str(root))
        for name in ours():
            del sys.modules[name]
        sys.modules.update(held)


def load(challenge_dir: Path, table: dict):
    """The deck's property_stress module, from the challenge's copy of its src/."""
    root = Path(challenge_dir) / str(table.get("path", "deck_eval"))
    if not root.is_dir():
        raise FileNotFoundError(f"{root.name}/ is missing from the challenge (re-import the deck)")
    with _deck_package(root):
        return importlib.import_module(str(table.get("module", "src.eval.property_stress")))


def check(run, ref, index: int, label: str) -> bool:
    """The property stress at the deck's shape for it; True unless a case failed.
    ``run`` is the harness's ModuleRun."""
    suite, spec = run.suite, run.spec
    table = spec.property_stress
    problem = str(table.get("problem") or spec.problem)
    name = f"property_stress:shape{index}"
    lacking = spec.missing.get("property_stress")
    if lacking:  # the import found the part gone: the deck's, never the answer's
        if index == 0:
            suite.skip("property_stress", f"the deck lacks {lacking}, which its property stress imports; the "
                                          "property stress is not run, the rest of the run is judged",
                       requires=spec.requires("correct"))
        return True
    try:
        mod = load(suite.challenge_dir, table)
        shape = mod.property_shape_index(problem)
    except ModuleNotFoundError as exc:
        package = missing_package(exc)
        if package == "src":  # a part of the deck's own src/ that its copy lacks
            if index == 0:
                part = (getattr(exc, "name", None) or "src").replace(".", "/") + ".py"
                suite.skip("property_stress", f"the deck lacks {part}, which its property stress imports; the "
                                              "property stress is not run, the rest of the run is judged",
                           requires=spec.requires("correct"))
            return True
        if package:
            if index == 0:
                suite.skip(name, f"the deck's property stress needs {package}, which is not installed here "
                                 "(pip install 'benchtui[torch]')", requires=spec.requires("correct"))
            return True
        raise
    except Exception as exc:  # the deck's own code: its failure is not the answer's
        if index == 0:
            suite.record(name, ERROR, message=f"the deck's property_stress.py cannot be used: {describe_exception(exc)}",
                         requires=spec.requires("correct"))
        return True
    if shape != index:
        return True
    seed = run._secret("property", index) % (1 << 64)
    with suite.check(name, requires=spec.requires("correct")) as c:
        _, cases = mod.generate_property_cases(problem, seed=seed)
        tolerance = mod.tolerance_for_property(problem, dict(spec.tolerance) or None)
        c.details.update({"hypothesis_seed": seed, "cases": [repr(case) for case in cases],
                          "nominal_seed": NOMINAL_SEED})
        base = run.inputs(ref, NOMINAL_SEED, deck=True)
        # the fixed case first, into the storage the answer was just called on eleven times
        run.put(base, in_place=False)
        run._host("published_times", WARM_CALLS, 0, False)
        canonical = mod.canonical_property_case(problem)
        same_storage = {"name": f"same storage after {WARM_CALLS} calls: {canonical!r}", "tolerance": tolerance}
        if not run.checked_call(c, mod.apply_property_case(problem, base, canonical), same_storage, True, label,
                                f"{NOMINAL_SEED:#x}", in_place=True):
            return False
        for case in cases:
            generated = {"name": repr(case), "tolerance": tolerance}
            if not run.checked_call(c, mod.apply_property_case(problem, base, case), generated, True, label,
                                    f"{NOMINAL_SEED:#x}", in_place=False):
                return False
        c.value = 1 + len(cases)
        c.message = (f"{label}: the deck's property stress, {c.value} cases right (the fixed one in the warmed "
                     f"inputs' own storage, then {len(cases)} from Hypothesis seed {seed})")
    return c.verdict == PASS
