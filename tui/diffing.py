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
    if not unified:  # difflib writes no header for identical files: the names stay on screen anyway
        unified = [UnifiedRow("header", f"--- {name_a}"), UnifiedRow("header", f"+++ {name_b}"),
                   UnifiedRow("equal", " (identical)")]
    return Diff(rows, unified, changes, unified_changes, added, removed)


def diff_texts(a: str, b: str, name_a: str = "a", name_b: str = "b") -> Diff:
    return diff_lines(a.splitlines(), b.splitlines(), name_a, name_b)


# -- pairing the files of two answers -----------------------------------------------

def file_role(relpath: str, kind: str) -> str:
    """A role used to pair files across answers: only files of the same role pair."""
    name = relpath.rsplit("/", 1)[-1].lower()
    if kind == "transcript":
        return "transcript"
    stem = name.rsplit(".", 1)[0]
    if (name.startswith(("test", "check", "verify")) or stem.endswith(("_test", "_tests", "_check"))
            or stem == "conftest"):  # an answer's own tests and checks (gradient_check.py)
        return "test"
    if name.startswith(("bench", "demo")):
        return "bench"
    return kind or "other"


NAME_MATCH = 0.6  # below this, two files of the same role are unrelated and shown alone


def _stem(relpath: str) -> str:
    name = relpath.rsplit("/", 1)[-1].lower()
    stem = name.rsplit(".", 1)[0] if "." in name.lstrip(".") else name
    return "".join(ch for ch in stem if ch.isalnum())


def _language(relpath: str) -> str:
    ext = relpath.rsplit(".", 1)[-1].lower() if "." in relpath else ""
    return {"cuh": "cu", "h": "cu", "hpp": "cu", "cpp": "cu", "cc": "cu"}.get(ext, ext)


def name_similarity(a: str, b: str) -> float:
    """How alike two file names are, 0..1: case, separators and extension aside
    (``layernorm.py`` ~ ``layer_norm.py`` = 1); a name inside the other
    (``NOTES.md`` ~ ``IMPLEMENTATION_NOTES.md``) counts as close."""
    sa, sb = _stem(a), _stem(b)
    if not sa or not sb:
        return 0.0
    if sa == sb:
        return 1.0
    if min(len(sa), len(sb)) >= 4 and (sa in sb or sb in sa):
        return 0.9
    return difflib.SequenceMatcher(None, sa, sb, autojunk=False).ratio()


def pair_files(left: list[dict], right: list[dict],
               main: tuple[str | None, str | None] = (None, None)) -> list[tuple[dict | None, dict | None]]:
    """Pair two answers' files by role: the same path first, then the two main
    sources (``main``: each answer's, engine/workbench/answer_files.main_source;
    ``layer_norm.py`` ~ ``solution.py``), then files of the same role whose names
    are alike (best match first). Files with nothing related on the other side
    stay alone, except that when each answer has exactly one source (or CUDA, or
    test) file left, in the same language, the two are paired whatever their
    names (``tree_attention.py`` ~ ``dflash_verify.py``). The main sources come
    first (the pair the screen opens on), then the other pairs, then the files
    shown alone."""
    def role(f: dict) -> str:
        return file_role(f["relpath"], f.get("kind", ""))

    pairs: list[tuple[dict | None, dict | None]] = []
    rest_right = {f["relpath"]: f for f in right}
    rest_left: dict[str, dict] = {}
    for f in left:
        if f["relpath"] in rest_right:
            pairs.append((f, rest_right.pop(f["relpath"])))
        else:
            rest_left[f["relpath"]] = f
    main_pair = None
    a, b = main
    if a in rest_left and b in rest_right and _language(a) == _language(b):
        main_pair = (rest_left.pop(a), rest_right.pop(b))
    elif a is not None and a == b and any(p[0]["relpath"] == a for p in pairs if p[0]):
        main_pair = next(p for p in pairs if p[0] and p[0]["relpath"] == a)
        pairs.remove(main_pair)
    candidates = sorted(
        ((name_similarity(a, b), a, b) for a, f in rest_left.items() for b, g in rest_right.items() if role(f) == role(g)),
        key=lambda c: (-c[0], c[1], c[2]))
    for score, a, b in candidates:
        if score < NAME_MATCH:
            break
        if a in rest_left and b in rest_right:
            pairs.append((rest_left.pop(a), rest_right.pop(b)))
    for code in ("source", "cuda", "test"):
        lone_left = [f for f in rest_left.values() if role(f) == code]
        lone_right = [g for g in rest_right.values() if role(g) == code]
        if len(lone_left) == 1 and len(lone_right) == 1 and _language(lone_left[0]["relpath"]) == _language(lone_right[0]["relpath"]):
            pairs.append((rest_left.pop(lone_left[0]["relpath"]), rest_right.pop(lone_right[0]["relpath"])))
    pairs.extend((f, None) for f in rest_left.values())
    pairs.extend((None, g) for g in rest_right.values())
    order = {"source": 0, "cuda": 1, "test": 2, "bench": 3, "doc": 4, "prompt": 5, "transcript": 6}
    ordered = sorted(pairs, key=lambda p: (p[0] is None or p[1] is None, order.get(role(p[0] or p[1]), 9),
                                           (p[0] or p[1])["relpath"]))
    return [main_pair, *ordered] if main_pair else ordered
