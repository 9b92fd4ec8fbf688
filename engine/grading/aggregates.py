"""Leaderboard data: per-model and per-challenge summaries, head-to-head
records and the grade matrix, all on the overall grade.

Which grade fills a cell is :func:`engine.grading.grades.cell_grades`'s rule: one
grader's when ``grader`` is given, else a person's over a judge's over the
suite's, the newest of several of a kind (``CELL_RULE``); a grade on an answer
the workbench does not hold counts like any other, and is listed in ``no_answer``. Verdicts come from the hidden suite's latest finished run.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from itertools import combinations
from statistics import mean

from benchtui.grading.grades import CELL_RULE, OVERALL, Grade, answerless_cells, band, cell_grade_lists
from benchtui.records.coverage import summary
from benchtui.store import grades_sql, runs_sql
from benchtui.store.database import Store
from benchtui.store.judging import ran_out_of_time, stale_runs
from benchtui.verify.judged import not_judged, over

PASS = "pass"
DONE = "done"  # the runner's status for a run that finished with a verdict


def _latest_done(store: Store, column: str) -> list[dict]:
    """model, challenge and ``column`` of each answer's latest finished (``done``) run."""
    return runs_sql.latest_done_runs(store, f"model, challenge, {column}", DONE)


def current_verdicts(store: Store) -> dict[tuple[str, str], str]:
    """(model, challenge) -> verdict of the latest finished (``done``) run."""
    return {(r["model"], r["challenge"]): r["verdict"] for r in _latest_done(store, "verdict") if r["verdict"]}


def not_judged_cells(store: Store) -> dict[tuple[str, str], str]:
    """(model, challenge) -> why the latest finished run judged nothing ("skipped: no GPU"),
    for the runs that did not judge (engine/verify/judged.py)."""
    rows = _latest_done(store, "id, verdict, message")
    ran_out = ran_out_of_time(store, [r["id"] for r in rows if r["verdict"] == "timeout"])
    out = {}
    for r in rows:
        why = not_judged(r["verdict"], r["message"], ran_out.get(r["id"]))
        if why:
            out[(r["model"], r["challenge"])] = why
    return out


def stale_cells(store: Store) -> dict[tuple[str, str], str]:
    """(model, challenge) -> what changed in the answer's files since its latest finished run,
    for the verdicts on files no longer there (engine/store/judging.py)."""
    rows = _latest_done(store, "id")
    stale = stale_runs(store, [r["id"] for r in rows])
    return {(r["model"], r["challenge"]): stale[r["id"]] for r in rows if r["id"] in stale}


def current_messages(store: Store) -> dict[tuple[str, str], str]:
    """(model, challenge) -> the message of the latest finished run (its deciding check's, for a verdict not pass)."""
    return {(r["model"], r["challenge"]): r["message"] or "" for r in _latest_done(store, "message")}


def current_coverage(store: Store) -> dict[tuple[str, str], str]:
    """(model, challenge) -> "3 of 5 requirements met" of the latest finished run
    (engine/challenges/coverage.py; absent for runs recorded before coverage)."""
    if "coverage" not in runs_sql.run_columns(store):
        return {}
    return {(r["model"], r["challenge"]): summary(json.loads(r["coverage"]))
            for r in _latest_done(store, "coverage") if r["coverage"]}


@dataclass
class ModelSummary:
    model: str
    display_name: str
    attempted: int
    graded: int
    mean_points: float | None
    band: str
    best: str | None          # challenge id with the highest grade
    best_letter: str | None
    worst: str | None
    worst_letter: str | None
    verified: int             # attempted answers the hidden suite judged (a verdict that is not skipped, ...)
    passed: int
    pass_rate: float | None   # passed / verified
    rank: int | None = None   # 1 = best mean; ties share a rank
    not_judged: dict[str, int] = field(default_factory=dict)  # why the others were not judged: how many
    over: str = ""            # what the rate is over: "8 of 8 judged; 2 skipped: no GPU"


@dataclass
class ChallengeSummary:
    challenge: str
    title: str
    graded: int
    winners: list[str]        # every model with the top grade
    best_letter: str | None
    mean_points: float | None
    band: str
    passed: int
    verified: int
    not_judged: dict[str, int] = field(default_factory=dict)
    over: str = ""


@dataclass
class HeadToHead:
    model_a: str
    model_b: str
    wins: int                 # challenges where a's grade beats b's
    losses: int
    ties: int
    challenges: list[str]     # the challenges both have an overall grade on

    @property
    def record(self) -> str:
        return f"{self.wins}-{self.losses}-{self.ties}"

    @property
    def text(self) -> str:
        """'leads 4-3-1', 'trails 1-3-0' or 'level 2-2-1', from a's side; with
        nothing graded for both, that, in the dashboard's words."""
        if not self.challenges:
            return "no challenge graded for both"
        verb = "leads" if self.wins > self.losses else "trails" if self.wins < self.losses else "level"
        return f"{verb} {self.record}"


@dataclass
class Leaderboard:
    models: list[str]                     # ranked, best first
    display_names: dict[str, str]
    challenges: list[str]                 # in published order
    challenge_titles: dict[str, str]      # published display name per challenge
    matrix: dict[tuple[str, str], Grade]  # (model, challenge) -> shown grade
    verdicts: dict[tuple[str, str], str]
    model_summaries: list[ModelSummary]
    challenge_summaries: list[ChallengeSummary]
    head_to_head: list[HeadToHead]
    grader: str | None = None
    best_cells: set[tuple[str, str]] = field(default_factory=set)  # top grade per challenge
    # Cells more than one grader graded: every current grade, the shown one
    # (CELL_RULE) first.
    graded_by: dict[tuple[str, str], list[Grade]] = field(default_factory=dict)
    # Graded cells where the workbench holds no answer (grade set --allow-missing).
    no_answer: set[tuple[str, str]] = field(default_factory=set)
    # Ranked models whose folder is gone (renamed or removed since they were graded).
    gone: set[str] = field(default_factory=set)

    def shown_name(self, model: str) -> str:
        """A model's name as every table shows it: a folder that is gone says so."""
        name = self.display_names.get(model, model)
        return f"{name} {GONE_MARK}" if model in self.gone else name

    @property
    def shared_head_to_head(self) -> list[HeadToHead]:
        """The pairs with a challenge graded for both: the rest have no record to show."""
        return [h for h in self.head_to_head if h.challenges]

    def to_dict(self) -> dict:
        return {
            "grader": self.grader,
            "models": self.models,
            "display_names": self.display_names,
            "challenges": self.challenges,
            "challenge_titles": self.challenge_titles,
            "matrix": {f"{m}/{c}": g.display for (m, c), g in sorted(self.matrix.items())},
            "verdicts": {f"{m}/{c}": v for (m, c), v in sorted(self.verdicts.items())},
            "model_summaries": [_fields(s) for s in self.model_summaries],
            "challenge_summaries": [_fields(s) for s in self.challenge_summaries],
            "head_to_head": [{**_fields(h), "record": h.record, "text": h.text} for h in self.head_to_head],
            "cell_rule": CELL_RULE,
            "graded_by": {f"{m}/{c}": [{"grader": g.grader, "grader_kind": g.grader_kind, "grade": g.display,
                                        "shown": n == 0} for n, g in enumerate(rows)]
                          for (m, c), rows in sorted(self.graded_by.items())},
            "no_answer": [f"{m}/{c}" for m, c in sorted(self.no_answer)],
            "gone": sorted(self.gone),
        }


def _fields(obj) -> dict:
    """A flat dataclass as a dict, lists copied (``asdict`` deep-copies every
    value, seconds for 1,225 head-to-head records)."""
    return {f.name: list(v) if isinstance(v := getattr(obj, f.name), list) else v for f in fields(obj)}


def _names(store: Store, graded_models: set[str], graded_challenges: set[str]):
    model_rows = grades_sql.model_rows(store)
    display = {r["name"]: r["display_name"] or r["name"] for r in model_rows}
    models = [r["name"] for r in model_rows if r["present"] or r["name"] in graded_models]
    models += sorted(graded_models - set(models))
    challenge_rows = grades_sql.challenge_name_rows(store)
    titles = {r["id"]: _label(r) for r in challenge_rows}
    challenges = [r["id"] for r in challenge_rows]
    challenges += sorted(graded_challenges - set(challenges))
    return models, {m: display.get(m, m) for m in models}, challenges, {c: titles.get(c, c) for c in challenges}


def _label(row: dict) -> str:
    """The name published READMEs use (first display name), else the title."""
    try:
        shown = json.loads(row["display_names"] or "[]")
    except (TypeError, ValueError):
        shown = []
    return str(shown[0]) if shown else row["title"] or row["id"]


def _attempted(store: Store, matrix: dict[tuple[str, str], Grade]) -> set[tuple[str, str]]:
    """Answers present on disk, plus graded cells the scanner has no row for
    (grades imported for a workbench that does not hold those answers)."""
    known: dict[tuple[str, str], bool] = {}
    for r in grades_sql.answer_presences(store):
        known[(r["model"], r["challenge"])] = bool(r["present"]) and r["status"] != "no_answer"
    return {cell for cell, ok in known.items() if ok} | {cell for cell in matrix if cell not in known}


def _apart(cells, unjudged) -> dict[str, int]:
    out: dict[str, int] = {}
    for cell in cells:
        if cell in unjudged:
            out[unjudged[cell]] = out.get(unjudged[cell], 0) + 1
    return out


def model_summary(model: str, display: str, challenges: list[str], matrix, verdicts, attempted,
                  unjudged: dict | None = None) -> ModelSummary:
    mine = [c for c in challenges if (model, c) in attempted]
    # Every grade counts, one on an answer the workbench lacks too (as in the
    # challenge winners and head-to-head records; the exports mark those).
    graded = [(c, matrix[(model, c)]) for c in challenges if (model, c) in matrix]
    points = [g.points for _, g in graded]
    # Ties for best/worst go to the challenge listed first.
    best = max(graded, key=lambda cg: cg[1].points, default=None)
    worst = min(graded, key=lambda cg: cg[1].points, default=None)
    unjudged = unjudged or {}
    ran = [c for c in mine if (model, c) in verdicts]
    verified = [c for c in ran if (model, c) not in unjudged]  # a skipped run judged nothing
    passed = sum(1 for c in verified if verdicts[(model, c)] == PASS)
    apart = _apart([(model, c) for c in ran], unjudged)
    avg = mean(points) if points else None
    return ModelSummary(
        model=model, display_name=display, attempted=len(mine), graded=len(graded),
        mean_points=round(avg, 4) if avg is not None else None, band=band(avg),
        best=best[0] if best else None, best_letter=best[1].letter if best else None,
        worst=worst[0] if worst else None, worst_letter=worst[1].letter if worst else None,
        verified=len(verified), passed=passed,
        pass_rate=round(passed / len(verified), 4) if verified else None,
        not_judged=apart, over=over(passed, len(verified), apart) if ran else "",
    )


def _rank(summaries: list[ModelSummary]) -> list[ModelSummary]:
    ordered = sorted(summaries, key=lambda s: (s.mean_points is None, -(s.mean_points or 0), s.model))
    rank, previous = 0, object()
    for i, s in enumerate(ordered, start=1):
        if s.mean_points is None:
            continue
        if s.mean_points != previous:
            rank, previous = i, s.mean_points
        s.rank = rank
    return ordered


def _go_on() -> None:
    """The checkpoint of a computation nobody may stop."""


def head_to_head_records(models: list[str], challenges: list[str], matrix,
                         checkpoint: Callable[[], None] = _go_on) -> list[HeadToHead]:
    """One record per pair of models (in the given order), over the
    challenges both have a grade on; ``checkpoint()`` every 100 pairs."""
    # Points per model first: 50 models make 1,225 pairs over 200 challenges
    # (bench/scale.py), too many tuple-keyed lookups otherwise.
    points = {m: {c: matrix[(m, c)].points for c in challenges if (m, c) in matrix} for m in models}
    out = []
    for n, (a, b) in enumerate(combinations(models, 2)):
        if n % 100 == 0:
            checkpoint()
        pa, pb = points[a], points[b]
        shared = [c for c in pa if c in pb]  # (pa holds its challenges in the given order)
        wins = losses = 0
        for c in shared:  # one pass: three were a third of the leaderboard at 50 x 200
            x, y = pa[c], pb[c]
            if x > y:
                wins += 1
            elif x < y:
                losses += 1
        out.append(HeadToHead(a, b, wins, losses, len(shared) - wins - losses, shared))
    return out


GONE_MARK = "(folder gone)"


def _gone(store: Store, models: list[str]) -> set[str]:
    present = grades_sql.present_models(store)
    return {m for m in models if m not in present} if present else set()


def leaderboard(store: Store, *, grader: str | None = None,
                checkpoint: Callable[[], None] = _go_on) -> Leaderboard:
    """Everything the leaderboard screen and the Markdown export show.

    ``checkpoint()`` is called between steps of a few milliseconds each (at 50
    models x 200 challenges) and may raise to stop the computation: the
    dashboard's worker does once its screen is left, which it otherwise held
    the GIL against for the rest of ~0.3 s."""
    lists = cell_grade_lists(store, grader=grader, dimension=OVERALL, checkpoint=checkpoint)
    matrix = {cell: rows[0] for cell, rows in lists.items()}
    verdicts = current_verdicts(store)
    unjudged = not_judged_cells(store)
    checkpoint()
    models, display, challenges, titles = _names(
        store, {m for m, _ in matrix}, {c for _, c in matrix})
    attempted = _attempted(store, matrix)
    checkpoint()
    summaries = []
    for n, m in enumerate(models):
        if n % 10 == 0:
            checkpoint()
        summaries.append(model_summary(m, display[m], challenges, matrix, verdicts, attempted, unjudged))
    summaries = _rank(summaries)
    ranked = [s.model for s in summaries]

    challenge_summaries, best_cells = [], set()
    for n, c in enumerate(challenges):
        if n % 50 == 0:
            checkpoint()
        cells = [(m, matrix[(m, c)]) for m in ranked if (m, c) in matrix]
        top = max((g.points for _, g in cells), default=None)
        winners = [m for m, g in cells if g.points == top]
        best_cells |= {(m, c) for m in winners}
        pts = [g.points for _, g in cells]
        ran = [m for m in ranked if (m, c) in verdicts and (m, c) in attempted]
        apart = _apart([(m, c) for m in ran], unjudged)
        ran_all, ran = ran, [m for m in ran if (m, c) not in unjudged]
        passed = sum(1 for m in ran if verdicts[(m, c)] == PASS)
        challenge_summaries.append(ChallengeSummary(
            challenge=c, title=titles[c], graded=len(cells), winners=winners,
            best_letter=matrix[(winners[0], c)].letter if winners else None,
            mean_points=round(mean(pts), 4) if pts else None, band=band(mean(pts) if pts else None),
            passed=passed, verified=len(ran), not_judged=apart,
            over=over(passed, len(ran), apart) if ran_all else "",
        ))
    return Leaderboard(
        models=ranked, display_names=display, challenges=challenges, challenge_titles=titles,
        matrix=matrix, verdicts=verdicts, model_summaries=summaries,
        challenge_summaries=challenge_summaries,
        head_to_head=head_to_head_records(ranked, challenges, matrix, checkpoint),
        grader=grader, best_cells=best_cells,
        graded_by={cell: rows for cell, rows in lists.items() if len(rows) > 1},
        no_answer=answerless_cells(store, matrix),
        gone=_gone(store, ranked),
    )
