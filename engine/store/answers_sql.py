"""Reads about answers the commands and the dashboard's screens make beyond
the matrix's (engine/store/queries.py): an answer's folder and rows, the
answers of a challenge, the palette's targets, and the store's change marks.
Plain sqlite3 only: the dashboard reads these before sqlite-utils is imported."""
from __future__ import annotations

from benchtui.store.database import Store


def answer_path(store: Store, model: str, challenge: str) -> str | None:
    """The answer folder, relative to the workbench (None: no such answer)."""
    rows = store.query("select path from answers where model = ? and challenge = ?", (model, challenge))
    return rows[0]["path"] if rows else None


def challenge_row(store: Store, challenge: str) -> dict | None:
    """id, title, language and display_names of one challenge."""
    rows = store.query("select id, title, language, display_names from challenges where id = ?", (challenge,))
    return rows[0] if rows else None


def answers_to(store: Store, challenge: str) -> list[dict]:
    """model, path and id of each present answer (with answer files) to a challenge, by model."""
    return store.query("select model, path, id from answers where challenge = ? and present = 1 "
                       "and status = 'answer' order by model", (challenge,))


def answered_cells(store: Store) -> list[tuple[str, str]]:
    """(model, challenge) of each present answer with answer files, in that order."""
    return [(r["model"], r["challenge"]) for r in store.query(
        "select model, challenge from answers where present = 1 and status = 'answer' order by model, challenge")]


def ungraded_by(store: Store, grader: str, dimension: str) -> list[tuple[str, str]]:
    """(model, challenge) of each present answer ``grader`` has no current ``dimension`` grade on,
    in the matrix's order (challenge position, then model)."""
    return [(r["model"], r["challenge"]) for r in store.query(
        """select a.model, a.challenge from answers a join challenges c on c.id = a.challenge
           where a.present = 1 and a.status = 'answer' and not exists (
             select 1 from grades g join graders r on r.id = g.grader_id
             where g.model = a.model and g.challenge = a.challenge and g.dimension = ?
               and g.invalidated_at is null and r.name = ?)
           order by c.position, a.model""", (dimension, grader))]


def detail_files(store: Store, answer_id: int) -> list[dict]:
    """An answer's files as `benchtui show` lists them (by kind, then path)."""
    return store.query("select relpath, kind, size, lines, sha256, readable, problem, git_status from files "
                       "where answer_id = ? order by kind, relpath", (answer_id,))


def detail_transcripts(store: Store, answer_id: int) -> list[dict]:
    return store.query("select relpath, format, status, problem from transcripts where answer_id = ? "
                       "order by relpath", (answer_id,))


def scan_warnings_of(store: Store, scan_id, model: str, challenge: str, kind: str | None = None) -> list[dict]:
    """A scan's warnings on one answer (of one ``kind``, or all: kind, path and detail)."""
    if kind is None:
        return store.query("select kind, path, detail from scan_warnings where scan_id = ? and model = ? "
                           "and challenge = ?", (scan_id, model, challenge))
    return store.query("select path, detail from scan_warnings where scan_id = ? and kind = ? "
                       "and model = ? and challenge = ?", (scan_id, kind, model, challenge))


def current_grades_of(store: Store, model: str, challenge: str) -> list[dict]:
    """The valid grades of one answer that no later grade supersedes, with their grader (`benchtui show`)."""
    return store.query(
        "select g.dimension, g.letter, g.score, gr.name as grader, gr.kind as grader_kind, g.note, g.created_at "
        "from grades g join graders gr on gr.id = g.grader_id where g.model = ? and g.challenge = ? "
        "and g.invalidated_at is null and g.id not in (select supersedes from grades where supersedes is not null) "
        "order by gr.name, g.dimension", (model, challenge))


# -- the palette's targets
def last_scan_mark(store: Store) -> tuple | None:
    """Changes whenever a scan starts or finishes: the newest scan's id and finish time."""
    return store.conn.execute("select id, finished_at from scans order by id desc limit 1").fetchone()


def present_answer_cells(store: Store) -> list[tuple[str, str]]:
    return store.conn.execute("select model, challenge from answers where present = 1 "
                              "order by model, challenge").fetchall()


def present_answer_files(store: Store) -> list[tuple[str, str, str, str]]:
    """(model, challenge, relpath, kind) of every file of a present answer."""
    return store.conn.execute(
        "select a.model, a.challenge, f.relpath, f.kind from files f join answers a on a.id = f.answer_id "
        "where a.present = 1 order by a.model, a.challenge, f.relpath").fetchall()


# -- what other connections wrote
def data_version(store: Store) -> int:
    """SQLite's data_version: it moves when another connection commits."""
    return store.conn.execute("PRAGMA data_version").fetchone()[0]


def change_mark(store: Store) -> tuple[int, int]:
    """Moves with every write: data_version (other connections) and this connection's total_changes."""
    return data_version(store), store.conn.total_changes
