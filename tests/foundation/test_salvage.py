"""`benchtui salvage`: from a store SQLite calls damaged, the hand grades and
notes it can still read are written out, and what it could not read is named.
The store here is really damaged: pages of the grades and notes tables are
overwritten with bytes that are no b-tree page."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from benchtui.cli import main
from benchtui.grading.grades import add_note, set_grade
from benchtui.workbench.scan import scan_workbench
from benchtui.store.database import Store, StoreDamaged
from benchtui.workbench.layout import find_workbench

MODELS = ("demo-careful", "demo-hasty", "demo-quitter")
CHALLENGES = ("backwards", "kv", "fuse", "beam_search")
LETTERS = ("A", "B+", "C-", "D", "F")


def _store_with_grades(root: Path) -> Path:
    wb = find_workbench(str(root), None, Path.cwd())
    with Store(wb.store_path) as store:
        scan_workbench(wb, store, index_transcripts=False)
        n = 0
        for round_ in range(25):  # each grade supersedes the last: many rows, many pages
            for m in MODELS:
                for c in CHALLENGES:
                    n += 1
                    set_grade(store, m, c, LETTERS[n % 5], grader=f"grader{n % 3}",
                              note=f"round {round_}: " + "the reasoning behind it, at length. " * 6)
                    add_note(store, m, c, f"note {n}: " + "what I saw in the transcript. " * 8, author="me")
    return wb.store_path


def _pages(path: Path, table: str) -> list[int]:
    with sqlite3.connect(path) as db:
        try:
            return [p for (p,) in db.execute("select pageno from dbstat where name = ? and pagetype = 'leaf' order by pageno",
                                             (table,))]
        except sqlite3.OperationalError as exc:
            pytest.skip(f"this SQLite has no dbstat to find a table's pages: {exc}")


def _overwrite(path: Path, page: int) -> None:
    with sqlite3.connect(path) as db:
        size = db.execute("pragma page_size").fetchone()[0]
    with open(path, "r+b") as f:
        f.seek((page - 1) * size)
        f.write(b"\xde\xad\xbe\xef" * (size // 4))


def _rows(path: Path, table: str) -> dict[int, dict]:
    with sqlite3.connect(path) as db:
        db.row_factory = sqlite3.Row
        return {r["id"]: dict(r) for r in db.execute(f"select * from {table}")}


def test_salvage_writes_out_what_sqlite_can_read_and_names_what_it_cannot(demo_workbench, tmp_path, capsys):
    path = _store_with_grades(demo_workbench)
    before = {t: _rows(path, t) for t in ("grades", "notes", "graders")}
    grade_pages, note_pages = _pages(path, "grades"), _pages(path, "notes")
    assert len(grade_pages) >= 5 and len(note_pages) >= 5
    _overwrite(path, grade_pages[len(grade_pages) // 2])
    _overwrite(path, note_pages[1])
    with pytest.raises(StoreDamaged):
        Store(path, check=True)

    out = tmp_path / "salvaged.json"
    assert main(["--workbench", str(demo_workbench), "salvage", str(out)]) == 0
    said = capsys.readouterr().out
    got = json.loads(out.read_text())
    for table in ("grades", "notes"):
        rows = {r["id"]: r for r in got["tables"][table]}
        assert rows and set(rows) < set(before[table]), table  # some rows, not all
        lost = set(before[table]) - set(rows)
        assert len(lost) < len(before[table]) // 4, (table, len(lost))
        assert all(rows[i] == before[table][i] for i in rows), table  # exactly as stored
        gaps = [u for u in got["unreadable"] if u["table"] == table]
        assert gaps and all(any(g["after_id"] < i < g["next_id"] for g in gaps) for i in lost), (table, gaps)
        assert f"{table}: {len(rows)} rows read" in said
    assert {r["id"] for r in got["tables"]["graders"]} == set(before["graders"])
    # the current hand grades, named as a person reads them
    current = got["hand_grades"]
    assert current and all(g["grader_kind"] == "human" and g["grader"].startswith("grader") for g in current)
    assert "could not be read" in said and str(out) in said


def test_salvage_of_a_sound_store_reads_everything(demo_workbench, tmp_path, capsys):
    path = _store_with_grades(demo_workbench)
    out = tmp_path / "all.json"
    assert main(["--workbench", str(demo_workbench), "salvage", str(out)]) == 0
    got = json.loads(out.read_text())
    assert len(got["tables"]["grades"]) == len(_rows(path, "grades")) and got["unreadable"] == []
    assert main(["--workbench", str(demo_workbench), "salvage", str(out)]) == 2  # never over a file (bad usage)
    assert "already exists" in capsys.readouterr().err


def test_a_store_whose_schema_is_gone_says_nothing_could_be_salvaged(demo_workbench, tmp_path, capsys):
    path = _store_with_grades(demo_workbench)
    _overwrite(path, 1)  # the header and the schema: no table can be found
    out = tmp_path / "none.json"
    assert main(["--workbench", str(demo_workbench), "salvage", str(out)]) == 1
    err = capsys.readouterr().err
    assert "nothing could be salvaged" in err and "\n" not in err.strip()
    assert not out.exists()


@pytest.mark.parametrize("damaged", [31, 100])
def test_a_store_whose_file_header_is_overwritten_gives_up_no_grade(demo_workbench, tmp_path, capsys, damaged):
    """Only the file header (the first bytes: the format and the page size) is damaged: every
    page holding grades is intact, so every grade is read from a copy with the header rewritten."""
    wb = find_workbench(str(demo_workbench), None, Path.cwd())
    with Store(wb.store_path) as store:
        scan_workbench(wb, store, index_transcripts=False)
        for m, letter in zip(MODELS, LETTERS):
            set_grade(store, m, "kv", letter, grader="me", note="why")
    before = _rows(wb.store_path, "grades")
    with open(wb.store_path, "r+b") as f:
        f.write(b"\xff" * damaged)
    with pytest.raises(StoreDamaged):
        Store(wb.store_path, check=True)
    out = tmp_path / "salvaged.json"
    assert main(["--workbench", str(demo_workbench), "salvage", str(out)]) == 0
    got = json.loads(out.read_text())
    assert {r["id"]: r for r in got["tables"]["grades"]} == before and got["unreadable"] == []
    assert "file header rewritten" in got["method"]
    assert sorted(g["letter"] for g in got["hand_grades"]) == sorted(LETTERS[:3])
    assert capsys.readouterr().out.count("\n") > 1
