"""The matrix's grade columns come from a plain query in engine.store.queries (so
start-up need not import engine.grading.grades); it must agree with
engine.grading.grades.current_grades on every cell: superseded, invalidated, other
dimensions, several judges, a person and judges on one cell."""
from benchtui.grading import grades
from benchtui.grading.grades import current_grades, invalidate_grade, set_grade
from benchtui.store import queries
from benchtui.store.queries import load_matrix


def expected(store) -> tuple[dict, dict]:
    human, judge = {}, {}
    for g in sorted(current_grades(store, dimension=grades.OVERALL), key=lambda g: g.id):
        (human if g.grader_kind == "human" else judge)[(g.model, g.challenge)] = g.letter
    return human, judge


def shown(store) -> tuple[dict, dict]:
    m = load_matrix(store)
    cells = m.cells.values()
    return ({(c.model, c.challenge): c.human for c in cells if c.human},
            {(c.model, c.challenge): c.judge for c in cells if c.judge})


def test_matrix_grades_follow_current_grades(store):
    assert queries.OVERALL == grades.OVERALL
    set_grade(store, "demo-careful", "kv", "A", grader="ana")
    wrong = set_grade(store, "demo-careful", "kv", "D", grader="ana")
    invalidate_grade(store, wrong.id, "wrong folder")                      # back to A
    set_grade(store, "demo-careful", "fuse", "B", grader="DeepSeek V4 Pro", grader_kind="judge")
    set_grade(store, "demo-careful", "fuse", "91", grader="Kimi K2.6", grader_kind="judge")  # newest judge: A-
    set_grade(store, "demo-careful", "fuse", "C+", grader="ana")
    set_grade(store, "demo-careful", "fuse", "B-", grader="ana")           # supersedes C+
    set_grade(store, "demo-careful", "fuse", "B", grader="DeepSeek V4 Pro", grader_kind="judge")  # now the newest judge
    set_grade(store, "demo-hasty", "kv", "F", dimension="correctness", grader="ana")  # not the overall column
    set_grade(store, "demo-hasty", "kv", "C", grader="bo")
    set_grade(store, "demo-hasty", "kv", "B+", grader="ana")               # the newest person wins
    assert shown(store) == expected(store)
    human, judge = shown(store)
    assert human == {("demo-careful", "kv"): "A", ("demo-careful", "fuse"): "B-", ("demo-hasty", "kv"): "B+"}
    assert judge == {("demo-careful", "fuse"): "B"}


def test_matrix_grades_after_the_judge_is_invalidated(store):
    old = set_grade(store, "demo-careful", "kv", "B", grader="Judge", grader_kind="judge")
    new = set_grade(store, "demo-careful", "kv", "A", grader="Judge", grader_kind="judge")
    invalidate_grade(store, new.id, "re-run")
    assert shown(store) == expected(store) == ({}, {("demo-careful", "kv"): "B"})
    invalidate_grade(store, old.id, "judge withdrawn")
    assert shown(store) == expected(store) == ({}, {})


def test_a_cells_coverage_is_read_for_its_run(store):
    """The matrix's detail line says what the highlighted verdict covers."""
    import json

    from benchtui.store.queries import load_matrix, run_covers

    cov = [{"id": "a", "status": "pass", "checkable": True}, {"id": "b", "status": "not_exercised", "checkable": True},
           {"id": "c", "status": "not_exercised", "checkable": False}]
    run_id = store.db["runs"].insert({"model": "m", "challenge": "c", "status": "done", "verdict": "partial",
                                      "coverage": json.dumps(cov)}, alter=True).last_pk
    assert run_covers(store, run_id) == "1 of 2 checkable requirements met, 1 not checkable"
    older = next(c for c in load_matrix(store).cells.values() if c.run_id is not None and c.run_id != run_id)
    assert run_covers(store, older.run_id) == ""  # a run recorded before coverage
    assert run_covers(store, None) == ""
