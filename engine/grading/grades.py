"""Grades: the rubric, letter and 0-100 scales, graders, append-only grades
and notes on answers.

Grades are keyed by (model, challenge) names like every graded thing in the
store, so a rescan never orphans them. Rows are never updated except to
mark one invalid: a new grade by the same grader on the same cell adds a
row that ``supersedes`` the previous one, and the *current* grade of a cell
is the newest row of that grader that has not been invalidated.
"""
from __future__ import annotations

import getpass
import json
import os
import re
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass

from benchtui.challenges.definition import CHALLENGE_IDS, normalise_name
from benchtui.store import grades_sql, transactions, transcripts_sql
from benchtui.store.database import Store, now_iso
from benchtui.text.suggest import suggest

RUBRIC_VERSION = "1"


class GradeError(ValueError):
    """A grade, grader, model, challenge or dimension the user got wrong;
    the message is one line for the user."""


# -- rubric -----------------------------------------------------------------
@dataclass(frozen=True)
class Dimension:
    id: str
    title: str
    description: str


DIMENSIONS: tuple[Dimension, ...] = (
    Dimension("correctness", "Correctness",
              "Does the code compute what the task asks, for every shape, dtype and edge case the "
              "prompt names, within the stated tolerances? Numerical stability counts here: an "
              "answer that overflows on large logits or loses precision in long reductions is not "
              "correct even when the happy path matches the reference."),
    Dimension("completeness", "Completeness",
              "Is every part of the task delivered: each required function, backend, mode and "
              "deliverable (benchmarks, write-up) the prompt asks for? Missing pieces, TODOs, "
              "placeholders and parts that silently fall back to a slower path count against it."),
    Dimension("code_quality", "Code quality",
              "Is the code readable and well organised: clear names, small functions, no dead or "
              "duplicated code, comments that explain why rather than what, and an interface a "
              "caller can use without reading the implementation?"),
    Dimension("analysis_depth", "Analysis depth",
              "Does the answer explain its design choices and their costs: memory traffic, "
              "arithmetic intensity, where the bottleneck is, why this blocking or fusion and not "
              "another? Claims should be backed by numbers the answer measured, not asserted."),
    Dimension("testing", "Testing",
              "Does the answer test itself against a trusted reference across shapes, dtypes and "
              "edge cases, with tolerances that mean something, and do those tests actually run "
              "and pass? Tests that cannot fail or only check shapes earn little."),
    Dimension("algorithmic_sophistication", "Algorithmic sophistication",
              "Does the answer use the right algorithm for the problem: online softmax, "
              "recomputation instead of storage, fused passes, numerically careful reductions, "
              "the asymptotically better method where one exists, rather than the first thing "
              "that works?"),
    Dimension("engineering_rigor", "Engineering rigor",
              "Is the work careful end to end: inputs validated, failure modes handled, timings "
              "taken with warm-up and many trials, results reproducible with seeds, no hidden "
              "state, and no claim in the write-up that the code does not support?"),
    Dimension("gpu_mapping", "GPU mapping",
              "How well does the computation map to the hardware: thread and block layout, "
              "coalesced memory access, shared memory and register use, occupancy, avoiding "
              "needless synchronisation and host-device copies? For CPU-only answers, how well "
              "the code would carry over to a GPU kernel."),
    Dimension("overall", "Overall",
              "The grader's single judgement of the answer as a whole, as a published benchmark "
              "would report it: weigh correctness first, then how complete, fast and well "
              "engineered the answer is. This is the grade the matrix, rankings and head-to-head "
              "records use."),
)
DIMENSION_IDS: tuple[str, ...] = tuple(d.id for d in DIMENSIONS)
OVERALL = "overall"


def find_dimension(name: str) -> Dimension:
    key = name.strip().lower().replace("-", "_").replace(" ", "_")
    for d in DIMENSIONS:
        if d.id == key:
            return d
    raise GradeError(f"unknown dimension {name!r}; use one of: {', '.join(DIMENSION_IDS)}")


# -- scales -----------------------------------------------------------------
LETTERS: tuple[str, ...] = ("A", "A-", "B+", "B", "B-", "C+", "C", "C-", "D+", "D", "D-", "F")
POINTS: dict[str, float] = {
    "A": 4.0, "A-": 3.7, "B+": 3.3, "B": 3.0, "B-": 2.7, "C+": 2.3,
    "C": 2.0, "C-": 1.7, "D+": 1.3, "D": 1.0, "D-": 0.7, "F": 0.0,
}
# Lowest 0-100 score that earns each letter; anything below 60 is F.
SCORE_FLOORS: tuple[tuple[float, str], ...] = (
    (93, "A"), (90, "A-"), (87, "B+"), (83, "B"), (80, "B-"), (77, "C+"),
    (73, "C"), (70, "C-"), (67, "D+"), (63, "D"), (60, "D-"),
)
A_RANGE = ("A", "A-")
BAND_WIDTH = 0.1  # a mean within this of a midpoint is shown as a band


def parse_letter(text: str) -> str:
    """'b+' -> 'B+'; en/em dashes and the minus sign count as '-'."""
    cleaned = text.strip().upper().replace("\u2212", "-").replace("\u2013", "-")
    if cleaned not in POINTS:
        raise GradeError(f"not a grade: {text!r}; use a letter A..F with optional +/- "
                         "(A, A-, B+ ... D-, F) or a 0-100 score")
    return cleaned


def score_to_letter(score: float) -> str:
    """Map a 0-100 score to the letter it stands for (93+ A ... below 60 F)."""
    for floor, letter in SCORE_FLOORS:
        if score >= floor:
            return letter
    return "F"


def points_to_letter(points: float) -> str:
    """The letter nearest to a mean in points."""
    return min(LETTERS, key=lambda letter: (abs(POINTS[letter] - points), -POINTS[letter]))


def band(points: float | None) -> str:
    """A mean shown as published READMEs do: the nearest letter, or 'A-/B+'
    when it falls within 0.1 of the midpoint between two adjacent letters."""
    if points is None:
        return "\u2014"
    for upper, lower in zip(LETTERS, LETTERS[1:]):
        midpoint = (POINTS[upper] + POINTS[lower]) / 2
        if abs(points - midpoint) <= BAND_WIDTH + 1e-9:
            return f"{upper}/{lower}"
    return points_to_letter(points)


@dataclass(frozen=True)
class GradeValue:
    """A grade as given: a letter, or a 0-100 score with the letter it maps to."""
    letter: str
    score: float | None = None

    @property
    def points(self) -> float:
        return POINTS[self.letter]

    @property
    def display(self) -> str:
        return self.letter if self.score is None else f"{_fmt_score(self.score)} ({self.letter})"


def _fmt_score(score: float) -> str:
    return str(int(score)) if float(score).is_integer() else f"{score:g}"


def parse_grade(text: str | float | int) -> GradeValue:
    """A letter ('B+') or a 0-100 score ('87', 87.5). Anything else: GradeError."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return _score_value(float(text), str(text))
    raw = str(text).strip()
    if re.fullmatch(r"\d+(\.\d+)?", raw):
        return _score_value(float(raw), raw)
    return GradeValue(parse_letter(raw))


def _score_value(score: float, raw: str) -> GradeValue:
    if not 0 <= score <= 100:
        raise GradeError(f"score out of range: {raw}; 0-100 scores only")
    return GradeValue(score_to_letter(score), score)


def is_a_range(letter: str | None) -> bool:
    return letter in A_RANGE


# -- graders ----------------------------------------------------------------
GRADER_KINDS = ("human", "judge", "suite")


@dataclass(frozen=True)
class Grader:
    id: int
    name: str
    kind: str
    created_at: str


def default_grader_name() -> str:
    """$BENCHTUI_GRADER, else the login name."""
    name = os.environ.get("BENCHTUI_GRADER", "").strip()
    if name:
        return name
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "unknown"


def get_grader(store: Store, name: str) -> Grader | None:
    row = grades_sql.grader_row(store, name)
    return Grader(**_pick(row, Grader)) if row else None


def ensure_grader(store: Store, name: str, kind: str = "human") -> Grader:
    """The grader with this name, created with ``kind`` if new."""
    name = name.strip()
    if not name:
        raise GradeError("a grader needs a name")
    if kind not in GRADER_KINDS:
        raise GradeError(f"unknown grader kind {kind!r}; use one of: {', '.join(GRADER_KINDS)}")
    found = get_grader(store, name)
    if found:
        return found
    with write_transaction(store):
        grades_sql.add_grader(store, name, kind, now_iso())
    found = get_grader(store, name)
    assert found is not None
    return found


def list_graders(store: Store) -> list[Grader]:
    return [Grader(**_pick(r, Grader)) for r in grades_sql.grader_rows(store)]


# -- names ------------------------------------------------------------------
def resolve_model(store: Store, name: str) -> str:
    """A model folder name from its folder name or display name."""
    rows = grades_sql.model_names(store)
    key = normalise_name(name)
    for row in rows:
        if row["name"] == name:
            return row["name"]
    for row in rows:
        if key and key in (normalise_name(row["name"]), normalise_name(row["display_name"] or "")):
            return row["name"]
    if not rows:
        raise GradeError(f"unknown model {name!r}; known: none (scan first)")
    raise GradeError(f"unknown model {name!r}; {suggest(name, [r['name'] for r in rows], 'known models')}")


# Published names of the standard challenges, for stores whose challenge
# table does not (yet) list them all.
PUBLISHED_NAMES: dict[str, tuple[str, ...]] = {
    "backwards": ("Layer Norm Backward", "Backwards Pass"), "fuse": ("Fused Softmax+TopK",),
    "kv": ("KV-Cache",), "beam_search": ("Beam Search",),
    "flash_attention": ("Flash Attn Forward", "Flash Attention Forward"),
    "flash_attention_bwd": ("Flash Attn Backward", "Flash Attention Backward"),
    "dflash_verify": ("DFlash", "DFlash Verify"), "ternary_training": ("Ternary Training",),
}


def challenge_names(store: Store) -> dict[str, list[str]]:
    """Challenge id -> every name it goes by (id, title, display names)."""
    out: dict[str, list[str]] = {cid: [cid, *PUBLISHED_NAMES.get(cid, ())] for cid in CHALLENGE_IDS}
    for row in grades_sql.challenge_name_rows(store):
        try:
            shown = json.loads(row["display_names"] or "[]")
        except (TypeError, ValueError):
            shown = []
        out[row["id"]] = [row["id"], row["title"] or "", *[str(s) for s in shown],
                          *PUBLISHED_NAMES.get(row["id"], ())]
    return out


def resolve_challenge(store: Store, name: str) -> str:
    """A challenge id from its id, title or any published display name."""
    key = normalise_name(name)
    names = challenge_names(store)
    for cid, aliases in names.items():
        if key and key in {normalise_name(a) for a in aliases if a}:
            return cid
    raise GradeError(f"unknown challenge {name!r}; {suggest(name, names, 'known challenges')}")


# -- grades -----------------------------------------------------------------
@dataclass(frozen=True)
class JudgedBy:
    """What a judge's grade rests on: the model called, the rubric's sha256, the mode."""
    model: str
    rubric_sha: str
    mode: str


@dataclass(frozen=True)
class Grade:
    id: int
    model: str
    challenge: str
    dimension: str
    letter: str
    score: float | None
    points: float
    grader: str
    grader_kind: str
    note: str | None
    rubric_version: str | None
    created_at: str
    supersedes: int | None
    invalidated_at: str | None
    invalid_reason: str | None
    source: str | None
    source_key: str | None
    # what a grade made by `benchtui judge` rests on (None on people's and imported grades)
    judge_model: str | None = None
    rubric_sha: str | None = None
    judge_mode: str | None = None

    @property
    def display(self) -> str:
        return GradeValue(self.letter, self.score).display

    @property
    def valid(self) -> bool:
        return self.invalidated_at is None

    def to_dict(self) -> dict:
        return asdict(self)


# A Grade's fields in order, read as tuples: dicts (and picking a Grade's fields out
# of each) were two thirds of reading 20,000 grades (the leaderboard at 50 x 200).
_GRADE_FIELDS = tuple(Grade.__dataclass_fields__)


def _grades(batches) -> list[Grade]:
    """Grades from batches of rows of _GRADE_FIELDS (engine/store/grades_sql.py)."""
    return [Grade(*row) for rows in batches for row in rows]


def _pick(row: dict, cls) -> dict:
    return {k: row.get(k) for k in cls.__dataclass_fields__}


@contextmanager
def write_transaction(store: Store) -> Iterator[None]:
    """One write transaction that takes the write lock up front, so a grade
    waits for a running benchmark's transaction (busy_timeout) instead of
    failing on a lock upgrade; a failure rolls back and says so in one line.
    Inside a transaction the caller holds, it adds nothing."""
    try:
        with transactions.write_transaction(store):
            yield
    except transactions.StoreBusy as exc:
        raise GradeError(f"store is busy, nothing written: {exc}") from exc


def set_grade(
    store: Store, model: str, challenge: str, grade: str | float | GradeValue, *,
    dimension: str = OVERALL, grader: str | None = None, grader_kind: str = "human",
    note: str | None = None, source: str = "manual", source_key: str | None = None,
    created_at: str | None = None, judged: JudgedBy | None = None,
) -> Grade:
    """Record a grade; it supersedes the same grader's current grade on the cell.

    ``model`` and ``challenge`` may be folder/id or display names. Raises
    GradeError (nothing written) for an unknown name or a bad grade.
    ``judged``: the judge model, rubric and mode of a grade `benchtui judge` made.
    """
    value = grade if isinstance(grade, GradeValue) else parse_grade(grade)
    dim = find_dimension(dimension).id
    model_name = resolve_model(store, model)
    challenge_id = resolve_challenge(store, challenge)
    who = ensure_grader(store, grader or default_grader_name(), grader_kind)
    try:
        with write_transaction(store):
            previous = current_grade(store, model_name, challenge_id, dim, grader=who.name)
            new_id = grades_sql.insert_grade(store, {
                "model": model_name, "challenge": challenge_id, "dimension": dim, "letter": value.letter,
                "score": value.score, "points": value.points, "grader_id": who.id, "note": note or None,
                "rubric_version": RUBRIC_VERSION, "created_at": created_at or now_iso(),
                "supersedes": previous.id if previous else None, "source": source, "source_key": source_key,
                "judge_model": judged.model if judged else None, "rubric_sha": judged.rubric_sha if judged else None,
                "judge_mode": judged.mode if judged else None})
    except sqlite3.DatabaseError as exc:
        raise GradeError(f"grade not stored: {exc}") from exc
    return get_grade(store, new_id)


def get_grade(store: Store, grade_id: int) -> Grade:
    rows = _grades(grades_sql.grade_rows(store, _GRADE_FIELDS, grade_id=grade_id))
    if not rows:
        raise GradeError(f"no grade with id {grade_id}")
    return rows[0]


def invalidate_grade(store: Store, grade_id: int, reason: str) -> Grade:
    """Mark a grade invalid, keeping the row; the grader's previous valid grade
    on the cell (if any) becomes current again."""
    if not reason.strip():
        raise GradeError("say why the grade is invalid")
    found = get_grade(store, grade_id)
    if not found.valid:
        raise GradeError(f"grade {grade_id} is already invalid: {found.invalid_reason}")
    with write_transaction(store):
        grades_sql.invalidate_grade(store, grade_id, now_iso(), reason.strip())
    return get_grade(store, grade_id)


def current_grades(
    store: Store, *, grader: str | None = None, dimension: str | None = OVERALL,
    model: str | None = None, challenge: str | None = None, checkpoint: Callable[[], None] | None = None,
) -> list[Grade]:
    """The current grade of every (model, challenge, dimension, grader) cell:
    the newest valid row. Filters narrow it; ``dimension=None`` means all."""
    return _grades(grades_sql.current_grade_rows(store, _GRADE_FIELDS, grader=grader, dimension=dimension,
                                                 model=model, challenge=challenge, checkpoint=checkpoint))


def current_grade(
    store: Store, model: str, challenge: str, dimension: str = OVERALL, *, grader: str | None = None,
) -> Grade | None:
    """One cell's current grade: the given grader's, or else the preferred one
    (see :func:`cell_grades`)."""
    rows = current_grades(store, grader=grader, dimension=dimension, model=model, challenge=challenge)
    return _preferred(rows)


_KIND_RANK = {"human": 0, "judge": 1, "suite": 2}
# Which grade a cell shows when several graders graded it: the matrix, the
# leaderboard, the exports and the dashboard all follow it, and say so.
CELL_RULE = ("a person's grade if there is one, else a judge's, else the suite's; "
             "of several graders of the same kind, the newest grade")


def _rank(g: Grade) -> tuple[int, int]:
    # A person's grade outranks a judge's, a judge's the suite's; then newest.
    return (_KIND_RANK.get(g.grader_kind, 3), -g.id)


def _preferred(rows: list[Grade]) -> Grade | None:
    return min(rows, key=_rank) if rows else None


def shown_grade(rows: list[Grade]) -> Grade | None:
    """Of one cell's current grades (one dimension), the one :data:`CELL_RULE` picks."""
    return _preferred(rows)


def source_words(source: str | None) -> str:
    """Where a grade came from: 'README.md' (an import), 'by hand'."""
    if source and source.startswith("import:"):
        return source[len("import:"):]
    return "by hand" if source in (None, "manual") else source


def cell_grade_lists(
    store: Store, *, grader: str | None = None, dimension: str = OVERALL,
    checkpoint: Callable[[], None] | None = None,
) -> dict[tuple[str, str], list[Grade]]:
    """(model, challenge) -> every grader's current grade, the one the cell
    shows (:data:`CELL_RULE`) first."""
    by_cell: dict[tuple[str, str], list[Grade]] = {}
    for g in current_grades(store, grader=grader, dimension=dimension, checkpoint=checkpoint):
        by_cell.setdefault((g.model, g.challenge), []).append(g)
    if checkpoint is not None:
        checkpoint()
    for rows in by_cell.values():
        if len(rows) > 1:
            rows.sort(key=_rank)
    return by_cell


def cell_grades(
    store: Store, *, grader: str | None = None, dimension: str = OVERALL,
    checkpoint: Callable[[], None] | None = None,
) -> dict[tuple[str, str], Grade]:
    """(model, challenge) -> the grade shown in the matrix for ``dimension``.

    With ``grader``, that grader's current grades only. Without, each cell
    shows a person's grade if any, else a judge's, else the suite's; the
    newest wins within a kind (:data:`CELL_RULE`).
    """
    return {cell: rows[0] for cell, rows in
            cell_grade_lists(store, grader=grader, dimension=dimension, checkpoint=checkpoint).items()}


def missing_answer(store: Store, model: str, challenge: str) -> str | None:
    """Why the workbench holds no answer to grade for (model, challenge), in
    one line; None when it holds one."""
    row = grades_sql.answer_presence(store, model, challenge)
    if not row or not row["present"]:
        return f"{model} has no folder for {challenge}"
    if row["status"] == "no_answer":
        return f"{model}/{challenge} holds no answer (only the prompt)"
    return None


def answerless_cells(store: Store, cells) -> set[tuple[str, str]]:
    """Those of ``cells`` (model, challenge) with no answer in the workbench: graded all
    the same (``grade set --no-answer``), or of a model folder that is gone (renamed or
    removed since; ``benchtui model move``). Nothing before a scan has found a model."""
    present_models = grades_sql.present_models(store)
    if not present_models:
        return set()
    answers = {(r["model"], r["challenge"]): bool(r["present"]) and r["status"] != "no_answer"
               for r in grades_sql.answer_presences(store)}
    return {(m, c) for m, c in cells if m not in present_models or not answers.get((m, c), False)}


def grade_history(
    store: Store, model: str, challenge: str, dimension: str | None = None,
) -> list[Grade]:
    """Every row for the answer, invalid ones included, oldest first."""
    return _grades(grades_sql.grade_rows(store, _GRADE_FIELDS, model=model, challenge=challenge, dimension=dimension))


def all_grades(store: Store, *, include_invalid: bool = True) -> list[Grade]:
    return _grades(grades_sql.grade_rows(store, _GRADE_FIELDS, include_invalid=include_invalid))


# -- notes ------------------------------------------------------------------
@dataclass(frozen=True)
class Note:
    id: int
    model: str
    challenge: str
    relpath: str | None
    line: int | None
    transcript: str | None
    entry: int | None
    author: str
    text: str
    created_at: str

    def to_dict(self) -> dict:
        return asdict(self)


def add_note(
    store: Store, model: str, challenge: str, text: str, *, relpath: str | None = None,
    line: int | None = None, transcript: str | None = None, entry: int | None = None,
    author: str | None = None,
) -> Note:
    """A note on an answer, optionally anchored to a file line or a transcript entry."""
    if not text.strip():
        raise GradeError("a note needs some text")
    if line is not None and relpath is None:
        raise GradeError("a line number needs a file (relpath)")
    if entry is not None and transcript is None:
        raise GradeError("an entry number needs a transcript")
    model_name = resolve_model(store, model)
    challenge_id = resolve_challenge(store, challenge)
    if relpath is not None:
        relpath, line = _note_file(store, model_name, challenge_id, relpath, line)
    if transcript is not None:
        transcript, entry = _note_transcript(store, model_name, challenge_id, transcript, entry)
    with write_transaction(store):
        note_id = grades_sql.insert_note(store, {
            "model": model_name, "challenge": challenge_id, "relpath": relpath, "line": line,
            "transcript": transcript, "entry": entry, "author": author or default_grader_name(),
            "text": text.strip(), "created_at": now_iso()})
    row = grades_sql.note_row(store, note_id)
    return Note(**_pick(row, Note))


def _inside(model: str, challenge: str, path: str) -> str:
    """A path as the answer folder's files are indexed: relative, '/'-separated
    ('demo-careful/kv/cache.py' and './cache.py' both -> 'cache.py')."""
    path = path.strip().replace("\\", "/")
    for prefix in (f"models/{model}/{challenge}/", f"{model}/{challenge}/", "./"):
        if path.startswith(prefix):
            path = path[len(prefix):]
    return path


def _answer_id(store: Store, model: str, challenge: str) -> int:
    row = grades_sql.answer_presence(store, model, challenge)
    if not row or not row["present"]:
        raise GradeError(f"{model} has no folder for {challenge}")
    return row["id"]


def _note_file(store: Store, model: str, challenge: str, relpath: str, line: int | None) -> tuple[str, int | None]:
    """The file and line a note anchors to, checked against the answer's indexed files."""
    path = _inside(model, challenge, relpath)
    rows = grades_sql.file_lines(store, _answer_id(store, model, challenge), path)
    if not rows:
        raise GradeError(f"no file {relpath!r} in {model}/{challenge} (`benchtui show {model} {challenge}` lists them)")
    if line is not None:
        lines = rows[0]["lines"]
        if line < 1:
            raise GradeError(f"line {line}: line numbers start at 1")
        if lines is None:
            raise GradeError(f"{path} has no lines to point at (not a text file)")
        if line > max(lines, 1):
            raise GradeError(f"line {line}: {path} has {lines} lines")
    return path, line


def _note_transcript(store: Store, model: str, challenge: str, transcript: str,
                     entry: int | None) -> tuple[str, int | None]:
    """The transcript and entry a note anchors to, checked against the index."""
    path = _inside(model, challenge, transcript)
    found = grades_sql.transcript_id(store, _answer_id(store, model, challenge), path)
    if found is None:
        raise GradeError(f"no transcript {transcript!r} in {model}/{challenge} "
                         f"(`benchtui show {model} {challenge}` lists them)")
    if entry is not None:
        low, high = transcripts_sql.entry_span(store, found)
        if low is None:
            raise GradeError(f"{path} has no entries indexed; `benchtui scan` indexes them")
        if not low <= entry <= high:
            raise GradeError(f"entry {entry}: {path} has entries {low} to {high}")
    return path, entry


def notes_for(store: Store, model: str, challenge: str) -> list[Note]:
    return [Note(**_pick(r, Note)) for r in grades_sql.note_rows(store, model, challenge)]


def all_notes(store: Store) -> list[Note]:
    """Every note, oldest first (exports)."""
    return [Note(**_pick(r, Note)) for r in grades_sql.note_rows(store)]
