"""The store's grades, graders, notes and name aliases: every statement the
grading room issues. Rows come back as dicts, or as tuples in the column
order the caller names (a Grade's fields), which is what reading 20,000
grades at once can afford."""
from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from benchtui.store.database import Store


# -- graders ------------------------------------------------------------------
def grader_row(store: Store, name: str) -> dict | None:
    """The grader of this name; names are case-insensitive for lookups only."""
    rows = store.query("select * from graders where name = ?", (name,))
    if not rows:
        rows = store.query("select * from graders where lower(name) = lower(?)", (name,))
    return rows[0] if rows else None


def add_grader(store: Store, name: str, kind: str, created_at: str) -> None:
    store.execute("insert or ignore into graders (name, kind, created_at) values (?, ?, ?)", (name, kind, created_at))


def grader_rows(store: Store) -> list[dict]:
    return store.query("select * from graders order by name")


# -- names --------------------------------------------------------------------
def model_names(store: Store) -> list[dict]:
    """name and display_name of every model the store has seen."""
    return store.query("select name, display_name from models")


def model_rows(store: Store) -> list[dict]:
    """name, display_name and present of every model, by name."""
    return store.query("select name, display_name, present from models order by name")


def present_models(store: Store) -> set[str]:
    return {r["name"] for r in store.query("select name from models where present = 1")}


def has_model(store: Store, name: str) -> bool:
    return bool(store.query("select 1 from models where name = ?", (name,)))


def any_model(store: Store) -> bool:
    """Whether the store knows any model (it has been scanned)."""
    return bool(store.query("select 1 from models limit 1"))


def set_display_name(store: Store, folder: str, shown: str) -> None:
    store.execute("update models set display_name = ? where name = ?", (shown, folder))


def challenge_name_rows(store: Store) -> list[dict]:
    """id, title and display_names of each challenge, in the order the matrix shows them."""
    return store.query("select id, title, display_names from challenges order by position, id")


def add_alias(store: Store, kind: str, alias: str, target: str, created_at: str) -> None:
    store.execute(
        "insert into name_aliases (kind, alias, target, created_at) values (?, ?, ?, ?) "
        "on conflict(kind, alias) do update set target = excluded.target",
        (kind, alias, target, created_at))


def alias_rows(store: Store) -> list[dict]:
    return store.query("select kind, alias, target, created_at from name_aliases order by kind, alias")


# -- answers --------------------------------------------------------------------
def answer_presence(store: Store, model: str, challenge: str) -> dict | None:
    """id, status and present of one answer's row (None: never scanned)."""
    rows = store.query("select id, status, present from answers where model = ? and challenge = ?",
                       (model, challenge))
    return rows[0] if rows else None


def answer_presences(store: Store) -> list[dict]:
    """model, challenge, status and present of every answer row."""
    return store.query("select model, challenge, status, present from answers")


def file_lines(store: Store, answer_id: int, relpath: str) -> list[dict]:
    """The indexed file's line count ([] when the answer has no such file)."""
    return store.query("select lines from files where answer_id = ? and relpath = ?", (answer_id, relpath))


def transcript_id(store: Store, answer_id: int, relpath: str) -> int | None:
    rows = store.query("select id from transcripts where answer_id = ? and relpath = ?", (answer_id, relpath))
    return rows[0]["id"] if rows else None


# -- grades ---------------------------------------------------------------------
_GRADE_SOURCES = {"grader": "coalesce(r.name, '?')", "grader_kind": "coalesce(r.kind, 'human')"}
_GRADE_FROM = " from grades g left join graders r on r.id = g.grader_id"


def _columns(fields: Sequence[str]) -> str:
    return ", ".join(f"{_GRADE_SOURCES.get(name, 'g.' + name)} as {name}" for name in fields)


def _read(store: Store, sql: str, params: tuple, checkpoint: Callable[[], None] | None) -> Iterator[list[tuple]]:
    """Rows of ``sql`` in batches of 2,000, ``checkpoint()`` after each (it may
    raise to stop: see grading/aggregates.leaderboard); one batch without it."""
    cursor = store.conn.execute(sql, params)
    if checkpoint is None:
        yield cursor.fetchall()
        return
    while rows := cursor.fetchmany(2000):
        yield rows
        checkpoint()


def grade_rows(store: Store, fields: Sequence[str], *, grade_id: int | None = None, model: str | None = None,
               challenge: str | None = None, dimension: str | None = None, include_invalid: bool = True,
               checkpoint: Callable[[], None] | None = None) -> Iterator[list[tuple]]:
    """Grade rows, oldest first, as tuples of ``fields`` (a grade's columns, with
    ``grader`` and ``grader_kind`` from its grader), in batches; the filters narrow it."""
    where, params = [], []
    for column, value in (("g.id", grade_id), ("g.model", model), ("g.challenge", challenge),
                          ("g.dimension", dimension)):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    if not include_invalid:
        where.append("g.invalidated_at is null")
    sql = f"select {_columns(fields)}{_GRADE_FROM}" + (f" where {' and '.join(where)}" if where else "")
    return _read(store, sql + " order by g.id", tuple(params), checkpoint)


def current_grade_rows(store: Store, fields: Sequence[str], *, grader: str | None = None,
                       dimension: str | None = None, model: str | None = None, challenge: str | None = None,
                       checkpoint: Callable[[], None] | None = None) -> Iterator[list[tuple]]:
    """The current grade of every (model, challenge, dimension, grader) cell, the
    newest row not invalidated, as tuples of ``fields`` in batches; ordered by
    model, challenge, dimension and grader. The filters narrow it."""
    where, params = ["g.invalidated_at is null"], []
    for column, value in (("r.name", grader), ("g.dimension", dimension),
                          ("g.model", model), ("g.challenge", challenge)):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    sql = (
        f"select {', '.join('x.' + name for name in fields)} "
        f"from (select {_columns(fields)}, g.grader_id{_GRADE_FROM} where {' and '.join(where)}) x "
        "where not exists (select 1 from grades n where n.model = x.model and n.challenge = x.challenge "
        "and n.dimension = x.dimension and n.grader_id is x.grader_id and n.invalidated_at is null "
        "and n.id > x.id) order by x.model, x.challenge, x.dimension, x.grader"
    )
    return _read(store, sql, tuple(params), checkpoint)


def insert_grade(store: Store, row: dict) -> int:
    """A new grade row (the columns of ``row``); its id."""
    columns = ("model", "challenge", "dimension", "letter", "score", "points", "grader_id", "note",
               "rubric_version", "created_at", "supersedes", "source", "source_key", "judge_model", "rubric_sha",
               "judge_mode")
    cursor = store.execute(
        f"insert into grades ({', '.join(columns)}) values ({', '.join('?' * len(columns))})",
        tuple(row.get(c) for c in columns))
    return cursor.lastrowid


def invalidate_grade(store: Store, grade_id: int, when: str, reason: str) -> None:
    store.execute("update grades set invalidated_at = ?, invalid_reason = ? where id = ?", (when, reason, grade_id))


# -- notes ------------------------------------------------------------------------
def insert_note(store: Store, row: dict) -> int:
    columns = ("model", "challenge", "relpath", "line", "transcript", "entry", "author", "text", "created_at")
    cursor = store.execute(
        f"insert into notes ({', '.join(columns)}) values ({', '.join('?' * len(columns))})",
        tuple(row[c] for c in columns))
    return cursor.lastrowid


def note_row(store: Store, note_id: int) -> dict:
    return store.query("select * from notes where id = ?", (note_id,))[0]


def note_rows(store: Store, model: str | None = None, challenge: str | None = None) -> list[dict]:
    """Notes oldest first: one answer's, or every note."""
    if model is None:
        return store.query("select * from notes order by id")
    return store.query("select * from notes where model = ? and challenge = ? order by id", (model, challenge))
