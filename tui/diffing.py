"""Side-by-side and unified diffs as row lists for the virtual diff view.

Pure Python (difflib), no Textual: the compare screen builds rows in a worker
and the view only renders the visible ones.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field

INTRALINE_MAX = 400  # longer lines are marked whole: char diffs of huge lines are slow and unreadable


@dataclass(slots=True)
class DiffRow:
    tag: str                    # equal, replace, delete, insert
    left_no: int | None
    left: str
    right_no: int | None
    right: str
    left_spans: list[tuple[int, int]] = field(default_factory=list)
    right_spans: list[tuple[int, int]] = field(default_factory=list)


@dataclass(slots=True)
class UnifiedRow:
    tag: str                    # header, hunk, equal, delete, insert
    text: str


@dataclass
class Diff:
    rows: list[DiffRow]
    unified: list[UnifiedRow]
    changes: list[int]          # side-by-side row index of each change block
    unified_changes: list[int]  # unified row index of each hunk
    added: int = 0
    removed: int = 0

    @property
    def identical(self) -> bool:
        return not self.changes


def intraline(a: str, b: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Character spans that differ between two paired lines."""
    if len(a) > INTRALINE_MAX or len(b) > INTRALINE_MAX:
        return [(0, len(a))], [(0, len(b))]
    left, right = [], []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if i2 > i1:
            left.append((i1, i2))
        if j2 > j1:
            right.append((j1, j2))
    return left, right


def diff_lines(a: list[str], b: list[str], name_a: str = "a", name_b: str = "b", context: int = 3) -> Diff:
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    rows: list[DiffRow] = []
    changes: list[int] = []
    added = removed = 0
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            rows.extend(DiffRow("equal", i1 + k + 1, a[i1 + k], j1 + k + 1, b[j1 + k]) for k in range(i2 - i1))
            continue
        changes.append(len(rows))
        removed += i2 - i1
        added += j2 - j1
        if tag == "delete":
            rows.extend(DiffRow("delete", i + 1, a[i], None, "") for i in range(i1, i2))
        elif tag == "insert":
            rows.extend(DiffRow("insert", None, "", j + 1, b[j]) for j in range(j1, j2))
        else:
            # Pair lines of a replace block one to one; the surplus side stands alone.
            for k in range(max(i2 - i1, j2 - j1)):
                i, j = i1 + k, j1 + k
                la = a[i] if i < i2 else None
                lb = b[j] if j < j2 else None
                if la is not None and lb is not None:
                    ls, rs = intraline(la, lb)
                    rows.append(DiffRow("replace", i + 1, la, j + 1, lb, ls, rs))
                elif la is not None:
                    rows.append(DiffRow("delete", i + 1, la, None, ""))
                else:
                    rows.append(DiffRow("insert", None, "", j + 1, lb or ""))
    unified: list[UnifiedRow] = []
    unified_changes: list[int] = []
    for line in difflib.unified_diff(a, b, name_a, name_b, n=context, lineterm=""):
        if line.startswith("---") or line.startswith("+++"):
            tag = "header"
        elif line.startswith("@@"):
            tag = "hunk"
            unified_changes.append(len(unified))
        elif line.startswith("-"):
            tag = "delete"
        elif line.startswith("+"):
            tag = "insert"
        else:
            tag = "equal"
        unified.append(UnifiedRow(tag, line))
    return Diff(rows, unified, changes, unified_changes, added, removed)


def diff_texts(a: str, b: str, name_a: str = "a", name_b: str = "b") -> Diff:
    return diff_lines(a.splitlines(), b.splitlines(), name_a, name_b)


# -- pairing the files of two answers -----------------------------------------------

def file_role(relpath: str, kind: str) -> str:
    """A role used to pair files across answers: same role, best name match wins."""
    name = relpath.rsplit("/", 1)[-1].lower()
    if kind == "transcript":
        return "transcript"
    if name.startswith("test") or name.endswith("_test.py"):
        return "test"
    if name.startswith(("bench", "demo")):
        return "bench"
    return kind or "other"


def pair_files(left: list[dict], right: list[dict]) -> list[tuple[dict | None, dict | None]]:
    """Pair two answers' files: same path first, then same role by name similarity."""
    pairs: list[tuple[dict | None, dict | None]] = []
    rest_right = {f["relpath"]: f for f in right}
    unpaired_left = []
    for f in left:
        if f["relpath"] in rest_right:
            pairs.append((f, rest_right.pop(f["relpath"])))
        else:
            unpaired_left.append(f)
    def ext(relpath: str) -> str:
        return relpath.rsplit(".", 1)[-1].lower() if "." in relpath else ""

    # Same role first, then (for leftovers) same extension; best name match wins.
    for same in (lambda f, g: file_role(f["relpath"], f.get("kind", "")) == file_role(g["relpath"], g.get("kind", "")),
                 lambda f, g: ext(f["relpath"]) == ext(g["relpath"])):
        still = []
        for f in unpaired_left:
            candidates = [g for g in rest_right.values() if same(f, g)]
            if candidates:
                best = max(candidates, key=lambda g: difflib.SequenceMatcher(None, f["relpath"], g["relpath"]).ratio())
                pairs.append((f, rest_right.pop(best["relpath"])))
            else:
                still.append(f)
        unpaired_left = still
    pairs.extend((f, None) for f in unpaired_left)
    pairs.extend((None, g) for g in rest_right.values())
    order = {"source": 0, "cuda": 1, "test": 2, "bench": 3, "doc": 4, "prompt": 5, "transcript": 6}
    return sorted(pairs, key=lambda p: (p[0] is None or p[1] is None, order.get(file_role((p[0] or p[1])["relpath"], (p[0] or p[1]).get("kind", "")), 9),
                                        (p[0] or p[1])["relpath"]))
