"""Store queries for what a run judged and whether it still judges the files on disk
(engine/verify/judged.py says what they mean)."""
from __future__ import annotations

from collections.abc import Iterable

from benchtui.store.database import Store


def ran_out_of_time(store: Store, run_ids: Iterable[int] | None = None) -> dict[int, str]:
    """Run id -> the message of its ``run`` check of verdict ``timeout``: the runs the run's
    time limit stopped (``run_ids``: only those)."""
    sql = "select run_id, message from checks where name = 'run' and verdict = 'timeout'"
    if run_ids is None:
        return {r: m or "" for r, m in store.conn.execute(sql)}
    ids = list(run_ids)
    out: dict[int, str] = {}
    for i in range(0, len(ids), 500):
        chunk = ids[i:i + 500]
        out.update({r: m or "" for r, m in store.conn.execute(
            f"{sql} and run_id in ({', '.join('?' * len(chunk))})", chunk)})
    return out
