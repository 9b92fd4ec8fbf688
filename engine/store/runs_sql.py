"""The store's runs and their checks: what the runner writes and the commands read."""
from __future__ import annotations

import os
from collections.abc import Callable

from benchtui.store.database import Store


def running_runs(store: Store) -> list[dict]:
    """id and pid of each run marked running."""
    return store.query("select id, pid from runs where status = 'running'")


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` exists on this machine (one of another user's counts)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def in_flight(store: Store) -> dict[tuple[str, str], dict]:
    """Each answer's run in flight, by (model, challenge): its id, start and backend.
    Shown beside the last finished verdict, never in its place. A run marked running
    whose process is gone is not in flight (the next run or `results` marks it interrupted)."""
    return {(r["model"], r["challenge"]): r for r in store.query(
        "select id, model, challenge, started_at, backend, pid from runs where status = 'running' order by id")
        if r["pid"] is not None and process_alive(r["pid"])}


def in_flight_text(run: dict | None) -> str:
    """How every command and export says a run is in flight: "run #7 in flight since 10:02"."""
    if not run:
        return ""
    since = f" since {str(run['started_at'])[11:16]}" if run.get("started_at") else ""
    return f"run #{run['id']} in flight{since}"


def update_run(store: Store, run_id: int, values: dict) -> None:
    with store.conn:
        store.db["runs"].update(run_id, values)


def claim_run(store: Store, row: dict, since: str | None, blocks: Callable[[dict], bool]) -> tuple[int | None, dict | None]:
    """Insert ``row`` as a running run unless a rival run of the same answer
    (one running, or one started since ``since`` by another process) ``blocks``
    it: (run_id, None), or (None, the rival's id, pid, status and verdict).
    Check and insert happen in one write transaction."""
    conn = store.conn
    conn.execute("BEGIN IMMEDIATE")
    try:
        for r in store.query("select id, pid, status, verdict from runs where model = ? and challenge = ? "
                             "and (status = 'running' or (started_at >= ? and pid != ?)) order by id desc",
                             (row["model"], row["challenge"], since or "~", row["pid"])):
            if blocks(r):
                conn.rollback()
                return None, r
        run_id = store.db["runs"].insert(row).last_pk
        conn.commit()
        return run_id, None
    except BaseException:
        if conn.in_transaction:
            conn.rollback()
        raise


def finish_run(store: Store, run_id: int, checks: list[dict], values: dict, message: str) -> None:
    """A run's checks and its final row, in one transaction; its message is
    ``message`` then the note the row already held (a degraded backend's)."""
    with store.conn:
        store.db["checks"].insert_all(checks)
        prior = store.db["runs"].get(run_id)["message"]
        store.db["runs"].update(run_id, {**values, "message": "; ".join(m for m in (message, prior) if m)})


def latest_done_runs(store: Store, columns: str, done: str = "done") -> list[dict]:
    """``columns`` (SQL, e.g. "id, model, verdict") of each answer's latest run whose
    status is ``done``, by model and challenge."""
    return store.query(
        f"select {columns} from runs where id in "
        "(select max(id) from runs where status = ? group by model, challenge) order by model, challenge", (done,))


def last_durations(store: Store) -> dict[tuple[str, str], float]:
    """Seconds each answer's latest finished run took, by (model, challenge)."""
    return {(r["model"], r["challenge"]): float(r["duration_s"])
            for r in latest_done_runs(store, "model, challenge, duration_s") if r["duration_s"] is not None}


def runs_by_id(store: Store, ids) -> list[dict]:
    """id, model and challenge of the runs ``ids``."""
    return store.query(f"select id, model, challenge from runs where id in ({', '.join(map(str, ids)) or 'null'})")


def runs_since(store: Store, columns: str, model: str, challenge: str, status: str, after: int) -> list[dict]:
    """``columns`` (SQL) of an answer's runs of ``status`` after run ``after``, oldest first."""
    return store.query(f"select {columns} from runs where model = ? and challenge = ? and status = ? and id > ? "
                       "order by id", (model, challenge, status, after))


def named_check(store: Store, run_id: int, name: str) -> list[dict]:
    """name and details of the run's check(s) called ``name``."""
    return store.query("select name, details from checks where run_id = ? and name = ?", (run_id, name))


def run_columns(store: Store) -> set[str]:
    """The runs table's column names (an older store lacks the newer ones)."""
    return {r["name"] for r in store.query("select name from pragma_table_info('runs')")}


def judged_file_stats(store: Store, run_ids: list[int]) -> list[tuple[int, str, str, str, int, int]]:
    """(run id, the run's judged files as JSON, answer folder, file relpath, size, mtime_ns)
    for every file the last scan recorded in each run's answer, where the run recorded its files."""
    if not run_ids:
        return []
    marks = ", ".join("?" * len(run_ids))
    return store.conn.execute(
        "select r.id, r.files, a.path, f.relpath, f.size, f.mtime_ns from runs r "
        "join answers a on a.model = r.model and a.challenge = r.challenge and a.present = 1 "
        "join files f on f.answer_id = a.id "
        f"where r.files is not null and r.files != '' and r.id in ({marks})", run_ids).fetchall()
