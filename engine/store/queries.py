"""Read-only store queries the dashboard needs.

Every function takes a :class:`engine.store.database.Store` and returns plain
dataclasses or dicts, so the TUI renders them without knowing SQL. Nothing
here writes, and nothing here imports Textual.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from benchtui.records.coverage import summary
from benchtui.records.flags import marks
from benchtui.records.scan_kinds import INFO_KINDS, WAITING_KIND
from benchtui.store.database import Store

# A finished run's status is "done", "interrupted" (stopped: history, never the verdict shown) or
# "trial" (`benchtui adapter check` trying an adapter: history too, never the answer's latest verdict).
TRIAL = "trial"
# A run in flight ("running") has no verdict yet: the verdict shown is the last finished
# one, with the run in flight beside it (runs_sql.in_flight), never in its place.
FINISHED_SQL = "status not in ('interrupted', 'trial', 'running')"


def answer_state(answer: dict) -> str:
    """An answer with no current verdict, in the scan's words: ``waiting`` (its folder holds only what
    was handed out, its PROMPT.md and data: the model has not answered yet), ``no_answer`` (a
    transcript but no answer files, or an empty folder) or ``not_run``."""
    if answer["status"] != "no_answer":
        return "not_run"
    return WAITING_KIND if answer["files"] and not answer["transcripts"] else "no_answer"


def no_answer_words(store, runs: list[dict]) -> dict[int, str]:
    """run id -> the scan's word (``waiting``, ``no_answer``) for the ``no_answer`` runs among
    ``runs``, as their folders are now: `results`, its JSON and the Runs screen say the same."""
    wanted = {(r["model"], r["challenge"]) for r in runs if r.get("verdict") == "no_answer"}
    if not wanted:
        return {}
    states = {(a["model"], a["challenge"]): answer_state(a) for a in store.query(
        "select model, challenge, status, files, transcripts from answers where status = 'no_answer'")
        if (a["model"], a["challenge"]) in wanted}
    return {r["id"]: states[key] for r in runs
            if r.get("verdict") == "no_answer" and (key := (r["model"], r["challenge"])) in states}


def suite_origin(challenge_path) -> str:
    """Which suite judges a challenge: "bundled" (a folder benchtui ships) or "workbench" (the
    workbench's own ``challenges/<id>``, which replaces a bundled one of the same id). A run records
    it (``versions.suite``); a run judged by the other one is not the answer's current verdict."""
    from benchtui.host.resources import bundled_challenges

    try:
        return "bundled" if Path(challenge_path).resolve().parent == bundled_challenges().resolve() else "workbench"
    except OSError:
        return "workbench"


def current_suites(store: Store) -> dict[str, str]:
    """Each challenge's suite as of the last scan (``suite_origin`` of its stored path)."""
    return {cid: suite_origin(path) for cid, path in store.conn.execute("select id, path from challenges") if path}


def empty_bundled(store: Store) -> set[str]:
    """The bundled challenges no model has a folder for (answer or prompt): a workbench of
    other challenges (an imported deck's) lists them only on request."""
    held = {cid for (cid,) in store.conn.execute("select distinct challenge from answers where present = 1")}
    return {cid for cid, origin in current_suites(store).items() if origin == "bundled" and cid not in held}


def superseded_suite(versions_json: str | None, challenge: str, suites: dict[str, str]) -> str | None:
    """Why a run's verdict is not current because another suite judged it (None: it is current,
    or it predates the record). ``suites``: ``current_suites``."""
    try:
        judged = json.loads(versions_json or "{}").get("suite")
    except (ValueError, AttributeError):
        return None
    now = suites.get(challenge)
    if not judged or not now or judged == now:
        return None
    return (f"judged by the workbench's own challenges/{challenge}, which is gone" if judged == "workbench" else
            f"judged by the bundled {challenge}, which the workbench's own challenges/{challenge} now replaces")

OVERALL = "overall"  # engine.grading.grades.OVERALL (not imported here: see load_matrix)

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
    stale: str = ""        # what changed in the answer's files since its run ("" : the verdict is on these files)
    in_flight: int | None = None  # a run of this answer in progress (its id), beside the finished verdict
    flags: str = ""        # the latest run's hack signals as marks ("T", engine/records/flags.py): beside the verdict
    judge_grader: str = ""  # who gave ``judge``
    other_judges: tuple[tuple[str, str], ...] = ()  # (judge, letter) of the cell's other judges, newest first


@dataclass
class Matrix:
    models: list[str]
    challenges: list[ChallengeInfo]
    cells: dict[tuple[str, str], Cell] = field(default_factory=dict)
    # only some cells were read (``load_matrix(first=N, width=W)``): what a first
    # frame shows; the rest are not known yet
    partial: bool = False
    # when partial: the models and challenges whose cells were read (all others' are unknown)
    read: tuple[frozenset, frozenset] | None = None

    def is_read(self, model: str, challenge: str) -> bool:
        """Whether this cell was read (a partial matrix's missing cell may hold an answer)."""
        return self.read is None or (model in self.read[0] and challenge in self.read[1])

    def cell(self, model: str, challenge: str) -> Cell:
        found = self.cells.get((model, challenge))
        if found is None:
            return Cell(model, challenge, None, "missing", "no_answer", None, None, None)
        return found


def is_judge(kind: str) -> bool:
    return kind == "judge"


# The newest valid row per (cell, grader): a group with max(id) takes the
# other columns from that row (SQLite's bare-column rule), answered from
# idx_grades_current alone (m008_scale_indexes); NULL grader ids group together, as
# `grader_id is` compares them. Graders' kinds and the order by id are
# applied here: a join and an ORDER BY in SQL cost more than both.
_CURRENT_OVERALL = """
select max(id), model, challenge, letter, grader_id from grades
where dimension = ? and invalidated_at is null group by model, challenge, grader_id
"""


def _current_overall_rows(store: Store, where: str = "", params: tuple = ()) -> list[tuple]:
    kinds = dict(store.conn.execute("select id, kind from graders").fetchall())
    sql = _CURRENT_OVERALL.replace("group by", f"{where} group by") if where else _CURRENT_OVERALL
    rows = [(i, m, c, letter, kinds.get(g) or "human", g)
            for i, m, c, letter, g in store.conn.execute(sql, (OVERALL, *params))]
    rows.sort()
    return rows


def models_that_fit(models: list[str], width: int) -> list[str]:
    """The first models whose columns can be on a screen ``width`` cells wide: a
    column is at least its name and a cell of padding each side, so no model
    after these can show before a scroll, whatever its cells hold."""
    shown = []
    for model in models:
        width -= len(model) + 2
        if width < 0 and shown:
            break
        shown.append(model)
    return shown


def load_matrix(store: Store, first: int | None = None, width: int | None = None) -> Matrix:
    """Every cell of the matrix: five reads, each from an index (m008_scale_indexes), as
    tuples (dicts cost a third of the time at 10,000 answers).

    ``first``: every model and challenge, but only the first ``first``
    challenges' cells (the matrix is then ``partial``, unless that is all of
    them); ``width``: and only the cells of the models that fit in that many
    terminal cells (``models_that_fit``). The dashboard's first frame shows a
    screenful, and must not take longer on a bigger workbench: each read is
    then an index seek per (model, challenge) shown, not a scan."""
    conn = store.conn
    models = store.model_names()
    challenges = [
        ChallengeInfo(i, title or i, difficulty or "", position or 0, _first_name(names))
        for i, title, difficulty, position, names in conn.execute(
            "select id, title, difficulty, position, display_names from challenges order by position, id")
    ]
    only, params, read = "", (), None
    read_models = models_that_fit(models, width) if width is not None else models
    if (first is not None and len(challenges) > first) or len(read_models) < len(models):
        read_challenges = [c.id for c in challenges[:first]]
        read = (frozenset(read_models), frozenset(read_challenges))
        params = (*read_models, *read_challenges)
        only = (f"model in ({', '.join('?' * len(read_models))}) "
                f"and challenge in ({', '.join('?' * len(read_challenges))})")
    # the newest run per answer that was not interrupted (bare columns come from the max(id) row);
    # an interrupted run is history, never the verdict shown
    suites = current_suites(store)
    # a verdict another suite gave (a workbench challenge added over a bundled one, or removed) is not current
    runs = {(m, c): (i, status, verdict, flags) for m, c, i, status, verdict, versions, flags in conn.execute(
        f"select model, challenge, max(id), status, verdict, versions, flags from runs where {FINISHED_SQL}"
        + (f" and {only}" if only else "") + " group by model, challenge", params)
        if not superseded_suite(versions, c, suites)}
    human: dict[tuple[str, str], str] = {}
    judge: dict[tuple[str, str], str] = {}
    judges: dict[tuple[str, str], list] = {}  # (grader id, letter) of every judge of a cell, oldest first
    # Newest valid overall grade per grader; the latest human and latest judge win.
    for _, m, c, letter, kind, grader in _current_overall_rows(store, f"and {only}" if only else "", params):
        if kind == "human":
            human[m, c] = letter
        elif is_judge(kind):
            judge[m, c] = letter
            judges.setdefault((m, c), []).append((grader, letter))
    names = dict(conn.execute("select id, name from graders").fetchall()) if judges else {}

    def judged_by(key) -> tuple[str, tuple[tuple[str, str], ...]]:
        """The shown judge grade's grader, and the cell's other judges (a cell's
        matrix text shows one judge's grade: the rest are named, not dropped)."""
        found = judges.get(key)
        if not found:
            return "", ()
        newest_first = [(names.get(g) or "?", letter) for g, letter in reversed(found)]
        return newest_first[0][0], tuple(newest_first[1:])
    warn_counts = {
        (m, c): n for m, c, n in conn.execute(
            "select model, challenge, count(*) as n from scan_warnings where scan_id = (select max(id) from scans)"
            f" and kind not in ({', '.join(repr(k) for k in INFO_KINDS)})"  # what the scan did, not a warning
            + (f" and {only}" if only else "") + " group by model, challenge", params)
    }
    from benchtui.store.judging import stale_runs

    stale = stale_runs(store, [r[0] for r in runs.values() if r[1] == "done"])
    from benchtui.store.runs_sql import in_flight

    flying = in_flight(store)
    matrix = Matrix(models, challenges, partial=read is not None, read=read)
    cells = matrix.cells
    for answer_id, m, c, status in conn.execute(
            "select id, model, challenge, status from answers where present = 1" + (f" and {only}" if only else ""),
            params):
        key = (m, c)
        run = runs.get(key)
        if status == "no_answer":
            verdict = "no_answer"
        elif run is None:
            verdict = "running" if key in flying else "not_run"
        else:
            verdict = run[2] or "not_run"
        cells[key] = Cell(m, c, answer_id, status or "answer", verdict,
                          run[0] if run else None, human.get(key), judge.get(key), warn_counts.get(key, 0),
                          stale.get(run[0], "") if run and status != "no_answer" else "",
                          flying[key]["id"] if key in flying else None,
                          marks(run[3]) if run and run[1] == "done" and status != "no_answer" else "",
                          *judged_by(key))
    return matrix


def run_covers(store: Store, run_id: int | None) -> str:
    """What a run's verdict covers ("4 of 5 requirements met", engine/challenges/coverage.py);
    read per highlighted cell, so loading the matrix stays one pass over runs."""
    if run_id is None:
        return ""
    import json
    import sqlite3

    try:  # plain SQL: the first frame must not wait for sqlite_utils (and the numpy it imports)
        row = next(iter(store.query("select coverage from runs where id = ?", (run_id,))), None)
        return summary(json.loads(row["coverage"])) if row and row["coverage"] else ""
    except (sqlite3.OperationalError, ValueError):  # a store from before coverage; a damaged value
        return ""


class MatrixPrefetch:
    """``load_matrix`` for the dashboard's first frame, read by its command before
    it imports Textual, and taken by the first screen with ``result()`` (an error
    is raised there, where the screen reports it).

    It reads at once, in the calling thread: a screenful of cells is a few
    milliseconds of index seeks at 10,000 answers. It used to read in a thread
    beside the imports, but SQLite hands the GIL back and forth for every row,
    which made the imports ~15 ms slower than the read itself."""

    def __init__(self, path: Path | str, first: int | None = None, width: int | None = None) -> None:
        self._matrix: Matrix | None = None
        self._error: BaseException | None = None
        try:
            with Store(path, migrate=False) as store:
                self._matrix = load_matrix(store, first=first, width=width)
        except BaseException as exc:  # handed to whoever asks for the result
            self._error = exc

    def result(self) -> Matrix:
        if self._error is not None:
            raise self._error
        assert self._matrix is not None
        return self._matrix


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
    """The newest finished run that is not interrupted nor a trial (history, never the
    verdict); a run in flight is not one (``runs_sql.in_flight`` says it is there)."""
    rows = store.query(
        f"select * from runs where model = ? and challenge = ? and {FINISHED_SQL} order by id desc limit 1",
        (model, challenge),
    )
    return rows[0] if rows else None


def stored_value(raw):
    """A check's value or threshold decoded: the store keeps them as JSON text
    ("null" for none). Text that is not JSON is returned as it is."""
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def shown_checks(store: Store, run_id: int) -> list[dict]:
    """A run's checks as the CLI prints them: values and thresholds decoded."""
    rows = store.query("select name, verdict, value, threshold, message from checks where run_id = ? "
                       "order by position, id", (run_id,))
    return [{**c, "value": stored_value(c["value"]), "threshold": stored_value(c["threshold"])} for c in rows]


def run_checks(store: Store, run_id: int) -> list[dict]:
    rows = store.query(
        "select position, name, verdict, value, threshold, message, details from checks "
        "where run_id = ? order by position, id",
        (run_id,),
    )
    for r in rows:
        try:  # noqa: SIM105 - a best-effort step: try/except keeps the skipped failure visible where it is
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
