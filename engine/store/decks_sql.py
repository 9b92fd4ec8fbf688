"""The store's record of imported decks (deck_imports, deck_results,
deck_annotations, and the notes an import adds) and the reads that compare
them with benchtui's own runs."""
from __future__ import annotations

from benchtui.store.database import Store

# the columns that say which import last changed a row, not what the row holds
STAMPS = ("import_id", "imported_at")


def _upsert(table: str, columns: str, key: str, *, source: str | None = None, order: str = "rowid") -> str:
    """Insert, or update a row whose values changed; a row that holds the same
    values keeps the stamps of the import that last changed it. The values are
    bound, or with ``source`` read from that table (the columns less the stamps,
    which are bound, in ``order``)."""
    names = [c.strip() for c in columns.split(",")]
    keys = {k.strip() for k in key.split(",")}
    updates = ", ".join(f"{c} = excluded.{c}" for c in names if c not in keys)
    changed = " or ".join(f"{table}.{c} is not excluded.{c}" for c in names if c not in keys and c not in STAMPS)
    if source is None:
        values = f"values ({', '.join('?' * len(names))})"
    else:  # "where true": SQLite's rule for a select ahead of "on conflict"
        values = f"select {', '.join('?' if c in STAMPS else c for c in names)} from {source} where true order by {order}"
    return f"insert into {table} ({columns}) {values} on conflict({key}) do update set {updates} where {changed}"


# -- an import's writes (inside transactions.write_transaction)
IMPORT_COLUMNS = ("deck", "title", "path", "deck_commit", "gpu", "imported_at", "challenges", "answers", "results",
                  "annotations", "problems", "notes")
RESULT_COLUMNS = ("deck, run_id, model, challenge, problem, harness, deck_model, effort, has_answer, has_result, "
                  "correct, failure_reason, peak_fraction, speedup, shapes, stats, regime, precision, peak_tflops, "
                  "peak_bw_gbps, board_label, board_correct, board_peak_fraction, annotation_verdict, source_path, "
                  "sha256, deck_commit, import_id, imported_at")
ANNOTATION_COLUMNS = ("deck, run_id, model, challenge, source, verdict, summary, peak_fraction, auditor, quotes, body, "
                      "measured_on, import_id, imported_at")


def insert_import(store: Store, values: tuple) -> int:
    """A deck_imports row, ``values`` in IMPORT_COLUMNS' order; its id."""
    return store.conn.execute(
        f"insert into deck_imports ({', '.join(IMPORT_COLUMNS)}) values ({', '.join('?' * len(IMPORT_COLUMNS))})",
        values).lastrowid


def upsert_results_from(store: Store, source: str, stamps: tuple) -> int:
    """deck_results rows (RESULT_COLUMNS) from the table ``source`` (those columns less the
    stamps, and ``part``: the rows go in by part, then as they were added), one per (deck,
    run_id), stamped with ``stamps`` (import_id, imported_at); how many were new or changed."""
    return store.conn.execute(_upsert("deck_results", RESULT_COLUMNS, "deck, run_id", source=source,
                                      order="part, rowid"), stamps).rowcount


def upsert_annotations_from(store: Store, source: str, stamps: tuple) -> int:
    """deck_annotations rows (ANNOTATION_COLUMNS) from the table ``source`` as upsert_results_from
    takes them, one per (deck, run_id, source); how many were new or changed."""
    return store.conn.execute(_upsert("deck_annotations", ANNOTATION_COLUMNS, "deck, run_id, source",
                                      source=source), stamps).rowcount


def add_note_once(store: Store, model: str, challenge: str, relpath: str | None, line: int | None, author: str,
                  text: str, at: str) -> bool:
    """A note on an answer unless the same one is there (a re-import adds none); whether it was added."""
    exists = store.conn.execute("select 1 from notes where model = ? and challenge = ? and relpath is ? and line is ? "
                                "and author = ? and text = ?", (model, challenge, relpath, line, author, text)).fetchone()
    if exists:
        return False
    store.conn.execute("insert into notes (model, challenge, relpath, line, author, text, created_at) "
                       "values (?, ?, ?, ?, ?, ?, ?)", (model, challenge, relpath, line, author, text, at))
    return True


# -- reads
def has_results(store: Store) -> bool:
    """Whether any deck's results were imported."""
    return "deck_results" in store.table_names() and bool(store.query("select 1 from deck_results limit 1"))


def results_name(store: Store, column: str, name: str) -> bool:
    """Whether a deck result's ``column`` ("model" or "challenge") holds ``name``."""
    if column not in ("model", "challenge"):
        raise ValueError(f"deck results are named by model or challenge, not {column!r}")
    return bool(store.query(f"select 1 from deck_results where {column} = ? limit 1", (name,)))


def result_rows(store: Store, *, challenge: str | None = None, deck: str | None = None, columns: str = "*") -> list[dict]:
    """deck_results rows, by challenge, model and run id; ``challenge``/``deck`` narrow them,
    ``columns`` (SQL) says which (the per-shape figures are most of a row's bytes)."""
    return store.query(*_results_sql(challenge, deck, columns))


def result_tuples(store: Store, *, columns: str, challenge: str | None = None, deck: str | None = None) -> list[tuple]:
    """result_rows' rows as tuples, in ``columns``' order: a deck of 10,000 runs read
    without a dict made per row."""
    return store.conn.execute(*_results_sql(challenge, deck, columns)).fetchall()


def _results_sql(challenge: str | None, deck: str | None, columns: str) -> tuple[str, tuple]:
    where, params = [], []
    if challenge:
        where.append("challenge = ?")
        params.append(challenge)
    if deck:
        where.append("deck = ?")
        params.append(deck)
    sql = f"select {columns} from deck_results" + (" where " + " and ".join(where) if where else "") + " order by challenge, model, run_id"
    return sql, tuple(params)


def answer_results(store: Store, model: str, challenge: str) -> list[dict]:
    """Every deck result of one answer, by run id."""
    return store.query("select * from deck_results where model = ? and challenge = ? order by run_id", (model, challenge))


def annotation_rows(store: Store) -> list[dict]:
    """deck, run_id, verdict, summary, peak_fraction and source of every annotation, oldest first."""
    return store.query("select deck, run_id, verdict, summary, peak_fraction, source, measured_on from deck_annotations "
                       "order by id")


def run_annotations(store: Store, deck: str, run_id: str) -> list[dict]:
    """One deck run's annotations with their bodies, by source."""
    return store.query("select verdict, summary, peak_fraction, auditor, source, body, measured_on from deck_annotations "
                       "where deck = ? and run_id = ? order by source", (deck, run_id))


def latest_imports(store: Store) -> list[dict]:
    """The newest import of each deck and GPU, oldest first: deck_results are keyed by deck and run
    id, so an import of the same deck from another folder replaced the earlier one's results."""
    return store.query("select deck, title, path, deck_commit, gpu, imported_at, problems from deck_imports "
                       "where id in (select max(id) from deck_imports group by deck, gpu) order by id")


def pending_migrations(store: Store) -> list[str]:
    """The migrations this store has not had (a dry run does not apply them)."""
    from benchtui.store.database import discover_migrations

    done = set(store.applied_migrations())
    return [m.name for m in discover_migrations() if m.name not in done]


def latest_runs(store: Store) -> list[dict]:
    """Each answer's newest finished run (not interrupted, not a trial, not in flight), every column."""
    from benchtui.store.queries import FINISHED_SQL

    return store.query("select r.* from runs r join (select model, challenge, max(id) id from runs "
                       f"where {FINISHED_SQL} group by model, challenge) m on r.id = m.id")


def checks_of_runs(store: Store, run_ids: list[int]) -> dict[int, list[dict]]:
    """name, verdict, value and message of each run's checks, in order, by run id: one
    query for a whole deck's runs, not one per run."""
    out: dict[int, list[dict]] = {i: [] for i in run_ids}
    for start in range(0, len(run_ids), 900):  # under SQLite's bound-parameter limit
        chunk = run_ids[start:start + 900]
        for c in store.query(f"select run_id, name, verdict, value, message from checks where run_id in "
                             f"({', '.join('?' * len(chunk))}) order by run_id, position, id", tuple(chunk)):
            out[c.pop("run_id")].append(c)
    return out

