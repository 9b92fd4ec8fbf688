"""Exact agreement and quadratic-weighted Cohen's kappa, against values
worked out by hand, and the disagreement list."""
import pytest
from benchtui.grading.agreement import agreement, quadratic_kappa
from benchtui.grading.grades import GradeError, set_grade


def test_kappa_hand_computed():
    # Indices on the 12-letter scale: A=0, B=3, C=6. Observed weighted
    # disagreement 0+9+0+9 = 18; expected 234/4 = 58.5; kappa = 1 - 18/58.5 = 9/13.
    pairs = [("A", "A"), ("B", "C"), ("C", "C"), ("A", "B")]
    assert quadratic_kappa(pairs) == pytest.approx(9 / 13)


def test_kappa_extremes():
    assert quadratic_kappa([("A", "A"), ("F", "F"), ("B", "B")]) == pytest.approx(1.0)
    assert quadratic_kappa([("A", "F"), ("F", "A")]) == pytest.approx(-1.0)
    assert quadratic_kappa([("B", "B"), ("B", "B")]) is None  # no spread: undefined
    assert quadratic_kappa([]) is None


def test_kappa_is_symmetric_and_weights_distance():
    near = [("A", "A-"), ("C", "C"), ("F", "F"), ("B", "B")]
    far = [("A", "D"), ("C", "C"), ("F", "F"), ("B", "B")]
    assert quadratic_kappa(near) == pytest.approx(quadratic_kappa([(b, a) for a, b in near]))
    assert quadratic_kappa(near) > quadratic_kappa(far)


def test_agreement_between_two_judges_on_shared_items(store):
    a, b = "DeepSeek V4 Pro", "Kimi K2.6"
    for model, challenge, ga, gb in [("demo-careful", "backwards", "A", "A"),
                                     ("demo-careful", "fuse", "B", "73"),      # 73 -> C
                                     ("demo-quitter", "kv", "C", "C"),
                                     ("demo-careful", "kv", "A", "B")]:
        set_grade(store, model, challenge, ga, grader=a, grader_kind="judge")
        set_grade(store, model, challenge, gb, grader=b, grader_kind="judge")
    set_grade(store, "demo-hasty", "beam_search", "A-", grader=a, grader_kind="judge")  # a only
    result = agreement(store, a, "kimi k2.6")
    assert result.n == 4 and result.exact == 0.5
    assert result.kappa_quadratic == pytest.approx(9 / 13, abs=1e-4)
    first = result.disagreements[0]
    # Led by the A-range grade on an answer the hidden suite fails, though only one judge graded it.
    assert (first.model, first.challenge, first.grade_a, first.grade_b, first.verdict, first.suite_conflict) == (
        "demo-hasty", "beam_search", "A-", None, "fail", True)
    rest = [(d.model, d.challenge, d.grade_a, d.grade_b, d.difference) for d in result.disagreements[1:]]
    assert rest == [("demo-careful", "fuse", "B", "73 (C)", 1.0), ("demo-careful", "kv", "A", "B", 1.0)]


def test_unknown_grader_is_refused(store):
    with pytest.raises(GradeError, match="unknown grader"):
        agreement(store, "nobody", "nobody else")
