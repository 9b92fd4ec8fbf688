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
from benchtui.store.database import Store, StoreDamaged
from benchtui.workbench.layout import find_workbench
from benchtui.workbench.scan import scan_workbench

MODELS = ("demo-careful", "demo-hasty", "demo-quitter")
CHALLENGES = ("backwards", "kv", "fuse", "beam_search")
LETTERS = ("A", "B+", "C-", "D", "F")
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def graded_store(tmp_path_factory) -> Path:
    """A scanned demo store holding many grades and notes, built once: each test damages its own copy."""
    import shutil

    root = tmp_path_factory.mktemp("graded") / "demo"
    shutil.copytree(REPO / "models", root / "models")
    shutil.copytree(REPO / "challenges", root / "challenges")
    return _build_store_with_grades(root)


def _store_with_grades(root: Path, graded_store: Path) -> Path:
    """The graded store, copied in as ``root``'s own (closed, so the one file holds it all)."""
    import shutil

    path = find_workbench(str(root), None, Path.cwd()).store_path
    shutil.copyfile(graded_store, path)
    return path


def _build_store_with_grades(root: Path) -> Path:
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


def test_salvage_writes_out_what_sqlite_can_read_and_names_what_it_cannot(demo_workbench, graded_store, tmp_path, capsys):
    path = _store_with_grades(demo_workbench, graded_store)
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


def test_salvage_of_a_sound_store_reads_everything(demo_workbench, graded_store, tmp_path, capsys):
    path = _store_with_grades(demo_workbench, graded_store)
    out = tmp_path / "all.json"
    assert main(["--workbench", str(demo_workbench), "salvage", str(out)]) == 0
    got = json.loads(out.read_text())
    assert len(got["tables"]["grades"]) == len(_rows(path, "grades")) and got["unreadable"] == []
    assert main(["--workbench", str(demo_workbench), "salvage", str(out)]) == 2  # never over a file (bad usage)
    assert "already exists" in capsys.readouterr().err


def test_a_store_whose_schema_is_gone_says_nothing_could_be_salvaged(demo_workbench, graded_store, tmp_path, capsys):
    path = _store_with_grades(demo_workbench, graded_store)
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


def _current(path: Path) -> tuple[list, list]:
    """(the current grades, every note) of a store, as a person reads them: names, not ids."""
    from benchtui.grading.grades import current_grades

    with Store(path) as store:
        grades = sorted((g.model, g.challenge, g.dimension, g.grader, g.letter, g.note) for g in current_grades(store))
        notes = sorted(tuple(r.values()) for r in store.query(
            "select model, challenge, relpath, line, author, text, created_at from notes"))
    return grades, notes


@pytest.mark.parametrize("how", [["salvage", "--restore"], ["grades", "import"]])
def test_damage_salvage_rescan_restore_brings_every_grade_and_note_back(demo_workbench, graded_store, tmp_path, capsys, how):
    """The damaged-store message's way out, end to end: salvage, move the store away, rescan,
    restore in one command. Every grade and note salvage read is back, with its id and its
    place in the supersedes chain; a second restore adds nothing."""
    path = _store_with_grades(demo_workbench, graded_store)
    with Store(path) as store:
        store.conn.execute("insert into name_aliases (kind, alias, target, created_at) values "
                           "('model', 'Careful', 'demo-careful', '2026-01-01')")
        store.conn.commit()
    before = {t: _rows(path, t) for t in ("grades", "notes", "graders", "name_aliases")}
    wanted = _current(path)
    with open(path, "r+b") as f:  # the file header: every row stays readable
        f.write(b"\xff" * 100)
    out = tmp_path / "salv.json"
    assert main(["--workbench", str(demo_workbench), "salvage", str(out)]) == 0
    path.rename(tmp_path / "damaged.db")
    for suffix in ("-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    assert main(["--workbench", str(demo_workbench), "scan"]) == 0
    assert _current(path) == ([], [])
    capsys.readouterr()
    assert main(["--workbench", str(demo_workbench), *how, str(out)]) == 0
    said = capsys.readouterr().out
    assert f"grades: {len(before['grades'])} added" in said and f"notes: {len(before['notes'])} added" in said
    assert _current(path) == wanted
    for table, rows in before.items():
        assert _rows(path, table) == rows, table  # ids, supersedes and all
    assert main(["--workbench", str(demo_workbench), *how, str(out)]) == 0
    assert f"grades: 0 added, {len(before['grades'])} already in the store" in capsys.readouterr().out
    assert _rows(path, "grades") == before["grades"]


def test_restoring_a_salvage_with_damage_behind_it_brings_back_what_was_read(demo_workbench, graded_store, tmp_path, capsys):
    path = _store_with_grades(demo_workbench, graded_store)
    _overwrite(path, _pages(path, "grades")[2])
    out = tmp_path / "salv.json"
    assert main(["--workbench", str(demo_workbench), "salvage", str(out)]) == 0
    got = json.loads(out.read_text())
    path.rename(tmp_path / "damaged.db")
    for suffix in ("-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    assert main(["--workbench", str(demo_workbench), "scan"]) == 0
    with Store(path) as store:  # a grade made after the rescan stays, beside the restored ones
        set_grade(store, "demo-hasty", "kv", "A", grader="later", note="after the rescan")
    assert main(["--workbench", str(demo_workbench), "salvage", "--restore", str(out)]) == 0
    rows = _rows(path, "grades")
    # id 1 was taken by the later grade: the salvaged rows that met a taken id have new ones
    what = ("model", "challenge", "dimension", "letter", "note", "created_at")
    assert {tuple(r[k] for k in what) for r in got["tables"]["grades"]} < {tuple(r[k] for k in what) for r in rows.values()}
    assert len(rows) == len(got["tables"]["grades"]) + 1
    assert any(r["note"] == "after the rescan" for r in rows.values())
    from benchtui.grading.grades import current_grades

    with Store(path) as store:
        shown = {(g.model, g.challenge, g.grader): g.letter for g in current_grades(store)}
    assert all(shown[(g["model"], g["challenge"], g["grader"])] == g["letter"] for g in got["hand_grades"])


def test_a_file_that_is_not_a_salvage_is_one_clear_line(demo_workbench, tmp_path, capsys):
    bad = tmp_path / "other.json"
    bad.write_text('{"grades": []}')
    assert main(["--workbench", str(demo_workbench), "salvage", "--restore", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert "is not a salvage file" in err and "\n" not in err
    assert main(["--workbench", str(demo_workbench), "grades", "import", str(bad)]) == 2
    assert "not a Markdown file" in capsys.readouterr().err


def test_a_restored_grade_older_than_one_made_since_on_its_cell_does_not_take_its_place(demo_workbench, tmp_path, capsys):
    """After the rescan the same grader grades a cell again, on the id the salvage's grade had: the
    restored, older grade gets a new and higher id, and by id alone would be current again."""
    wb = find_workbench(str(demo_workbench), None, Path.cwd())
    with Store(wb.store_path) as store:
        scan_workbench(wb, store, index_transcripts=False)
        set_grade(store, "demo-hasty", "kv", "C", grader="ann", note="first look")
    out = tmp_path / "salv.json"
    assert main(["--workbench", str(demo_workbench), "salvage", str(out)]) == 0
    wb.store_path.rename(tmp_path / "old.db")
    for suffix in ("-wal", "-shm"):
        Path(str(wb.store_path) + suffix).unlink(missing_ok=True)
    assert main(["--workbench", str(demo_workbench), "scan"]) == 0
    with Store(wb.store_path) as store:
        set_grade(store, "demo-hasty", "kv", "A", grader="ann", note="second look, after the rescan")
    capsys.readouterr()
    for _ in range(2):  # restoring twice adds nothing the second time
        assert main(["--workbench", str(demo_workbench), "salvage", "--restore", str(out)]) == 0
    said = capsys.readouterr().out
    assert "which stays current" in said
    from benchtui.grading.grades import current_grades

    with Store(wb.store_path) as store:
        shown = {(g.model, g.challenge, g.grader): g.letter for g in current_grades(store)}
        rows = store.query("select letter, invalid_reason from grades where model = 'demo-hasty' and challenge = 'kv'")
    assert shown[("demo-hasty", "kv", "ann")] == "A"
    assert sorted(r["letter"] for r in rows) == ["A", "C"]  # the older one kept, as history
    assert [r["invalid_reason"] is not None for r in rows if r["letter"] == "C"] == [True]
