"""The store's record of mutation audits: audits, their answers, the cached
baselines and mutants (keyed by what decides their outcome), and people's marks."""
from __future__ import annotations

from benchtui.store.database import Store


def start_audit(store: Store, row: dict) -> int:
    """A new running audit (an audit left running by a process that ended is
    marked interrupted first); its id."""
    with store.conn:
        store.execute("update audits set status = 'interrupted' where status = 'running'")
        return store.db["audits"].insert(row).last_pk


def finish_audit(store: Store, audit_id: int, answers: list[dict], values: dict) -> None:
    """The audit's per-answer rows and its final values, in one transaction."""
    with store.conn:
        for row in answers:
            store.db["audit_answers"].insert({"audit_id": audit_id, **row})
        store.db["audits"].update(audit_id, values)


def baseline(store: Store, key: str) -> dict | None:
    rows = store.query("select * from audit_baselines where key = ?", (key,))
    return rows[0] if rows else None


def save_baseline(store: Store, row: dict) -> None:
    with store.conn:
        store.db["audit_baselines"].insert(row, replace=True)


def mutant_status(store: Store, key: str) -> str | None:
    """The cached outcome of the mutant ``key`` (None: never run)."""
    rows = store.query("select status from audit_mutants where key = ?", (key,))
    return rows[0]["status"] if rows else None


def save_mutant(store: Store, row: dict) -> None:
    with store.conn:
        store.db["audit_mutants"].insert(row, replace=True)


def mutant_rows(store: Store, keys: list[str]) -> list[dict]:
    """The mutants ``keys``, every column (read 500 keys at a time)."""
    rows = []
    for i in range(0, len(keys), 500):
        chunk = keys[i:i + 500]
        rows.extend(store.query(f"select * from audit_mutants where key in ({','.join('?' * len(chunk))})", tuple(chunk)))
    return rows


def mutants_starting(store: Store, model: str, challenge: str, prefix: str) -> list[dict]:
    """file and mutant_sha256 of an answer's audited mutants whose sha starts with ``prefix``."""
    return store.query("select file, mutant_sha256 from audit_mutants where model = ? and challenge = ? "
                       "and mutant_sha256 like ?", (model, challenge, prefix + "%"))


def mark_rows(store: Store, model: str, challenge: str) -> list[dict]:
    """mutant_sha256 and equivalent of each mark on an answer's mutants, oldest first."""
    return store.query("select mutant_sha256, equivalent from audit_marks where model = ? and challenge = ? order by id",
                       (model, challenge))


def add_mark(store: Store, row: dict) -> None:
    with store.conn:
        store.db["audit_marks"].insert(row)


def latest_answers(store: Store) -> list[dict]:
    """Each (model, challenge)'s row from its most recent audit, by challenge and model."""
    return store.query("select * from audit_answers where id in (select max(id) from audit_answers "
                       "group by model, challenge) order by challenge, model")
