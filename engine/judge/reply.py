"""What the judge is asked (the system message) and what its reply is read as.

The judge is asked for one JSON object: ``{"grades": {DIMENSION: {"grade":
"B+", "reasoning": "..."}, ...}}`` with every dimension of the rubric, and
``overall`` at least. A reply is read leniently (a fenced block, text around
the object, a 0-100 score for a letter, ``{"correctness": "B+"}``) but never
guessed at: a reply without such an object, or without an overall grade, is
stored as unparseable (or as a refusal) with its raw text, and no grade is
made of it.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from benchtui.grading.grades import OVERALL, GradeError, GradeValue, parse_grade
from benchtui.judge.rubric import Rubric

REASONING_CAP = 2_000
_REFUSAL = re.compile(r"\b(i\s+can(?:no|')t|i\s+am\s+(?:not\s+able|unable)|i'm\s+(?:not\s+able|unable)|i\s+won't|"
                      r"cannot\s+(?:help|assist|comply)|can't\s+(?:help|assist|comply)|not\s+able\s+to\s+help)\b", re.I)

BLIND_NOTE = ("You see the task and the answer's files only, as a reviewer reading the code would; nothing tells "
              "you whether it runs or passes any test.")
EVIDENCE_NOTE = ("After the answer's files you are also given what benchtui's hidden test suite found when it ran "
                 "the answer in a sandbox: its verdict, each check that failed with its message (often a "
                 "counter-example), the result of the answer's own tests, and what the verdict does not cover. "
                 "The suite's checks are facts about this code; weigh them, and say in your reasoning where they "
                 "changed your grade. They do not cover code quality, analysis or the write-up: those are yours "
                 "alone to judge.")


class ReplyError(ValueError):
    """A reply no grade can be read from. ``status``: unparseable or refused."""

    def __init__(self, status: str, reason: str):
        super().__init__(reason)
        self.status = status


@dataclass
class Reply:
    grades: dict[str, tuple[GradeValue, str]]       # dimension -> (grade, reasoning)
    problems: list[str] = field(default_factory=list)   # what was read around (unknown or missing dimensions)


def system_message(rubric: Rubric, mode: str) -> str:
    """The rubric, what the judge is given in this mode, and the form of its reply."""
    dims = "\n".join(f"- {dim} ({title}): {words}" for dim, title, words in rubric.dimensions)
    example = ", ".join(f'"{dim}": {{"grade": "B+", "reasoning": "..."}}' for dim in rubric.dimension_ids[:2])
    return "\n\n".join([
        rubric.preamble,
        BLIND_NOTE if mode == "blind" else EVIDENCE_NOTE,
        "The dimensions:\n" + dims,
        "Reply with one JSON object and nothing else, with a grade (a letter A, A-, B+, B, B-, C+, C, C-, D+, D, "
        "D-, F) and one to three sentences of reasoning for every dimension above: "
        f'{{"grades": {{{example}, ...}}}}',
    ])


def _objects(text: str):
    """Every JSON object in ``text``, outermost first, in order."""
    decoder = json.JSONDecoder()
    at = text.find("{")
    while at != -1:
        try:
            value, end = decoder.raw_decode(text, at)
        except ValueError:
            at = text.find("{", at + 1)
            continue
        if isinstance(value, dict):
            yield value
        at = text.find("{", end)


def parse_reply(text: str, rubric: Rubric) -> Reply:
    """The grades in a judge's reply; ReplyError when there are none to take."""
    if not text or not text.strip():
        raise ReplyError("unparseable", "an empty reply")
    found = None
    for obj in _objects(text):
        grades = obj.get("grades", obj)
        if isinstance(grades, dict) and any(k in grades for k in rubric.dimension_ids):
            found = grades
            break
    if found is None:
        if _REFUSAL.search(text[:600]):
            raise ReplyError("refused", "the judge declined to grade: " + " ".join(text.split())[:200])
        raise ReplyError("unparseable", "no JSON object of grades by dimension in the reply")
    out = Reply({})
    for dim, value in found.items():
        if dim not in rubric.dimension_ids:
            out.problems.append(f"{dim}: not a dimension of the rubric, not read")
            continue
        raw, reasoning = (value.get("grade", value.get("score")), value.get("reasoning", "")) \
            if isinstance(value, dict) else (value, "")
        try:
            grade = parse_grade(raw if isinstance(raw, (int, float)) and not isinstance(raw, bool) else str(raw))
        except GradeError:
            out.problems.append(f"{dim}: {raw!r} is not a grade, not read")
            continue
        out.grades[dim] = (grade, " ".join(str(reasoning or "").split())[:REASONING_CAP])
    if OVERALL not in out.grades:
        raise ReplyError("unparseable", "the reply gives no overall grade"
                         + (f" ({'; '.join(out.problems)})" if out.problems else ""))
    missing = [d for d in rubric.dimension_ids if d not in out.grades and not any(p.startswith(d + ":")
                                                                                 for p in out.problems)]
    if missing:
        out.problems.append(f"not graded: {', '.join(missing)}")
    return out
