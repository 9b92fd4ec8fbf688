"""``benchtui salvage --restore FILE``: put what ``benchtui salvage`` read out of a
damaged store (graders, grades, notes, name aliases) back into the store rebuilt
by a rescan.

Rows keep their ids where the rebuilt store has them free, so a grade's id (and
the ``supersedes`` chain of the grades before it) reads as it did; where an id is
taken the row gets a new one and the grades that supersede it follow. A row the
store already holds (the same grader's same grade, made at the same time; the same
note) is not added twice, so restoring twice adds nothing."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from benchtui.store.database import Store, now_iso

GRADE_FIELDS = ("model", "challenge", "dimension", "letter", "score", "points", "note", "rubric_version",
                "created_at", "invalidated_at", "invalid_reason", "source", "source_key", "judge_model", "rubric_sha",
                "judge_mode")
GRADE_IDENTITY = tuple(f for f in GRADE_FIELDS if f not in ("invalidated_at", "invalid_reason"))
NOTE_FIELDS = ("model", "challenge", "relpath", "line", "transcript", "entry", "author", "text", "created_at")


class RestoreError(Exception):
    """The file is not a salvage; one line for the user."""


@dataclass
class Restored:
    added: dict[str, int] = field(default_factory=dict)     # table -> rows added
    present: dict[str, int] = field(default_factory=dict)   # table -> rows the store already held
    conflicts: list[str] = field(default_factory=list)      # aliases mapped elsewhere; grades kept as history

    def to_dict(self) -> dict:
        return {"added": self.added, "already_present": self.present, "conflicts": self.conflicts}


def is_salvage(data) -> bool:
    return isinstance(data, dict) and isinstance(data.get("tables"), dict) and "salvaged_at" in data


def read_salvage(path: Path | str) -> dict:
    path = Path(path).expanduser()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RestoreError(f"no such file: {path}") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise RestoreError(f"{path} is not a salvage file (JSON written by `benchtui salvage FILE`): {exc}") from None
    if not is_salvage(data):
        raise RestoreError(f"{path} is not a salvage file (JSON written by `benchtui salvage FILE`): "
                           "it has no 'tables' and 'salvaged_at'")
    return data


def _rows(data: dict, table: str) -> list[dict]:
    rows = data["tables"].get(table) or []
    if not isinstance(rows, list) or not all(isinstance(r, dict) and isinstance(r.get("id"), int) for r in rows):
        raise RestoreError(f"the salvage's {table} table is not a list of rows with ids")
    return sorted(rows, key=lambda r: r["id"])


def _free(store: Store, table: str, row_id: int) -> bool:
    return not store.conn.execute(f"select 1 from {table} where id = ?", (row_id,)).fetchone()


def _insert(store: Store, table: str, row: dict, row_id: int) -> int:
    values = {**row, "id": row_id} if _free(store, table, row_id) else dict(row)
    cols = list(values)
    cur = store.conn.execute(f"insert into {table} ({', '.join(cols)}) values ({', '.join('?' * len(cols))})",
                             [values[c] for c in cols])
    return cur.lastrowid


def _same(store: Store, table: str, fields: tuple[str, ...], row: dict) -> int | None:
    """The id of a row of ``table`` equal to ``row`` on ``fields`` (``is``: NULLs match)."""
    found = store.conn.execute(f"select id from {table} where " + " and ".join(f"{f} is ?" for f in fields),
                               [row.get(f) for f in fields]).fetchone()
    return found[0] if found else None


def _keep_the_newer_current(store: Store, row: dict, new_id: int, out: Restored) -> None:
    """A cell's current grade is its grader's newest row by id. A salvaged grade that
    met a taken id got a new, higher one: where the store holds a grade the same
    grader made on the cell since, the restored one is kept as history (invalid,
    saying why), not made current over it."""
    newer = store.conn.execute(
        "select id, created_at from grades where model = ? and challenge = ? and dimension = ? and grader_id is ? "
        "and invalidated_at is null and id < ? and created_at > ? order by id desc limit 1",
        (row["model"], row["challenge"], row["dimension"], row["grader_id"], new_id, row["created_at"] or "")).fetchone()
    if newer is None:
        return
    reason = f"restored from a salvage beside grade #{newer[0]}, made on this cell since ({newer[1]}), which stays current"
    store.conn.execute("update grades set invalidated_at = ?, invalid_reason = ? where id = ?", (now_iso(), reason, new_id))
    out.conflicts.append(f"grade #{new_id} {row['model']}/{row['challenge']} {row['dimension']} "
                         f"({row['created_at']}): {reason}")


def restore(store: Store, data: dict) -> Restored:
    """Every salvaged row of a person's making back in ``store``, in one transaction."""
    out = Restored()
    tables = {t: _rows(data, t) for t in ("graders", "grades", "notes", "name_aliases")}
    with store.conn:
        graders: dict[int, int] = {}
        for g in tables["graders"]:
            found = store.conn.execute("select id from graders where name = ?", (g.get("name"),)).fetchone()
            if found:
                graders[g["id"]] = found[0]
                out.present["graders"] = out.present.get("graders", 0) + 1
            else:
                graders[g["id"]] = _insert(store, "graders", {k: g.get(k) for k in ("name", "kind", "created_at")}, g["id"])
                out.added["graders"] = out.added.get("graders", 0) + 1
        grades: dict[int, int] = {}
        for g in tables["grades"]:  # by id: a grade's superseded one is restored before it
            row = {k: g.get(k) for k in GRADE_FIELDS} | {"grader_id": graders.get(g.get("grader_id"))}
            row["supersedes"] = grades.get(g.get("supersedes")) if g.get("supersedes") else None
            # one grade is one grader's letter on a cell at one time, whether or not either copy was since
            # made invalid (a restore may have made its copy history: restoring again must not add it twice)
            same = _same(store, "grades", (*GRADE_IDENTITY, "grader_id"), row)
            if same is not None:
                grades[g["id"]] = same
                out.present["grades"] = out.present.get("grades", 0) + 1
                continue
            grades[g["id"]] = new_id = _insert(store, "grades", row, g["id"])
            out.added["grades"] = out.added.get("grades", 0) + 1
            if new_id != g["id"] and not row["invalidated_at"]:
                _keep_the_newer_current(store, row, new_id, out)
        for n in tables["notes"]:
            row = {k: n.get(k) for k in NOTE_FIELDS}
            if _same(store, "notes", NOTE_FIELDS, row) is not None:
                out.present["notes"] = out.present.get("notes", 0) + 1
                continue
            _insert(store, "notes", row, n["id"])
            out.added["notes"] = out.added.get("notes", 0) + 1
        for a in tables["name_aliases"]:
            found = store.conn.execute("select target from name_aliases where kind = ? and alias = ?",
                                       (a.get("kind"), a.get("alias"))).fetchone()
            if found:
                out.present["name_aliases"] = out.present.get("name_aliases", 0) + 1
                if found[0] != a.get("target"):
                    out.conflicts.append(f"{a.get('kind')} alias {a.get('alias')!r} maps to {found[0]} here, "
                                         f"to {a.get('target')} in the salvage: kept as it is here")
                continue
            _insert(store, "name_aliases", {k: a.get(k) for k in ("kind", "alias", "target", "created_at")}, a["id"])
            out.added["name_aliases"] = out.added.get("name_aliases", 0) + 1
    return out
