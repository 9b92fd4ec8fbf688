"""Write transactions that take the store's write lock up front, shared by
every room that writes several rows as one."""
from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from benchtui.store.database import Store, StoreError


class StoreBusy(StoreError):
    """Another process holds the store's write lock past the busy timeout."""


@contextmanager
def write_transaction(store: Store) -> Iterator[None]:
    """One write transaction that takes the write lock up front, so a writer
    waits for a running benchmark's transaction (busy_timeout) instead of
    failing on a lock upgrade; an error inside rolls back. Inside a transaction
    the caller already holds, it adds nothing. :class:`StoreBusy` when the lock
    cannot be had."""
    conn = store.conn
    if conn.in_transaction:  # the caller owns the transaction
        yield
        return
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        raise StoreBusy(str(exc)) from exc
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


@contextmanager
def rehearsal(store: Store, rehearse: bool = True) -> Iterator[None]:
    """With ``rehearse``, everything written inside is rolled back at the end
    (a dry run over several files sees what the earlier ones would have stored)."""
    if not rehearse:
        yield
        return
    store.conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        if store.conn.in_transaction:
            store.conn.execute("ROLLBACK")
