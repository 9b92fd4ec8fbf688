"""Read-only store queries the dashboard needs.

Every function takes a :class:`engine.store.Store` and returns plain
dataclasses or dicts, so the TUI renders them without knowing SQL. Nothing
here writes, and nothing here imports Textual.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from engine.store import Store

OVERALL = "overall"  # engine.grades.OVERALL (not imported here: see load_matrix)

def _first_name(names_json: str | None) -> str:
    try:
        names = json.loads(names_json or "[]")
    except ValueError:
        return ""
    return names[0] if names and isinstance(names[0], str) else ""


@dataclass(frozen=True)
class ChallengeInfo:
    id: str
    title: str
    difficulty: str
    position: int
    display_name: str = ""

    @property
    def label(self) -> str:
        """The name published grade matrices use ("Flash Attn Forward"), else the title."""
        return self.display_name or self.title or self.id


@dataclass(frozen=True)
class Cell:
    """One matrix cell: a model's answer to a challenge, as the reviewer sees it."""

    model: str
    challenge: str
    answer_id: int | None
    status: str            # 'answer', 'no_answer' or 'missing' (no folder)
    verdict: str           # answer verdict of the latest run, 'not_run', 'no_answer', 'running'...
    run_id: int | None
    human: str | None      # current human overall letter
    judge: str | None      # current judge overall letter (latest judge)
    warnings: int = 0


@dataclass
class Matrix:
    models: list[str]
    challenges: list[ChallengeInfo]
    cells: dict[tuple[str, str], Cell] = field(default_factory=dict)

    def cell(self, model: str, challenge: str) -> Cell:
        found = self.cells.get((model, challenge))
        if found is None:
            return Cell(model, challenge, None, "missing", "no_answer", None, None, None)
        return found


def is_judge(kind: str) -> bool:
    return kind == "judge"


def current_overall_grades(store: Store) -> list[dict]:
    """Each grader's current overall grade per cell, oldest first: the rule of
    ``engine.grades.current_grades(store, dimension=OVERALL)`` (the newest row
    of that grader not invalidated), as a plain query. The matrix's first
    frame needs only this, and importing engine.grades (rubric, scales,
    challenge names) would cost start-up several milliseconds; a test holds
    the two to the same answer."""
    return store.query(
        "select g.id, g.model, g.challenge, g.letter, coalesce(r.kind, 'human') as grader_kind "
        "from grades g left join graders r on r.id = g.grader_id "
        "where g.invalidated_at is null and g.dimension = ? "
        "and not exists (select 1 from grades n where n.model = g.model and n.challenge = g.challenge "
        "and n.dimension = g.dimension and n.grader_id is g.grader_id and n.invalidated_at is null "
        "and n.id > g.id) order by g.id",
        (OVERALL,),
    )


def load_matrix(store: Store) -> Matrix:
    models = store.model_names()
    challenges = [
        ChallengeInfo(r["id"], r["title"] or r["id"], r["difficulty"] or "", r["position"] or 0, _first_name(r["display_names"]))
        for r in store.query("select id, title, difficulty, position, display_names from challenges order by position, id")
    ]
    runs = {
        (r["model"], r["challenge"]): r
        for r in store.query(
            """select r.model, r.challenge, r.id, r.status, r.verdict from runs r
               where r.id = (select max(id) from runs r2
                             where r2.model = r.model and r2.challenge = r.challenge)"""
        )
    }
    human: dict[tuple[str, str], str] = {}
    judge: dict[tuple[str, str], str] = {}
    # Newest valid overall grade per grader; the latest human and latest judge win.
    for g in current_overall_grades(store):
        key = (g["model"], g["challenge"])
        if g["grader_kind"] == "human":
            human[key] = g["letter"]
        elif is_judge(g["grader_kind"]):
            judge[key] = g["letter"]
    warn_counts = {
        (r["model"], r["challenge"]): r["n"]
        for r in store.query(
            """select model, challenge, count(*) as n from scan_warnings
               where scan_id = (select max(id) from scans) group by model, challenge"""
        )
    }
    matrix = Matrix(models, challenges)
    for a in store.query("select id, model, challenge, status from answers where present = 1"):
        key = (a["model"], a["challenge"])
        run = runs.get(key)
        if a["status"] == "no_answer":
            verdict = "no_answer"
        elif run is None:
            verdict = "not_run"
        elif run["status"] == "running":
            verdict = "running"
        elif run["status"] == "interrupted":
            verdict = "interrupted"
        else:
            verdict = run["verdict"] or "not_run"
        matrix.cells[key] = Cell(
            a["model"], a["challenge"], a["id"], a["status"] or "answer", verdict,
            run["id"] if run else None, human.get(key), judge.get(key), warn_counts.get(key, 0),
        )
    return matrix


# -- one answer -----------------------------------------------------------------

def answer_row(store: Store, model: str, challenge: str) -> dict | None:
    rows = store.query("select * from answers where model = ? and challenge = ?", (model, challenge))
    return rows[0] if rows else None


def answer_files(store: Store, answer_id: int) -> list[dict]:
    return store.query(
        "select relpath, size, kind, readable, problem, git_status, lines, sha256 "
        "from files where answer_id = ? order by relpath",
        (answer_id,),
    )


def answer_transcripts(store: Store, answer_id: int) -> list[dict]:
    return store.query(
        "select relpath, size, format, status, problem from transcripts where answer_id = ? order by relpath",
        (answer_id,),
    )


def answer_warnings(store: Store, model: str, challenge: str) -> list[dict]:
    return store.query(
        """select kind, path, detail from scan_warnings
           where model = ? and challenge = ? and scan_id = (select max(id) from scans)
           order by id""",
        (model, challenge),
    )


def run_history(store: Store, model: str, challenge: str) -> list[dict]:
    """Runs of one answer, newest first (without the big output columns)."""
    return store.query(
        """select id, status, verdict, backend, device, started_at, finished_at, duration_s,
                  message, self_status, self_exit_code, self_duration_s
           from runs where model = ? and challenge = ? order by id desc""",
        (model, challenge),
    )


def run_row(store: Store, run_id: int) -> dict | None:
    rows = store.query("select * from runs where id = ?", (run_id,))
    return rows[0] if rows else None


def latest_run(store: Store, model: str, challenge: str) -> dict | None:
    rows = store.query(
        "select * from runs where model = ? and challenge = ? order by id desc limit 1",
        (model, challenge),
    )
    return rows[0] if rows else None


def run_checks(store: Store, run_id: int) -> list[dict]:
    rows = store.query(
        "select position, name, verdict, value, threshold, message, details from checks "
        "where run_id = ? order by position, id",
        (run_id,),
    )
    for r in rows:
        try:
            r["details"] = json.loads(r["details"]) if r["details"] else None
        except ValueError:
            pass  # keep the text as stored
    return rows


def recent_runs(store: Store, limit: int = 200) -> list[dict]:
    return store.query(
        """select id, model, challenge, status, verdict, backend, device, started_at,
                  duration_s, message, node from runs order by id desc limit ?""",
        (limit,),
    )
