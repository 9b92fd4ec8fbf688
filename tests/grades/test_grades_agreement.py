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


def test_an_unbound_answer_judged_nothing_so_no_grade_contradicts_it(store):
    """Nothing of an unbound answer could be called: an A from a judge is no conflict with
    the suite, where it is with a fail."""
    with store.db.conn:
        store.db["runs"].insert({"model": "demo-quitter", "challenge": "kv", "status": "done", "verdict": "unbound",
                                 "finished_at": "2024-01-03T00:00:00Z"})
    for model, challenge in (("demo-quitter", "kv"), ("demo-quitter", "backwards")):
        for judge in ("DeepSeek V4 Pro", "Kimi K2.6"):
            set_grade(store, model, challenge, "A", grader=judge, grader_kind="judge")
    listed = {(d.model, d.challenge): d.suite_conflict for d in agreement(store, "DeepSeek V4 Pro", "Kimi K2.6").disagreements}
    assert listed == {("demo-quitter", "backwards"): True}  # the fail is; the unbound answer is not
