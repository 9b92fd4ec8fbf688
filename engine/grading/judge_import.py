"""Import judge grades from the Markdown that benchmark READMEs publish.

Forms understood:
- a grade matrix: challenges as rows, models as columns (or the transpose),
  cells like ``B+``, ``**A-**``, ``A (1st)``, ``B- (4th=)``, ``—`` (no entry);
- a scoreboard of 0-100 scores (``82``, ``82/100``) in the same shape; a table
  of numbers is only read as grades when its header, or the nearest heading
  that says what it holds, speaks of scores, grades, ratings or a judge and
  not of times, speed or memory, so timing tables are never mistaken for
  grades; average rows are skipped;
- scores by dimension for one challenge: dimensions as rows and models as
  columns (``| **Correctness** | 85 | 95/100 |``), or one row per model with
  dimension columns (``| Model | Steps | Loss | Grade |``; of a Score and a
  Grade column the Grade is taken), or one model's dimensions as rows with one
  Score column under a heading naming the model (``### 6.1 GLM-5 Score:
  72/100`` then ``| Category | Weight | Score |``; points out of a Max column
  are not 0-100 scores and are not read). A column header may name the model
  and what it holds (``MiniMax-M2.7 Score``). The challenge is the table's
  challenge column, else the one the nearest heading naming one names; a
  heading naming several is not guessed from. Labels map to benchtui's
  dimensions (``Depth of Analysis`` -> analysis_depth, ``Tests/Demos`` ->
  testing); others are listed as not imported;
- a "models tested" table (``| glm5/ | GLM-5 | Z.ai |``), which maps display
  names to folders for the rest of the file; a name with its folder in
  parentheses (``GLM-5 (glm5)``) maps to that folder;
- per-answer sections: a heading naming the model and file, then a line
  ``Grade: B+`` (and optionally ``Correctness: A-`` or ``- Depth of Analysis:
  82/100`` style lines); or the grade in the heading itself (``### GLM-5 —
  Grade: A-``, ``### GLM-5 Score: 72/100``), which stands only where no table
  or ``Grade:`` line grades the cell (a difference is listed).

Fenced code blocks are skipped. Where a file grades a cell twice, the grade on
the later line is used and the difference listed. A file that yields no grade
says why (``nothing_found``).

Who graded: a line ``Judge: NAME`` (or ``Grader:``/``Graded by:``) names the
judge for everything after it; ``--grader`` names it where the file does not.

Names map to folders through the file's models table and the store's display
names, then a normalised match, then the user's alias table, then a close
fuzzy match, then a unique prefix (``MiniMax`` -> ``minimax-m2.7`` when no
other model's folder or table name starts with it), then the name without a
parameter count (``Qwen3.6-27B`` -> ``qwen36``); fuzzy, alias, prefix and
size-suffix mappings are listed under ``mapped`` for review, never silent. What does not
map is listed.
"""
from __future__ import annotations

import difflib
import re
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path

from benchtui.challenges.definition import normalise_name
from benchtui.grading.grades import (
    DIMENSION_IDS,
    OVERALL,
    GradeError,
    GradeValue,
    answerless_cells,
    challenge_names,
    current_grade,
    ensure_grader,
    get_grader,
    parse_grade,
    set_grade,
    source_words,
    write_transaction,
)
from benchtui.store import grades_sql
from benchtui.store.database import Store, now_iso

NO_ENTRY = {"", "\u2014", "\u2013", "-", "--", "n/a", "na", "none", "\u00b7", "x", "\u2715", "\u2717",
            "no submission", "not submitted", "dnf"}
_EMPHASIS = re.compile(r"(\*\*|__|\*|`|~~)")
_CELL_GRADE = re.compile(r"^(?P<g>[A-DF][+\-\u2212\u2013]?|\d{1,3}(?:\.\d+)?)(?:\s*/\s*100)?(?:\s*\(.*\))?"
                         r"\s*[\u2713\u2714\u2605\u2606\u2020*]*$", re.I)
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_JUDGE = re.compile(r"^(?:[-*>]\s*)?(?:judge|grader|graded by)\s*:\s*(?P<name>.+?)\s*$", re.I)
_GRADE_LINE = re.compile(r"^(?:[-*>]\s*)?(?P<label>(?:overall\s+)?grade|[a-z][a-z /_-]{2,40})\s*:\s*(?P<value>.+?)\s*$", re.I)
_HEADING_GRADE = re.compile(r"^(?P<name>.+?)\s+(?P<label>(?:overall\s+)?(?:score|grade))\s*:\s*(?P<value>\S.*?)\s*$",
                            re.I)
_PATH = re.compile(r"[\w.\-]+(?:/[\w.\-]*)+")
_SCORE_CONTEXT = re.compile(r"score|grade|rating|judge|points", re.I)
_MEASURE_CONTEXT = re.compile(r"tim(e|ing)|latency|speed|throughput|memory|bandwidth|\bms\b|seconds|perplexity|loss",
                              re.I)
FUZZY_CUTOFF = 0.85
# A parameter count a judge appends to a model's name ("Qwen3.6-27B", "Llama 3 70b").
_SIZE_SUFFIX = re.compile(r"[\s_-]+\d+(?:\.\d+)?[bm]$", re.I)
# A column header that names a model and what the column holds ("MiniMax-M2.7 Score").
_SCORE_WORD = re.compile(r"[\s_-]+(?:score|grade)s?$", re.I)
# How judges label benchtui's dimensions (keys as _dimension_key writes them).
DIMENSION_WORDS = {
    "grade": OVERALL, "overall_grade": OVERALL, "score": OVERALL, "overall_score": OVERALL,
    "depth_of_analysis": "analysis_depth", "tests_demos": "testing", "tests_benchmarks": "testing",
    "gpu_mapping_explanation": "gpu_mapping",
}
SUMMARY_ROWS = {"average", "mean", "total", "sum", "avg"}


class ImportError_(GradeError):
    """A file that cannot be imported; one line for the user."""


@dataclass
class ParsedGrade:
    model: str          # as written in the file
    challenge: str
    value: GradeValue
    grader: str | None
    form: str           # matrix | scoreboard | section
    line: int
    dimension: str = OVERALL


@dataclass
class ParsedDoc:
    grades: list[ParsedGrade] = field(default_factory=list)
    models_table: dict[str, str] = field(default_factory=dict)   # normalised display -> folder
    problems: list[str] = field(default_factory=list)
    unmapped: list[str] = field(default_factory=list)            # names seen in tables that map to nothing
    passed_over: list[str] = field(default_factory=list)         # tables that look graded but gave nothing, and why


@dataclass
class ImportResult:
    imported: int = 0
    skipped_existing: int = 0
    unmapped: list[str] = field(default_factory=list)
    mapped: list[dict] = field(default_factory=list)   # non-obvious mappings, for review
    problems: list[str] = field(default_factory=list)
    graders: list[str] = field(default_factory=list)
    # Each grade imported (or, in a dry run, that would be), with the grade it
    # supersedes: {model, challenge, dimension, grade, grader, line, supersedes}.
    grades: list[dict] = field(default_factory=list)
    # Grades of the same judge from another source (another file, or set by
    # hand) that this import replaces on the matrix: one line each.
    superseded: list[str] = field(default_factory=list)
    kept: int = 0                       # cells left as they were (keep_existing)
    no_answer: list[str] = field(default_factory=list)  # graded cells the workbench holds no answer for
    nothing_found: str | None = None    # why a file yielded no grade at all

    def to_dict(self) -> dict:
        return {"imported": self.imported, "skipped_existing": self.skipped_existing,
                "unmapped": self.unmapped, "mapped": self.mapped, "problems": self.problems,
                "graders": self.graders, "grades": self.grades, "superseded": self.superseded,
                "kept": self.kept, "nothing_found": self.nothing_found, "no_answer": self.no_answer}


# -- aliases ----------------------------------------------------------------
ALIAS_KINDS = ("model", "challenge")


def add_alias(store: Store, kind: str, alias: str, target: str) -> None:
    """Map ``alias`` (as a judge spells it) to a model folder or challenge id."""
    if kind not in ALIAS_KINDS:
        raise GradeError(f"alias kind must be model or challenge, not {kind!r}")
    if not alias.strip():
        raise GradeError("an alias needs a name")
    if kind == "model":
        if not grades_sql.has_model(store, target):
            raise GradeError(f"unknown model folder {target!r}")
    elif target not in challenge_names(store):
        raise GradeError(f"unknown challenge id {target!r}")
    with write_transaction(store):
        grades_sql.add_alias(store, kind, normalise_name(alias), target, now_iso())


def list_aliases(store: Store) -> list[dict]:
    return grades_sql.alias_rows(store)


# -- name mapping -----------------------------------------------------------
class NameMapper:
    """Maps names found in a file to model folders and challenge ids."""

    def __init__(self, store: Store, models_table: dict[str, str] | None = None):
        rows = grades_sql.model_names(store)
        self.models = {r["name"] for r in rows}
        self.model_names: dict[str, str] = {}     # normalised name -> folder
        for r in rows:
            self.model_names.setdefault(normalise_name(r["name"]), r["name"])
            if r["display_name"]:
                self.model_names.setdefault(normalise_name(r["display_name"]), r["name"])
        self.models_table = dict(models_table or {})
        self.challenge_names: dict[str, str] = {}
        for cid, names in challenge_names(store).items():
            for n in names:
                if n:
                    self.challenge_names.setdefault(normalise_name(n), cid)
        self.aliases = {(r["kind"], r["alias"]): r["target"] for r in list_aliases(store)}
        self.log: dict[tuple[str, str], tuple[str | None, str]] = {}

    def model(self, raw: str) -> str | None:
        return self._map("model", raw)

    def challenge(self, raw: str) -> str | None:
        return self._map("challenge", raw)

    def _map(self, kind: str, raw: str) -> str | None:
        key = (kind, raw)
        if key not in self.log:
            self.log[key] = self._lookup(kind, raw)
        return self.log[key][0]

    def _lookup(self, kind: str, raw: str) -> tuple[str | None, str]:
        norm = normalise_name(clean_name(raw))
        if not norm:
            return None, "empty"
        names = self.model_names if kind == "model" else self.challenge_names
        if kind == "model":
            named = re.fullmatch(r"(.+?)\s*\(\s*([\w.\-]+)/?\s*\)", clean_name(raw))  # "GLM-5 (glm5)"
            if named and named.group(2) in self.models:
                return named.group(2), "name"
            folder = self.models_table.get(norm)
            if folder in self.models:
                return folder, "models table"
            if folder is not None:
                return None, f"models table names {folder}/, not in this workbench"
        if norm in names:
            return names[norm], "name"
        bare = re.sub(r"(grade|score)$", "", norm)  # "Beam Search Grade", "MiniMax-M2.7 Score"
        if bare in names:
            return names[bare], "name"
        if kind == "model" and bare != norm and self.models_table.get(bare) in self.models:
            return self.models_table[bare], "models table"
        if (kind, norm) in self.aliases:
            return self.aliases[(kind, norm)], "alias"
        close = difflib.get_close_matches(norm, list(names), n=2, cutoff=FUZZY_CUTOFF)
        targets = {names[c] for c in close}
        if len(targets) == 1:
            return targets.pop(), "fuzzy"
        if kind == "model":
            target = self._unique_prefix(normalise_name(_SCORE_WORD.sub("", clean_name(raw))))
            if target is not None:
                return target, "prefix"
            bare = _SIZE_SUFFIX.sub("", _SCORE_WORD.sub("", clean_name(raw)))  # "Qwen3.6-27B" -> "Qwen3.6"
            if bare != clean_name(raw) and normalise_name(bare) in names:
                return names[normalise_name(bare)], "size suffix"
        return None, "no match"

    def _unique_prefix(self, norm: str) -> str | None:
        """The one model whose folder or table name starts with ``norm``
        ("MiniMax" -> minimax-m2.7), else None (none, or several)."""
        if len(norm) < 3:
            return None
        names = {**self.model_names, **{k: v for k, v in self.models_table.items() if v in self.models}}
        targets = {folder for name, folder in names.items() if name.startswith(norm)}
        return targets.pop() if len(targets) == 1 else None

    def reviewed(self) -> list[dict]:
        """Mappings a person should check: fuzzy and alias ones."""
        return [{"kind": k, "name": raw, "to": target, "how": how}
                for (k, raw), (target, how) in sorted(self.log.items())
                if target is not None and how in ("fuzzy", "alias", "prefix", "size suffix")]


def clean_name(text: str) -> str:
    """A table header or cell as a name: no emphasis, links or trailing notes."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # [name](link) -> name
    text = _EMPHASIS.sub("", text).strip()
    return text.rstrip("/").strip()


def _dimension_key(label: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", clean_name(label).lower()).strip("_")


def dimension_of(label: str) -> str | None:
    """The benchtui dimension a judge's label names ("Depth of Analysis" ->
    analysis_depth, "Grade" -> overall), else None."""
    key = _dimension_key(label)
    return key if key in DIMENSION_IDS else DIMENSION_WORDS.get(key)


def parse_cell(text: str) -> GradeValue | None:
    """A matrix or scoreboard cell: a GradeValue, None for 'no entry'.
    Raises GradeError for a cell that is neither."""
    cleaned = _EMPHASIS.sub("", text).strip()
    if cleaned.lower() in NO_ENTRY:
        return None
    match = _CELL_GRADE.match(cleaned)
    if not match:
        raise GradeError(f"not a grade: {text.strip()!r}")
    return parse_grade(match.group("g"))


# -- Markdown structure -------------------------------------------------------
def split_row(line: str) -> list[str]:
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    return [c.replace("\\|", "|").strip() for c in re.split(r"(?<!\\)\|", body)]


def _is_separator(cells: list[str]) -> bool:
    return bool(cells) and all(re.fullmatch(r":?-{2,}:?", c.strip()) for c in cells if c.strip())


@dataclass
class _Table:
    line: int                      # 1-based line of the header
    header: list[str]
    rows: list[tuple[int, list[str]]]
    grader: str | None
    headings: tuple[str, ...]      # enclosing headings, outermost first


def _scan(text: str, default_grader: str | None):
    """Tables and per-answer sections, each with the grader in force there."""
    lines = text.splitlines()
    tables: list[_Table] = []
    sections: list[ParsedGrade] = []
    problems: list[str] = []
    headings: list[tuple[int, str]] = []     # stack of (level, text)
    grader = default_grader
    fence: str | None = None  # inside a fenced code block: "# comment" is no heading, "x: 1" no grade
    i = 0
    while i < len(lines):
        raw = lines[i]
        stripped = raw.strip()
        opened = re.match(r"(`{3,}|~{3,})", stripped)
        if fence is not None or opened:
            if fence is None:
                fence = opened.group(1)
            elif stripped.startswith(fence) and not stripped[len(fence):].strip(fence[0]).strip():
                fence = None
            i += 1
            continue
        heading = _HEADING.match(stripped)
        if heading:
            level, title = len(heading.group(1)), heading.group(2)
            headings = [h for h in headings if h[0] < level] + [(level, title)]
            graded = _HEADING_GRADE.match(_EMPHASIS.sub("", title))  # "### 6.1 MiniMax-M2.7 Score: **58/100**"
            if graded:
                _section_grade(graded, headings, grader, i + 1, sections, problems, form="heading")
        plain = _EMPHASIS.sub("", _HEADING.sub(r"\2", stripped)).strip()
        judge = _JUDGE.match(plain)
        if judge:
            grader = judge.group("name").strip()
            i += 1
            continue
        if stripped.startswith("|"):
            start, block = i, []
            while i < len(lines) and lines[i].strip().startswith("|"):
                block.append((i + 1, split_row(lines[i])))
                i += 1
            if len(block) >= 2 and _is_separator(block[1][1]):
                tables.append(_Table(start + 1, block[0][1], block[2:], grader,
                                     tuple(title for _, title in headings)))
            continue
        if not heading:
            found = _GRADE_LINE.match(plain)
            if found and headings:
                _section_grade(found, headings, grader, i + 1, sections, problems)
        i += 1
    return tables, sections, problems


def _section_grade(match, headings, grader, line_no, out: list[ParsedGrade], problems: list[str],
                   form: str = "section") -> None:
    dim = dimension_of(match.group("label"))
    if dim is None:
        return  # an ordinary "Something: text" line
    words = match.group("value").split()
    try:
        value = parse_cell(words[0].rstrip(".,;") if words else "")
    except GradeError:
        problems.append(f"line {line_no}: not a grade: {match.group('value')!r}")
        return
    if value is None:
        return
    # The heading names model and file; parent headings may name either.
    titles = " / ".join(t for _, t in headings)
    out.append(ParsedGrade(titles, titles, value, grader, form, line_no, dim))


# -- parsing ------------------------------------------------------------------
def _models_table(table: _Table) -> dict[str, str] | None:
    """``| glm5/ | GLM-5 | Z.ai |`` rows: display name -> folder."""
    folder_rows = [cells for _, cells in table.rows if cells and re.fullmatch(r"[\w.\-]+/", clean_name(cells[0]) + "/")
                   and _EMPHASIS.sub("", cells[0]).strip().endswith("/")]
    if not folder_rows or len(folder_rows) < max(1, len(table.rows) // 2):
        return None
    out = {}
    for cells in folder_rows:
        folder = clean_name(cells[0])
        out[normalise_name(folder)] = folder
        if len(cells) > 1 and clean_name(cells[1]):
            out[normalise_name(clean_name(cells[1]))] = folder
    return out


def _heading_challenge(table: _Table, mapper: NameMapper) -> str | None:
    """The challenge the nearest heading naming one names ("## 2. KV-Cache
    System"); None where that heading names several (a summary's title)."""
    names = {**mapper.challenge_names, **{a: t for (k, a), t in mapper.aliases.items() if k == "challenge"}}
    for title in reversed(table.headings):
        text = normalise_name(clean_name(title))
        found = {names[n] for n in names if len(n) >= 2 and n in text}
        found = {c for c in found if not any(c != o and c in o for o in found)}  # flash_attention in flash_attention_bwd
        if found:
            return found.pop() if len(found) == 1 else None
    return None


def _summary_row(cell: str) -> bool:
    """An average or overall row under a table of challenges: not a challenge."""
    name = clean_name(cell)
    return name.lower() in SUMMARY_ROWS or dimension_of(name) == OVERALL


def _dimension_columns(col_names: list[str]) -> set[int]:
    """1-based columns that name a dimension; of a "Score" and a "Grade"
    column (both overall), the judge's letter column is the grade."""
    cols = {i: dimension_of(n) for i, n in enumerate(col_names, start=1) if dimension_of(n)}
    graded = {i for i, n in enumerate(col_names, start=1) if _dimension_key(n) in ("grade", "overall_grade")}
    if graded:
        cols = {i: d for i, d in cols.items() if d != OVERALL or i in graded}
    return set(cols)


def _score_column(col_names: list[str]) -> int | None:
    """The one 1-based column headed Score or Grade, else None."""
    found = [i for i, n in enumerate(col_names, start=1) if _dimension_key(n) in ("score", "grade")]
    return found[0] if len(found) == 1 else None


def _heading_model(table: _Table, mapper: NameMapper) -> str | None:
    """The one model the nearest heading naming a model names."""
    names = {**mapper.model_names, **{k: v for k, v in mapper.models_table.items() if v in mapper.models},
             **{a: t for (k, a), t in mapper.aliases.items() if k == "model"}}
    for title in reversed(table.headings):
        text = normalise_name(clean_name(title))
        found = {names[n] for n in names if len(n) >= 3 and n in text}
        if found:
            return found.pop() if len(found) == 1 else None
    return None


def _challenge_column(table: _Table, mapper: NameMapper) -> int | None:
    """The column whose cells name challenges, in a table of one row per answer."""
    for col in range(1, len(table.header)):
        cells = [row[col] for _, row in table.rows if col < len(row)]
        if cells and sum(mapper.challenge(c) is not None for c in cells) * 2 >= len(cells):
            return col
    return None


def _dimension_table(table: _Table, mapper: NameMapper, doc: ParsedDoc) -> bool:
    """Scores by dimension: dimensions as rows and models as columns (a
    head-to-head summary), or one row per model (or per answer) with
    dimension columns (``| Model | Steps | Loss | Grade |``). The challenge is
    the row's challenge column, else the one the headings above name. False
    where the table is not of this shape."""
    row_names = [clean_name(cells[0]) for _, cells in table.rows if cells]
    col_names = [clean_name(h) for h in table.header[1:]]
    row_dims = [dimension_of(n) for n in row_names]
    other: list[str] = []  # labels of dimensions benchtui does not grade
    by_row = None
    if sum(d is not None for d in row_dims) >= 2 and any(mapper.model(c) for c in col_names):
        other = [n for n, d in zip(row_names, row_dims) if d is None]
        pick = [(line_no, col_names[col - 1], None, dim, row[col] if col < len(row) else "")
                for (line_no, row), dim in zip([r for r in table.rows if r[1]], row_dims) if dim
                for col in range(1, len(col_names) + 1)]
    elif sum(d is not None for d in row_dims) >= 2 and (score_col := _score_column(col_names)) \
            and (model := _heading_model(table, mapper)):
        # One model's scores by dimension under a heading naming it
        # ("### 6.1 MiniMax-M2.7 Score: 58/100", then "| Category | Weight | Score |").
        if any(_dimension_key(c) in ("max", "out_of", "maximum", "possible") for c in col_names):
            doc.problems.append(f"line {table.line}: scores out of the table's Max column, not 0-100: not imported")
            return True
        other = [n for n, d in zip(row_names, row_dims) if d is None and not _summary_row(n)]
        pick = [(line_no, model, None, dim, row[score_col] if score_col < len(row) else "")
                for (line_no, row), dim in zip([r for r in table.rows if r[1]], row_dims) if dim and dim != OVERALL]
    elif sum(mapper.model(n) is not None for n in row_names) and any(dimension_of(c) for c in col_names):
        by_row = _challenge_column(table, mapper)
        dim_cols = _dimension_columns(col_names)
        pick = [(line_no, clean_name(row[0]), row[by_row] if by_row and by_row < len(row) else None,
                 dimension_of(col_names[col - 1]), row[col])
                for line_no, row in table.rows if row and not _summary_row(row[0])
                for col in range(1, min(len(row), len(col_names) + 1)) if col in dim_cols]
    else:
        if sum(d is not None for d in row_dims) >= 2:
            doc.passed_over.append(f"line {table.line}: scores by dimension, but neither its columns "
                                   f"({', '.join(col_names)}) nor a heading above name a model of this workbench")
        return False
    found, problems = [], []
    for line_no, model, challenge, dim, raw in pick:
        try:
            value = parse_cell(raw)
        except GradeError:
            problems.append(f"line {line_no}: not a grade: {raw.strip()!r}")
            continue
        if value is not None:
            found.append((line_no, model, challenge, dim, value))
    if not found or len(found) < len(problems):
        return True  # a table of verdicts in words: nothing to import
    shared = None if by_row else _heading_challenge(table, mapper)
    if not by_row and shared is None:
        doc.unmapped.append(f"challenge in the headings above the table at line {table.line}")
        return True
    doc.problems += problems
    if other:
        doc.problems.append(f"line {table.line}: not benchtui dimensions, not imported: {', '.join(other)}")
    doc.grades += [ParsedGrade(model, challenge or shared, value, table.grader, "dimensions", line_no, dim)
                   for line_no, model, challenge, dim, value in found]
    return True


def _numbers_are_scores(table: _Table) -> bool:
    """A table of numbers holds scores when its header says so, or the nearest
    heading that says what it holds speaks of scores, not of measurements
    ("## Scoreboard" / "### Round 1" yes; "## Scoreboard" / "### Timings" no)."""
    if _SCORE_CONTEXT.search(" ".join(table.header)):
        return True
    for title in reversed(table.headings):
        if _MEASURE_CONTEXT.search(title):
            return False
        if _SCORE_CONTEXT.search(title):
            return True
    return False


def _grade_table(table: _Table, mapper: NameMapper, doc: ParsedDoc) -> None:
    """A matrix or scoreboard; rows are challenges (or models, transposed)."""
    row_names = [clean_name(cells[0]) for _, cells in table.rows if cells]
    if not any(mapper.challenge(n) for n in row_names + [clean_name(h) for h in table.header[1:]]) \
            and _dimension_table(table, mapper, doc):
        return
    col_names = [clean_name(h) for h in table.header[1:]]
    rows_are_models = (sum(mapper.model(n) is not None for n in row_names)
                       > sum(mapper.challenge(n) is not None for n in row_names))
    numeric_ok = _numbers_are_scores(table)
    cells_read, grades, problems, unmapped_cols, unsaid = 0, [], [], set(), False
    for col, col_name in enumerate(col_names, start=1):
        values = []
        for line_no, cells in table.rows:
            if col >= len(cells) or _summary_row(cells[0]):
                continue
            try:
                value = parse_cell(cells[col])
            except GradeError:
                value = "bad"
            values.append((line_no, clean_name(cells[0]), value, cells[col]))
        graded = [v for v in values if isinstance(v[2], GradeValue)]
        if not graded or len(graded) < sum(1 for v in values if v[2] == "bad"):
            continue  # a text column: winner, margin, notes
        if not numeric_ok and all(v[2].score is not None for v in graded):
            unsaid = unsaid or (mapper.challenge(col_name) if rows_are_models else mapper.model(col_name)) is not None
            continue  # numbers without a word saying they are grades
        mapped_col = mapper.challenge(col_name) if rows_are_models else mapper.model(col_name)
        if mapped_col is None:
            unmapped_cols.add(col_name)
            continue
        for line_no, row_name, value, raw in values:
            if value == "bad":
                if mapper.model(row_name) if rows_are_models else mapper.challenge(row_name):
                    problems.append(f"line {line_no}: not a grade: {raw.strip()!r}")
                continue  # a row of remarks ("All tests pass?") is not a grade's place
            if value is None:
                continue
            cells_read += 1
            model, challenge = (row_name, col_name) if rows_are_models else (col_name, row_name)
            form = "scoreboard" if value.score is not None else "matrix"
            grades.append(ParsedGrade(model, challenge, value, table.grader, form, line_no))
    # A grade table names at least one known row and one known column;
    # rankings, timings and head-to-head tables do not.
    known_rows = [n for n in row_names if (mapper.model(n) if rows_are_models else mapper.challenge(n))]
    if not known_rows or not cells_read:
        if unsaid and known_rows:
            doc.passed_over.append(f"line {table.line}: a table of numbers, but neither its header nor a "
                                   "heading above says they are scores or grades")
        elif unmapped_cols and not known_rows:
            doc.passed_over.append(f"line {table.line}: grades, but its rows name no "
                                   f"{'model' if rows_are_models else 'challenge'} of this workbench")
        elif unmapped_cols:
            doc.passed_over.append(_columns_not_here(table, sorted(unmapped_cols), models=not rows_are_models))
        return
    doc.problems += problems
    doc.unmapped += sorted(f"{'challenge' if rows_are_models else 'model'} {n}" for n in unmapped_cols)
    doc.grades += grades


def _columns_not_here(table: _Table, names: list[str], *, models: bool) -> str:
    """A grade matrix whose rows this workbench knows and whose graded columns it
    does not: which names, and the two ways on."""
    what = "model" if models else "challenge"
    shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
    where = "the workbench holding their answers" if models else "the workbench holding those challenges"
    return (f"line {table.line}: a grade matrix whose {what} columns ({shown}) are not {what}s of this workbench; "
            f"import it in {where} (`benchtui --workbench DIR grades import FILE`), or map each name to one here "
            f"with `benchtui grades alias NAME {'MODEL_FOLDER' if models else 'CHALLENGE_ID --challenge'}` and import again")


def parse_markdown(text: str, mapper: NameMapper, *, grader: str | None = None) -> ParsedDoc:
    """Every grade the text holds, with names still as written."""
    doc = ParsedDoc()
    tables, sections, problems = _scan(text, grader)
    doc.problems += problems
    for table in tables:  # the models table maps names for every other table
        found = _models_table(table)
        if found:
            doc.models_table.update(found)
    mapper.models_table.update(doc.models_table)
    for table in tables:
        if _models_table(table) is None:
            _grade_table(table, mapper, doc)
    doc.grades += sections
    return doc


def _resolve_section(g: ParsedGrade, mapper: NameMapper) -> tuple[str | None, str | None]:
    """Model and challenge named by a section's headings: path segments first
    (``glm5/kv/cache.py``), then any known name inside the heading text."""
    model = challenge = None
    for path in _PATH.findall(g.model):
        for seg in path.split("/"):
            model = model or (mapper.model(seg) if seg else None)
            challenge = challenge or (mapper.challenge(seg) if seg else None)
    text = normalise_name(clean_name(g.model))
    if model is None:
        model = _longest_inside(text, {**mapper.model_names, **mapper.models_table,
                                       **{a: t for (k, a), t in mapper.aliases.items() if k == "model"}})
        if model is not None and model not in mapper.models:
            model = None
    if challenge is None:
        challenge = _longest_inside(text, {**mapper.challenge_names,
                                           **{a: t for (k, a), t in mapper.aliases.items() if k == "challenge"}})
    return model, challenge


def _longest_inside(text: str, names: dict[str, str]) -> str | None:
    hits = sorted((n for n in names if len(n) >= 2 and n in text), key=len, reverse=True)
    return names[hits[0]] if hits else None


# -- import -------------------------------------------------------------------
MARKDOWN_SUFFIXES = (".md", ".markdown")


def import_markdown(store: Store, path: Path | str, *, grader: str | None = None,
                    dry_run: bool = False, keep_existing: bool = False) -> ImportResult:
    """Import every grade in a Markdown file. Grades equal to the judge's
    current grade on the cell are skipped, so re-importing adds nothing."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ImportError_(f"cannot read {path}: {exc}") from exc
    return import_text(store, text, source=path.name, grader=grader, dry_run=dry_run, keep_existing=keep_existing)


def import_text(store: Store, text: str, *, source: str = "<text>", grader: str | None = None,
                dry_run: bool = False, keep_existing: bool = False) -> ImportResult:
    """Import every grade in ``text``. A judge's newer grade on a cell
    supersedes its older one, whatever source that came from; each such
    replacement of another source's grade is listed in ``superseded``.
    ``keep_existing`` leaves every cell the judge already graded as it is.
    ``dry_run`` writes nothing and reports exactly what an import would do."""
    mapper = NameMapper(store)
    doc = parse_markdown(text, mapper, grader=grader)
    result = ImportResult(problems=list(doc.problems))
    unmapped: list[str] = list(doc.unmapped)

    # Resolve names; the grade on the file's last line for a cell wins.
    # A grade in a heading ("### GLM-5 Score: 72/100") stands only where no
    # table or "Grade:" line grades the cell: a summary table is the judge's word.
    chosen: dict[tuple[str, str, str, str], ParsedGrade] = {}
    ordered = sorted(doc.grades, key=lambda g: (g.form == "heading", g.line))
    for g in ordered:
        if g.form in ("section", "heading"):
            model, challenge = _resolve_section(g, mapper)
            if model is None or challenge is None:
                what = "model" if model is None else "challenge"
                unmapped.append(f"{what} in section {clean_name(g.model)!r} (line {g.line})")
                continue
        else:
            model, challenge = mapper.model(g.model), mapper.challenge(g.challenge)
            if model is None:
                unmapped.append(f"model {g.model}")
            if challenge is None:
                unmapped.append(f"challenge {g.challenge}")
            if model is None or challenge is None:
                continue
        if not g.grader:
            raise ImportError_(f"{source} does not name its judge (line {g.line}); pass --grader NAME")
        key = (g.grader, model, challenge, g.dimension)
        if g.form == "heading" and key in chosen:
            if chosen[key].value != g.value:
                result.problems.append(
                    f"line {g.line}: {model}/{challenge} graded {g.value.display} in a heading and "
                    f"{chosen[key].value.display} at line {chosen[key].line}; the line {chosen[key].line} one is used")
            continue
        if key in chosen and chosen[key].value != g.value:
            result.problems.append(
                f"line {g.line}: {model}/{challenge} graded {chosen[key].value.display} at line "
                f"{chosen[key].line} and {g.value.display} here; the later one is used")
        chosen[key] = g

    result.unmapped = list(dict.fromkeys(unmapped))
    result.mapped = mapper.reviewed()
    result.graders = sorted({k[0] for k in chosen})
    if not doc.grades:
        result.nothing_found = _why_nothing(doc)
    this_source = f"import:{source}"
    with nullcontext() if dry_run else write_transaction(store):
        # The file's models table names each folder's model: the exports and the
        # leaderboard show those names, not the folder names the scan starts with.
        if not dry_run:
            for folder, shown in read_models_table(text).items():
                grades_sql.set_display_name(store, folder, shown)
        for (who, model, challenge, dim), g in chosen.items():
            known = get_grader(store, who)  # a dry run creates no grader
            who = known.name if known else who
            current = current_grade(store, model, challenge, dim, grader=who) if known else None
            if current and current.letter == g.value.letter and current.score == g.value.score:
                result.skipped_existing += 1
                continue
            cell = f"{model}/{challenge}" + ("" if dim == OVERALL else f" {dim}")
            if current and keep_existing:
                result.kept += 1
                continue
            entry = {"model": model, "challenge": challenge, "dimension": dim, "grade": g.value.display,
                     "grader": who, "line": g.line, "supersedes": None}
            if current:
                entry["supersedes"] = {"id": current.id, "grade": current.display, "source": current.source}
                if current.source != this_source:
                    result.superseded.append(
                        f"{cell}: {g.value.display} (line {g.line}) replaces {who}'s {current.display} "
                        f"from {source_words(current.source)} (#{current.id}); it stands: of a judge's grades on a cell "
                        "the one read last stands (files in the order given, a folder's by name)")
            result.grades.append(entry)
            result.imported += 1
            if not dry_run:
                who = ensure_grader(store, who, "judge").name
                set_grade(store, model, challenge, g.value, dimension=dim, grader=who,
                          grader_kind="judge", source=this_source, source_key=f"{g.form}:{g.line}")
    written = {(g["model"], g["challenge"]) for g in result.grades}
    result.no_answer = [f"{m}/{c}" for m, c in sorted(answerless_cells(store, written))]
    return result


def _why_nothing(doc: ParsedDoc) -> str:
    """One line: why a file yielded no grade at all."""
    if doc.passed_over:
        return "no grade read: " + "; ".join(doc.passed_over)
    if doc.problems:
        return "no grade read: every grade-like cell or line is one of the problems listed"
    if doc.unmapped:
        return "no grade read: the names in its tables map to no model or challenge of this workbench"
    return ("no grade read: it holds no grade matrix, scoreboard, table of scores by dimension, "
            "or 'Grade: X' line under a heading naming a model and challenge")


def read_models_table(text: str) -> dict[str, str]:
    """Folder -> display name from every "models tested" table in the text
    (for a scanner that wants display names from a README or JUDGES.md)."""
    tables, _, _ = _scan(text, None)
    out: dict[str, str] = {}
    for table in tables:
        if _models_table(table) is None:
            continue
        for _, cells in table.rows:
            folder = clean_name(cells[0]) if cells else ""
            if folder and len(cells) > 1 and clean_name(cells[1]):
                out.setdefault(folder, clean_name(cells[1]))
    return out
