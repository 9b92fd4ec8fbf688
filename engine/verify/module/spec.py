"""What a module-harness challenge declares: its ``[module]`` table read once.

A challenge made from a KernelBench or KernelBench-Hard problem (engine/decks/)
names in challenge.toml's ``[module]`` table the deck, the answer's file and
class, how its weights are set, the deck's seeds, tolerances, stress cases,
forbidden ops, formulas and hardware peak; :class:`Spec` holds them, and says
which requirement id a check of each role names.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchtui.verify.module import rules as R

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
    tolerance: dict[str, Any]
    forbidden: list[str]
    num_correct_trials: int
    num_perf_trials: int
    flops_formula: str | None
    bytes_formula: str | None
    regime: str
    precision: str
    peak: dict[str, Any]
    reference: str = "reference.py"
    shapes: str | None = None
    stress: list[dict[str, Any]] = field(default_factory=list)
    property_stress: dict[str, Any] = field(default_factory=dict)  # the deck's generated cases (module/property.py)
    default_tolerance: dict[str, Any] = field(default_factory=dict)  # the deck's per-dtype defaults, {dtype: {atol, rtol}}
    # an index output compared as the deck's check.py compares it (engine/decks/index_rule.py):
    # {output, values, input, dim, dtype}; none: every output compared by value
    indices: dict[str, Any] = field(default_factory=dict)
    deck_title: str = ""
    declared: frozenset[str] = frozenset()  # the ids of the challenge's [requirements]
    # parts of the deck the import did not find ([module.missing]): what they hold -> the part
    missing: dict[str, Any] = field(default_factory=dict)

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

    def tol(self, dtype: str, case: dict[str, Any] | None = None) -> tuple[float, float]:
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
            default_tolerance=dict(m.get("default_tolerance") or {}), indices=index_rule(m.get("indices")),
            missing=dict(m.get("missing") or {}),
            declared=frozenset(str(k) for k in (data.get("requirements") or {})),
        )


def index_rule(table: Any) -> dict[str, Any]:
    """``[module.indices]`` as the harness uses it ({} where the challenge has none)."""
    if table is None:
        return {}
    try:
        rule = {k: int(table[k]) for k in ("output", "values", "input", "dim")}
    except (KeyError, TypeError, ValueError):
        raise ValueError("[module.indices] needs integers output, values, input and dim") from None
    return {**rule, "dtype": str(table["dtype"]) if table.get("dtype") else None}


def precision_dtype(spec: Spec) -> Any:
    """The torch dtype a KernelBench problem's precision names (float32 otherwise)."""
    import torch

    return {"fp16": torch.float16, "bf16": torch.bfloat16, "float16": torch.float16,
            "bfloat16": torch.bfloat16}.get(spec.precision.lower(), torch.float32)
