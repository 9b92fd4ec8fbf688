"""Graders, append-only grades (supersede, invalidate), current grades and notes."""
import pytest
from benchtui.grading.grades import (
    GradeError,
    add_note,
    all_grades,
    cell_grades,
    current_grade,
    current_grades,
    ensure_grader,
    grade_history,
    invalidate_grade,
    list_graders,
    notes_for,
    set_grade,
)


def test_a_new_grade_supersedes_and_keeps_the_old_row(store):
    first = set_grade(store, "demo-hasty", "Beam Search", "B+", grader="ana", note="looks fine")
    second = set_grade(store, "Hasty-2", "beam_search", "C", grader="ana", note="drops finished beams")
    assert second.supersedes == first.id
    assert (second.model, second.challenge, second.rubric_version) == ("demo-hasty", "beam_search", "1")
    assert current_grade(store, "demo-hasty", "beam_search", grader="ana").letter == "C"
    history = grade_history(store, "demo-hasty", "beam_search")
    assert [(g.letter, g.note) for g in history] == [("B+", "looks fine"), ("C", "drops finished beams")]


def test_invalidation_keeps_the_row_and_restores_the_previous_grade(store):
    old = set_grade(store, "demo-careful", "kv", "A", grader="ana")
    new = set_grade(store, "demo-careful", "kv", "D", grader="ana")
    gone = invalidate_grade(store, new.id, "wrong answer folder")
    assert gone.invalid_reason == "wrong answer folder" and gone.invalidated_at
    assert current_grade(store, "demo-careful", "kv", grader="ana").id == old.id
    assert len(all_grades(store)) == 2
    with pytest.raises(GradeError, match="already invalid"):
        invalidate_grade(store, new.id, "again")
    with pytest.raises(GradeError, match="why"):
        invalidate_grade(store, old.id, "  ")


def test_graders_keep_separate_current_grades_and_a_person_outranks_a_judge(store):
    set_grade(store, "demo-careful", "fuse", "B", grader="DeepSeek V4 Pro", grader_kind="judge")
    set_grade(store, "demo-careful", "fuse", "91", grader="Kimi K2.6", grader_kind="judge")
    assert cell_grades(store)[("demo-careful", "fuse")].grader == "Kimi K2.6"  # newest judge
    set_grade(store, "demo-careful", "fuse", "A-", grader="ana")
    set_grade(store, "demo-careful", "fuse", "C", grader="Kimi K2.6", grader_kind="judge")
    assert cell_grades(store)[("demo-careful", "fuse")].grader == "ana"
    assert cell_grades(store, grader="DeepSeek V4 Pro")[("demo-careful", "fuse")].letter == "B"
    assert len(current_grades(store, model="demo-careful", challenge="fuse")) == 3
    kinds = {g.name: g.kind for g in list_graders(store)}
    assert kinds == {"DeepSeek V4 Pro": "judge", "Kimi K2.6": "judge", "ana": "human"}


def test_dimensions_are_separate_cells(store):
    set_grade(store, "demo-careful", "kv", "A", dimension="correctness", grader="ana")
    set_grade(store, "demo-careful", "kv", "B", grader="ana")
    assert current_grade(store, "demo-careful", "kv", "correctness").letter == "A"
    assert current_grade(store, "demo-careful", "kv").letter == "B"
    assert len(current_grades(store, dimension=None)) == 2


def test_default_grader_comes_from_the_environment(store, monkeypatch):
    monkeypatch.setenv("BENCHTUI_GRADER", "zoe")
    assert set_grade(store, "demo-careful", "kv", "B").grader == "zoe"


@pytest.mark.parametrize("model,challenge,grade,dimension,message", [
    ("demo-careful", "kv", "A++", "overall", "not a grade"),
    ("gpt-9", "kv", "A", "overall", "unknown model"),
    ("demo-careful", "quantum_sort", "A", "overall", "unknown challenge"),
    ("demo-careful", "kv", "A", "speed", "unknown dimension"),
])
def test_bad_input_writes_nothing(store, model, challenge, grade, dimension, message):
    with pytest.raises(GradeError, match=message):
        set_grade(store, model, challenge, grade, dimension=dimension, grader="ana")
    assert all_grades(store) == []


def test_grader_names_are_found_case_insensitively_and_kinds_checked(store):
    g = ensure_grader(store, "Kimi K2.6", "judge")
    assert ensure_grader(store, "kimi k2.6").id == g.id
    with pytest.raises(GradeError, match="kind"):
        ensure_grader(store, "bot", "robot")


def _index_answer_files(store):
    """beam.py (60 lines) and session.jsonl (entries 0-9) in demo-hasty/beam_search, as a scan indexes them."""
    answer = store.query("select id from answers where model = 'demo-hasty' and challenge = 'beam_search'")[0]["id"]
    with store.db.conn:
        store.db["files"].insert({"answer_id": answer, "relpath": "beam.py", "kind": "source", "lines": 60})
        transcript = store.db["transcripts"].insert({"answer_id": answer, "relpath": "session.jsonl"}).last_pk
        for position in range(10):
            store.db["transcript_entries"].insert({"transcript_id": transcript, "branch": 0, "position": position})


def test_notes_on_answer_file_line_and_transcript_entry(store):
    _index_answer_files(store)
    add_note(store, "demo-hasty", "Beam Search", "finished beams are dropped", relpath="beam.py",
             line=42, author="ana")
    add_note(store, "demo-hasty", "beam_search", "claims tests pass", transcript="session.jsonl", entry=7,
             author="ana")
    add_note(store, "demo-hasty", "beam_search", "overall: rushed", author="ana")
    notes = notes_for(store, "demo-hasty", "beam_search")
    assert [(n.relpath, n.line, n.transcript, n.entry) for n in notes] == [
        ("beam.py", 42, None, None), (None, None, "session.jsonl", 7), (None, None, None, None)]
    with pytest.raises(GradeError):
        add_note(store, "demo-hasty", "beam_search", "x", line=3)
    with pytest.raises(GradeError):
        add_note(store, "demo-hasty", "beam_search", "   ")


@pytest.mark.parametrize("anchor,message", [
    ({"relpath": "nosuch.py", "line": 5}, "no file 'nosuch.py'"),
    ({"relpath": "beam.py", "line": -4}, "start at 1"),
    ({"relpath": "beam.py", "line": 61}, "has 60 lines"),
    ({"transcript": "nosuch.jsonl", "entry": 3}, "no transcript 'nosuch.jsonl'"),
    ({"transcript": "session.jsonl", "entry": 99999}, "entries 0 to 9"),
    ({"transcript": "session.jsonl", "entry": -1}, "entries 0 to 9"),
])
def test_a_note_anchored_where_nothing_is_is_refused_and_not_stored(store, anchor, message):
    _index_answer_files(store)
    with pytest.raises(GradeError, match=message):
        add_note(store, "demo-hasty", "beam_search", "looked here", author="ana", **anchor)
    assert notes_for(store, "demo-hasty", "beam_search") == []


def test_a_note_takes_the_answer_path_a_search_prints(store):
    _index_answer_files(store)
    n = add_note(store, "demo-hasty", "beam_search", "here", transcript="demo-hasty/beam_search/session.jsonl",
                 entry=9, author="ana")
    assert (n.transcript, n.entry) == ("session.jsonl", 9)
