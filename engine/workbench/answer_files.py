"""Which file of an answer a reviewer wants to see first: its main source.

The answer screen used to open the alphabetically first source, which in the
published benchmark is often a helper (glm5/fuse opened ``diagram.py``
instead of ``fused_softmax_topk.cuh``). The binder's choice lives in each
challenge's conformance code (it imports the answer), so this picks by what
the file list says: real sources before self-tests, demos, benchmarks and
diagrams; the challenge's language first; names that echo the challenge;
then the largest file.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath

SOURCE_KINDS = ("source", "cuda")
# Files an answer ships around its solution: shown, never picked first when a real source exists.
HELPER_PATTERNS = (
    r"^test_", r"_tests?$", r"^tests?$", r"^demo", r"_demo$", r"^bench", r"_bench(mark)?$", r"^conftest$",
    r"^diagram", r"_diagram$", r"^example", r"^plot", r"^visuali[sz]", r"^setup$", r"^__init__$", r"^run_",
    r"^verify$", r"^check",
)
CUDA_SUFFIXES = (".cu", ".cuh")
_WORD = re.compile(r"[a-z0-9]+")
_STOP = {"and", "the", "a", "of", "from", "with", "for", "kernel", "cuda", "forward"}


def is_helper(relpath: str) -> bool:
    stem = PurePosixPath(relpath).stem.lower()
    return any(re.search(p, stem) for p in HELPER_PATTERNS)


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower().replace("+", " ")) if w not in _STOP and len(w) > 1}


def _echoes(stem_words: set[str], challenge_words: set[str]) -> int:
    """How many of the file name's words echo the challenge's names ('backward' ~ 'backwards')."""
    n = 0
    for w in stem_words:
        if any(w == c or (len(w) >= 4 and len(c) >= 4 and (w.startswith(c) or c.startswith(w))) for c in challenge_words):
            n += 1
    return n


def main_source(files: Iterable[Mapping], challenge_names: Iterable[str] = (), language: str | None = None) -> str | None:
    """The relpath to open first among ``files`` (rows with relpath, kind, size), or None
    when the answer has no source at all. ``challenge_names``: the challenge's id, title
    and display names; ``language``: the challenge's language ("cuda", "python"...)."""
    sources = [f for f in files if f["kind"] in SOURCE_KINDS]
    if not sources:
        return None
    words: set[str] = set()
    for name in challenge_names:
        words |= _words(name or "")

    def rank(f: Mapping) -> tuple:
        path = PurePosixPath(f["relpath"])
        is_cuda = path.suffix.lower() in CUDA_SUFFIXES
        language_fits = (language == "cuda") == is_cuda if language else True
        return (
            not is_helper(f["relpath"]),              # a real source before tests, demos, diagrams
            language_fits,                            # the challenge's language
            _echoes(_words(path.stem), words) > 0,    # a name that echoes the challenge
            -len(path.parts),                         # top level before nested
            f["size"] or 0,                           # then the largest
            [-ord(c) for c in f["relpath"]],          # stable: alphabetical among equals
        )

    return max(sources, key=rank)["relpath"]
