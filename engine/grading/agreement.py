"""Agreement between two graders: exact agreement and quadratic-weighted
Cohen's kappa over the items both graded, and the disagreements, led by
answers a grader put in the A range that the hidden suite fails.

An item is one (model, challenge, dimension) cell; each grader's current
grade on it is compared on the letter scale (0-100 scores by their letter).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from benchtui.grading.aggregates import current_verdicts
from benchtui.grading.grades import LETTERS, POINTS, Grade, GradeError, current_grades, get_grader, is_a_range
from benchtui.records.verdicts import FAILING
from benchtui.store.database import Store


@dataclass
class Disagreement:
    model: str
    challenge: str
    dimension: str
    grade_a: str | None
    grade_b: str | None
    difference: float | None    # points a - b
    verdict: str | None         # hidden suite's current verdict
    suite_conflict: bool        # an A-range grade on an answer the suite fails

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Agreement:
    grader_a: str
    grader_b: str
    n: int
    exact: float | None             # share of items with the same letter
    kappa_quadratic: float | None   # None when undefined (no items, or no spread)
    disagreements: list[Disagreement]

    def to_dict(self) -> dict:
        return {"grader_a": self.grader_a, "grader_b": self.grader_b, "n": self.n,
                "exact": self.exact, "kappa_quadratic": self.kappa_quadratic,
                "disagreements": [d.to_dict() for d in self.disagreements]}


def quadratic_kappa(pairs: list[tuple[str, str]], categories: tuple[str, ...] = LETTERS) -> float | None:
    """Cohen's kappa with quadratic weights over ordered ``categories``.

    1 - sum(w * observed) / sum(w * expected), w_ij = (i - j)^2; expected is
    the product of the two graders' marginals. Undefined (None) when there
    are no pairs or the expected disagreement is zero.
    """
    if not pairs:
        return None
    index = {c: i for i, c in enumerate(categories)}
    k, n = len(categories), len(pairs)
    observed = [[0.0] * k for _ in range(k)]
    for a, b in pairs:
        observed[index[a]][index[b]] += 1
    rows = [sum(r) for r in observed]
    cols = [sum(observed[i][j] for i in range(k)) for j in range(k)]
    num = sum((i - j) ** 2 * observed[i][j] for i in range(k) for j in range(k))
    den = sum((i - j) ** 2 * rows[i] * cols[j] / n for i in range(k) for j in range(k))
    if den == 0:
        return None
    return 1 - num / den


def _by_item(store: Store, grader: str, dimension: str | None) -> dict[tuple[str, str, str], Grade]:
    return {(g.model, g.challenge, g.dimension): g
            for g in current_grades(store, grader=grader, dimension=dimension)}


def agreement(store: Store, grader_a: str, grader_b: str, *, dimension: str | None = None) -> Agreement:
    """Compare two graders' current grades (all dimensions unless one is given)."""
    found = []
    for name in (grader_a, grader_b):
        grader = get_grader(store, name)
        if grader is None:
            raise GradeError(f"unknown grader {name!r}; see `benchtui grades list`")
        found.append(grader.name)
    a_name, b_name = found
    a, b = _by_item(store, a_name, dimension), _by_item(store, b_name, dimension)
    shared = sorted(set(a) & set(b))
    pairs = [(a[i].letter, b[i].letter) for i in shared]
    exact = sum(1 for x, y in pairs if x == y) / len(pairs) if pairs else None
    kappa = quadratic_kappa(pairs)

    verdicts = current_verdicts(store)
    out = []
    for item in sorted(set(a) | set(b)):
        ga, gb = a.get(item), b.get(item)
        verdict = verdicts.get(item[:2])
        # an unbound answer (nothing could be called) judged nothing: no grade contradicts it
        conflict = verdict in FAILING and any(g is not None and is_a_range(g.letter) for g in (ga, gb))
        differs = ga is not None and gb is not None and ga.letter != gb.letter
        if differs or conflict:
            diff = round(POINTS[ga.letter] - POINTS[gb.letter], 4) if ga and gb else None
            out.append(Disagreement(*item, ga.display if ga else None, gb.display if gb else None,
                                    diff, verdict, conflict))
    out.sort(key=lambda d: (not d.suite_conflict, -abs(d.difference or 0), d.model, d.challenge, d.dimension))
    return Agreement(a_name, b_name, len(pairs),
                     round(exact, 4) if exact is not None else None,
                     round(kappa, 4) if kappa is not None else None, out)


# -- judges against the suite -----------------------------------------------------
@dataclass
class SuiteConflicts:
    """One judge (a grader of kind judge) against the suite, on overall grades of
    answers with a current verdict."""
    grader: str
    judge_model: str | None     # None: an imported judge (from Markdown)
    mode: str | None            # blind | evidence; None: imported
    rubric_sha: str | None
    graded: int                 # overall grades on answers the suite has a verdict on
    a_range: int                # of those, A-range
    failing: int                # of those, on answers the suite fails
    a_on_failing: int           # A-range grades on answers the suite fails

    @property
    def share_of_a(self) -> float | None:
        """Of the judge's A-range grades, the share on answers the suite fails."""
        return round(self.a_on_failing / self.a_range, 4) if self.a_range else None

    @property
    def share_of_failing(self) -> float | None:
        """Of the failing answers the judge graded, the share it put in the A range."""
        return round(self.a_on_failing / self.failing, 4) if self.failing else None

    def to_dict(self) -> dict:
        return {**asdict(self), "share_of_a": self.share_of_a, "share_of_failing": self.share_of_failing}


@dataclass
class EvidenceEffect:
    """One judge model under one rubric, blind and with evidence, on the failing
    answers both modes graded: how many each put in the A range."""
    judge_model: str
    rubric_sha: str
    failing_both: int
    a_blind: int
    a_evidence: int

    def to_dict(self) -> dict:
        return asdict(self)


def suite_conflicts(store: Store) -> tuple[list[SuiteConflicts], list[EvidenceEffect]]:
    """Per judge (and mode): how often an A-range overall grade sits on an answer
    the suite fails; and, per judge model and rubric graded in both modes, the
    same on the failing answers both graded, blind against with evidence."""
    verdicts = current_verdicts(store)
    by_grader: dict[str, list[Grade]] = {}
    for g in current_grades(store, dimension="overall"):
        if g.grader_kind == "judge" and (g.model, g.challenge) in verdicts:
            by_grader.setdefault(g.grader, []).append(g)
    rows = []
    for name, grades in sorted(by_grader.items()):
        first = grades[-1]
        failing = [g for g in grades if verdicts[(g.model, g.challenge)] in FAILING]
        rows.append(SuiteConflicts(name, first.judge_model, first.judge_mode, first.rubric_sha, len(grades),
                                   sum(is_a_range(g.letter) for g in grades), len(failing),
                                   sum(is_a_range(g.letter) for g in failing)))
    effects = []
    pairs: dict[tuple[str, str], dict[str, dict]] = {}
    for grades in by_grader.values():
        for g in grades:
            if g.judge_model and g.rubric_sha and g.judge_mode and verdicts[(g.model, g.challenge)] in FAILING:
                pairs.setdefault((g.judge_model, g.rubric_sha), {}).setdefault(g.judge_mode, {})[(g.model, g.challenge)] = g
    for (model, rubric), modes in sorted(pairs.items()):
        blind, evidence = modes.get("blind", {}), modes.get("evidence", {})
        both = sorted(set(blind) & set(evidence))
        if both:
            effects.append(EvidenceEffect(model, rubric, len(both), sum(is_a_range(blind[c].letter) for c in both),
                                          sum(is_a_range(evidence[c].letter) for c in both)))
    return rows, effects
