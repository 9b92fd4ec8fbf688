"""Store queries for what a run judged and whether it still judges the files on disk
(engine/verify/judged.py says what they mean)."""
from __future__ import annotations

import json
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


def _comparable(files: dict[str, str]) -> dict[str, str]:
    """The files a scan indexes: a run also hashed those in hidden folders, which the scan skips."""
    return {rel: sha for rel, sha in files.items()
            if not any(part.startswith(".") or part == "__pycache__" for part in rel.split("/")[:-1])}


def changed_files(then: dict[str, str], now: dict[str, str]) -> str:
    """What differs between two {relpath: sha256} (a run's files, the last scan's): "kv_cache.py
    changed", "2 files changed, notes.md added"; "" when the same."""
    then, now = _comparable(then), _comparable(now)
    parts = []
    for what, names in (("changed", [r for r in then if r in now and then[r] != now[r]]),
                        ("added", [r for r in now if r not in then]), ("removed", [r for r in then if r not in now])):
        if names:
            names.sort()
            parts.append(f"{names[0]} {what}" if len(names) == 1 else f"{len(names)} files {what} ({', '.join(names[:3])}"
                         + (", ..." if len(names) > 3 else "") + ")")
    return ", ".join(parts)


def stale_runs(store: Store, run_ids: Iterable[int]) -> dict[int, str]:
    """Run id -> what changed in its answer's files since the run (as the last scan hashed
    them), for the runs whose verdict is on files no longer there; a run recorded without its
    files, or whose answer is gone, is left out (nothing to compare)."""
    ids = [i for i in run_ids if i is not None]
    out: dict[int, str] = {}
    for i in range(0, len(ids), 500):
        chunk = ids[i:i + 500]
        rows = store.conn.execute(
            "select r.id, r.files, a.id from runs r join answers a on a.model = r.model and a.challenge = r.challenge "
            f"where a.present = 1 and r.files is not null and r.files != '' and r.id in ({', '.join('?' * len(chunk))})",
            chunk).fetchall()
        answers = sorted({a for _, _, a in rows})
        now: dict[int, dict[str, str]] = {a: {} for a in answers}
        for j in range(0, len(answers), 500):
            part = answers[j:j + 500]
            for a, rel, sha in store.conn.execute(
                    f"select answer_id, relpath, sha256 from files where answer_id in ({', '.join('?' * len(part))})", part):
                now[a][rel] = sha
        for run_id, files, answer_id in rows:
            try:
                then = json.loads(files)
            except ValueError:
                continue
            if not isinstance(then, dict) or not then:
                continue
            said = changed_files(then, now[answer_id])
            if said:
                out[run_id] = said
    return out


def answer_hashes(store: Store) -> dict[tuple[str, str], dict[str, str]]:
    """(model, challenge) -> {relpath: sha256} of each present answer, as the last scan hashed it."""
    out: dict[tuple[str, str], dict[str, str]] = {}
    for model, challenge, rel, sha in store.conn.execute(
            "select a.model, a.challenge, f.relpath, f.sha256 from files f join answers a on a.id = f.answer_id "
            "where a.present = 1"):
        out.setdefault((model, challenge), {})[rel] = sha
    return out
