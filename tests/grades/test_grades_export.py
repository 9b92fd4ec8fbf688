"""Exports (Markdown, CSV, JSON), the export -> import round trip, backups."""
import csv
import io
import json
import sqlite3
from pathlib import Path

import pytest
from benchtui.grading.exports import csv_text, export, json_data, markdown
from benchtui.grading.grades import current_grades, invalidate_grade, set_grade
from benchtui.grading.judge_import import import_markdown, import_text
from benchtui.store.backup import BackupError, backup
from benchtui.store.database import Store
from grades_fixtures import fill

JUDGES = Path(__file__).resolve().parents[2] / "models" / "JUDGES.md"


def test_markdown_has_matrix_with_best_in_bold_rankings_and_head_to_head(store):
    import_markdown(store, JUDGES)
    text = markdown(store, grader="DeepSeek V4 Pro")
    assert "| Layer Norm Backward | **A** | B+ | C |" in text
    assert "| KV-Cache | **B+** | **B+** | C- |" in text  # a tie: both bold
    assert "| Beam Search | B | **A-** | \u2014 |" in text
    assert "| Careful-1 | 1 | 3.45 | A-/B+ | 6 |" in text
    assert "| Careful-1 | Hasty-2 | leads 4-1-1 | 6 |" in text


def test_markdown_sets_the_suite_verdicts_beside_the_grades_and_lists_graded_answers_it_fails(store):
    import_markdown(store, JUDGES)
    store.db["runs"].update(max(r["id"] for r in store.query(
        "select id from runs where model = 'demo-hasty' and challenge = 'beam_search' and status = 'done'")),
        {"message": "greedy_k1: got [[]], greedy gives [798, 48]"})
    text = markdown(store, grader="DeepSeek V4 Pro")
    verdicts = text.split("## Suite verdicts", 1)[1].split("## Graded answers the suite fails", 1)[0]
    assert "| Beam Search | pass | fail | \u2014 |" in verdicts
    assert "| KV-Cache | pass | error | \u2014 |" in verdicts
    assert "Flash Attn Backward" not in verdicts  # no run for it: no row
    failed = text.split("## Graded answers the suite fails", 1)[1].split("## Rankings", 1)[0]
    graded = {(g.model, g.challenge): g.display for g in current_grades(store, grader="DeepSeek V4 Pro")}
    assert f"| Hasty-2 | Beam Search | {graded[('demo-hasty', 'beam_search')]} | fail | greedy_k1: got [[]], greedy" in failed
    for (model, cid), verdict in {("demo-hasty", "kv"): "error", ("demo-quitter", "backwards"): "fail"}.items():
        if (model, cid) in graded:
            assert f" | {graded[(model, cid)]} | {verdict} |" in failed
    assert "| Careful-1 |" not in failed  # it passes everything it was graded on


def test_markdown_round_trips_through_import(store, tmp_path):
    import_markdown(store, JUDGES)
    set_grade(store, "demo-quitter", "fuse", "F", grader="Kimi K2.6", grader_kind="judge")
    for judge in ("DeepSeek V4 Pro", "Kimi K2.6"):
        text = markdown(store, grader=judge)
        fresh = fill(Store(tmp_path / f"{judge}.db"))
        result = import_text(fresh, text)
        assert result.unmapped == [] and result.problems == []
        want = {(g.model, g.challenge, g.letter, g.score) for g in current_grades(store, grader=judge)}
        got = {(g.model, g.challenge, g.letter, g.score) for g in current_grades(fresh, grader=judge)}
        assert got == want and len(want) == 15
        assert import_text(fresh, text).imported == 0
        fresh.close()


def test_csv_and_json_hold_every_grade_and_verdict(store):
    old = set_grade(store, "demo-hasty", "beam_search", "A-", grader="J", grader_kind="judge")
    new = set_grade(store, "demo-hasty", "beam_search", "C", grader="J", grader_kind="judge")
    invalidate_grade(store, old.id, "graded the wrong file")
    rows = list(csv.DictReader(io.StringIO(csv_text(store))))
    grades = [r for r in rows if r["kind"] == "grade"]
    assert [(r["id"], r["letter"], r["current"], r["verdict"]) for r in grades] == [
        (str(old.id), "A-", "False", "fail"), (str(new.id), "C", "True", "fail")]
    assert grades[0]["invalid_reason"] == "graded the wrong file"
    verdicts = {(r["model"], r["challenge"]): r["verdict"] for r in rows if r["kind"] == "verdict"}
    assert verdicts[("demo-hasty", "kv")] == "error" and len(verdicts) == 9
    data = json.loads(export(store, "json"))
    assert [g["letter"] for g in data["grades"]] == ["A-", "C"]
    assert data["graders"] == [{"name": "J", "kind": "judge"}]
    assert len(data["verdicts"]) == 9 and data["rubric_version"] == json_data(store)["rubric_version"]
    with pytest.raises(ValueError):
        export(store, "pdf")


def test_backup_is_a_consistent_checked_copy(store, tmp_path):
    set_grade(store, "demo-careful", "kv", "B", grader="ana")
    dest = tmp_path / "copy.db"
    result = backup(store.path, dest)
    assert result.integrity == "ok" and result.bytes > 0
    conn = sqlite3.connect(dest)
    assert conn.execute("select letter from grades").fetchall() == [("B",)]
    conn.close()
    with pytest.raises(BackupError, match="already exists"):
        backup(store.path, dest)
    with pytest.raises(BackupError, match="does not exist"):
        backup(store.path, tmp_path / "nope" / "copy.db")
    assert not list(tmp_path.glob("*.partial"))


def test_backup_sees_only_committed_rows(store, tmp_path):
    set_grade(store, "demo-careful", "kv", "B", grader="ana")
    other = Store(store.path)
    other.db.conn.execute("BEGIN IMMEDIATE")
    other.db.conn.execute("insert into grades (model, challenge, dimension, letter) values ('m', 'c', 'overall', 'F')")
    backup(store.path, tmp_path / "copy.db")  # a writer is mid-transaction
    other.db.conn.execute("ROLLBACK")
    other.close()
    conn = sqlite3.connect(tmp_path / "copy.db")
    assert conn.execute("select count(*) from grades").fetchone() == (1,)
    conn.close()
