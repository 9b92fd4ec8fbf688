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
from benchtui.records import verdicts as V
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
        conflict = verdict in V.FAILING and any(g is not None and is_a_range(g.letter) for g in (ga, gb))
        differs = ga is not None and gb is not None and ga.letter != gb.letter
        if differs or conflict:
            diff = round(POINTS[ga.letter] - POINTS[gb.letter], 4) if ga and gb else None
            out.append(Disagreement(*item, ga.display if ga else None, gb.display if gb else None,
                                    diff, verdict, conflict))
    out.sort(key=lambda d: (not d.suite_conflict, -abs(d.difference or 0), d.model, d.challenge, d.dimension))
    return Agreement(a_name, b_name, len(pairs),
                     round(exact, 4) if exact is not None else None,
                     round(kappa, 4) if kappa is not None else None, out)
