"""What a deck reader returns: the deck's problems, runs, published results
and annotations, read and checked but not yet written anywhere, and the
problems found on the way (one line each)."""
from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

KERNELBENCH_HARD = "kernelbench-hard"
KERNELBENCH = "kernelbench"

# benchtui's names: challenge ids (engine/authoring/new_challenge.py) and model folders
# (engine/workbench/new_model.py).
CHALLENGE_ID_MAX = 48
MODEL_NAME_MAX = 64


def slug(text: str, *, lower: bool = True) -> str:
    """'anthropic/claude-fable-5' -> 'anthropic_claude-fable-5'; what is left of a
    name once every character a folder name may not hold is an underscore."""
    out = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_.-")
    return out.lower() if lower else out


def challenge_slug(text: str) -> str:
    return re.sub(r"_+", "_", re.sub(r"[^a-z0-9_]", "_", text.lower())).strip("_")


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class Problem:
    """One problem of the deck, as a challenge of benchtui will hold it."""
    key: str            # the deck's id: '01_fp8_gemm', 'level_1_problem_3'
    challenge: str      # benchtui's challenge id: 'kbh_01_fp8_gemm'
    title: str          # the deck's display name
    prompt: str         # PROMPT.md's text
    files: dict[str, bytes]  # the deck's own files, copied untouched (name -> bytes)
    module: dict        # the [module] table of challenge.toml
    requirements: dict[str, object]  # [requirements]: id -> words (or a table)
    display_names: tuple[str, ...] = ()
    order: int = 100
    source: str = ""    # the folder or file it was read from


@dataclass
class Run:
    """One published run: an answer file and, when the deck has them, its result."""
    run_id: str
    problem: str        # the deck's problem id
    model: str          # benchtui's model folder, assigned once all runs are read
    base_model: str     # '<harness>_<model>' before runs of one cell are told apart
    harness: str
    deck_model: str     # the model as the deck names it ('anthropic/claude-fable-5')
    data: bytes         # the answer file's bytes, untouched
    source: str         # its path in the deck
    effort: str | None = None
    sample: int = 0     # KernelBench: the sample number of its problem
    on_board: bool = False  # the run the deck's leaderboard counts for its cell
    result: dict | None = None       # the deck's published result (deck_results row fields)
    annotations: list[dict] = field(default_factory=list)
    # files the deck's run file carries appended to its answer file ("sidecars": a .cu source
    # solution.py loads), split back out: the answer file's own bytes first, then each by name
    files: dict[str, bytes] | None = None
    sidecar_lines: dict[str, int] = field(default_factory=dict)  # where each starts in the run file (1-based)

    def answer_files(self, answer_file: str) -> dict[str, bytes]:
        """The files of the answer folder: the run file as it is, or split where it carries sidecars."""
        return dict(self.files) if self.files else {answer_file: self.data}

    @property
    def sha256(self) -> str:
        return sha256_bytes(self.data)


@dataclass
class Deck:
    kind: str           # KERNELBENCH_HARD or KERNELBENCH
    title: str
    path: str
    commit: str
    gpu: str = ""
    board_gpu: str = ""  # the GPU the leaderboard says its figures are of ("NVIDIA H100 PCIe")
    problems: dict[str, Problem] = field(default_factory=dict)   # by the deck's id
    runs: list[Run] = field(default_factory=list)
    # published results of runs that have no answer file (the deck says there was none)
    results_without_answer: list[dict] = field(default_factory=list)
    problems_found: list[str] = field(default_factory=list)      # one line each, for the report
    notes: list[str] = field(default_factory=list)               # what was left out, and why (not a problem)
    # parts of the deck the reader looks for and did not find: path (relative to the deck,
    # a folder ending in "/") -> what is lost without it
    missing: dict[str, str] = field(default_factory=dict)
    missing_figures: dict[str, list[str]] = field(default_factory=dict)  # part -> the figures it leaves unreproducible
    # the runs not read yet, a batch at a time (a reader that streams sets it): the import
    # writes each batch before the next is read, so a deck is never held whole; reading a
    # batch adds its lines to problems_found and notes
    unread: Callable[[], Iterator[list[Run]]] | None = None
    streamed: bool = False  # its unread runs were handed out once (they are not kept)

    def run_batches(self) -> Iterator[list[Run]]:
        """The runs read already, then the unread ones a batch at a time (once: a streamed
        batch is not kept, so a second pass would miss it)."""
        if self.streamed:
            raise DeckError(f"{self.path}: this deck's runs were read once and not kept; read the deck again")
        if self.runs:
            yield self.runs
        if self.unread is not None:
            unread, self.unread, self.streamed = self.unread, None, True
            yield from unread()

    def read_all(self) -> None:
        """Read every unread run into ``runs`` (a deck small enough to hold whole)."""
        if self.unread is not None:
            unread, self.unread = self.unread, None
            for batch in unread():
                self.runs.extend(batch)

    def problem(self, line: str) -> None:
        self.problems_found.append(line)

    def lacks(self, root: Path, part: str, lost: str, figures: tuple[str, ...] = ()) -> str:
        """Record that ``root/part`` is missing and what is lost without it; a part whose
        folder is missing too is named by the highest missing folder, once, its losses
        gathered there. Returns the name it is recorded under."""
        path = Path(part)
        top = path
        while top.parent != Path(".") and not (root / top.parent).exists():
            top = top.parent
        name = part if top == path else top.as_posix() + "/"
        said = self.missing.get(name)
        if said is None:
            self.missing[name] = lost
        elif lost not in said.split("; "):
            self.missing[name] = f"{said}; {lost}"
        figs = self.missing_figures.setdefault(name, [])
        figs.extend(f for f in figures if f not in figs)
        return name

    def missing_lines(self) -> list[str]:
        """One report line per missing part: what is not there, what is lost, and
        which figures say "not reproducible" for it."""
        return [f"{part} is missing: lost {lost}"
                + (f"; {' and '.join(figs)} {'says' if len(figs) == 1 else 'say'} \"not reproducible\""
                   if (figs := self.missing_figures.get(part)) else "")
                for part, lost in self.missing.items()]


class DeckError(Exception):
    """A path that is not a deck benchtui can read: nothing is imported."""
