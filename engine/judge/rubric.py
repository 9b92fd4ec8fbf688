"""The judge's rubric: a Markdown file the user can read, copy and change.

The text before the first level-two heading is the judge's instructions; each
``## Title (dimension_id)`` heading opens one dimension, its words the lines
under it. The ids are benchtui's dimensions (engine/grading/grades.py), so a
judge's grades land where every screen and export reads them; ``overall`` is
required. The rubric's sha256 (of its text, line endings made ``\\n``) is
stored with every grade made under it and is part of the judge's grader name,
so grades under two rubrics never stand as one grader's.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from benchtui.grading.grades import DIMENSION_IDS, OVERALL

BUNDLED_RUBRIC = Path(__file__).with_name("rubric.md")
_DIMENSION_HEADING = re.compile(r"^##\s+(?P<title>.+?)\s*\((?P<id>[a-z_]+)\)\s*$")


class RubricError(ValueError):
    """A rubric file that cannot be used; one line for the user."""


@dataclass(frozen=True)
class Rubric:
    path: Path
    text: str
    sha256: str
    preamble: str
    dimensions: tuple[tuple[str, str, str], ...]  # (id, title, words), in the file's order

    @property
    def short(self) -> str:
        """The sha256's first 8 hex digits: what grader names carry."""
        return self.sha256[:8]

    @property
    def is_bundled(self) -> bool:
        return self.path.resolve() == BUNDLED_RUBRIC.resolve()

    @property
    def dimension_ids(self) -> tuple[str, ...]:
        return tuple(d[0] for d in self.dimensions)


def load_rubric(path: Path | str | None = None) -> Rubric:
    """The rubric at ``path`` (the bundled one when None)."""
    path = Path(path).expanduser() if path else BUNDLED_RUBRIC
    try:
        text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
    except (OSError, UnicodeDecodeError) as exc:
        raise RubricError(f"cannot read the rubric {path}: {getattr(exc, 'strerror', None) or exc}") from exc
    preamble: list[str] = []
    dims: list[tuple[str, str, list[str]]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        heading = _DIMENSION_HEADING.match(line)
        if heading:
            dim = heading.group("id")
            if dim not in DIMENSION_IDS:
                raise RubricError(f"{path} line {number}: {dim!r} is not a benchtui dimension; "
                                  f"use one of: {', '.join(DIMENSION_IDS)}")
            if any(d[0] == dim for d in dims):
                raise RubricError(f"{path} line {number}: the dimension {dim!r} is there twice")
            dims.append((dim, heading.group("title"), []))
        elif line.startswith("## "):
            raise RubricError(f"{path} line {number}: a dimension heading is '## Title (dimension_id)', "
                              f"not {line.strip()!r}")
        elif dims:
            dims[-1][2].append(line)
        else:
            preamble.append(line)
    if not any(d[0] == OVERALL for d in dims):
        raise RubricError(f"{path} has no '## Overall (overall)' dimension: the judge's overall grade is the one "
                          "the matrix and rankings show")
    return Rubric(path, text, hashlib.sha256(text.encode("utf-8")).hexdigest(), "\n".join(preamble).strip(),
                  tuple((d, title, " ".join(" ".join(words).split())) for d, title, words in dims))
