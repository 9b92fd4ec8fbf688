"""``benchtui import``: a deck read by its reader (kernelbench_hard,
kernelbench) written into a workbench, all or nothing.

Files first, through a :class:`FileTransaction` (every new or changed file
staged beside the workbench, then moved into place; on any failure each move
is undone), then the store's rows in one transaction; if that fails the
files are undone too. An answer folder that already holds another answer is
never written to: that run is reported and its answer left out (its
published result is kept, without an answer). Re-importing the same deck
changes nothing (files compare equal; rows are keyed by deck and run id and
keep the stamps of the import that last changed them; notes are added once).
A dry run writes the rows into a transaction it rolls back, so its counts are
the import's.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
import threading
import tomllib
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

from benchtui.decks.challenge import challenge_files
from benchtui.decks.model import Deck, Run
from benchtui.store import decks_sql, transactions
from benchtui.store.database import Store, now_iso

NOTE_AUTHOR = "{deck} annotation"


class DeckImportError(Exception):
    """The import could not be written; nothing was: the message is for the user."""


@dataclass
class ImportResult:
    deck: str
    title: str
    path: str
    commit: str
    gpu: str
    workbench: str
    challenges: int = 0
    challenges_written: int = 0
    answers: int = 0
    answers_written: int = 0
    models: int = 0
    results: int = 0                 # runs with a published result file (or KernelBench's eval_results entry)
    results_board_only: int = 0      # runs with no result file, only the leaderboard's figures
    results_without_answer: int = 0  # of both, runs the deck published without an answer file
    results_refused: int = 0         # runs whose answer folder holds another answer: the result kept, not the answer
    results_written: int = 0         # deck_results rows new or changed
    annotations: int = 0
    annotations_other_gpu: int = 0   # annotations saying the run was measured on another GPU model than the deck's peak
    notes_added: int = 0
    files_written: int = 0
    dry_run: bool = False
    problems: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # parts of the deck not there, and what is lost
    notes: list[str] = field(default_factory=list)
    import_id: int | None = None

    def to_dict(self) -> dict:
        return dict(self.__dict__)


class FileTransaction:
    """Writes that land together or not at all."""

    def __init__(self, root: Path, *, dry: bool = False):
        self.root = root
        self.dry = dry  # only say what would be written
        self.staged: list[tuple[Path, Path]] = []    # (staged file, destination)
        self.done: list[tuple[Path, Path | None]] = []  # (destination, backup of what it replaced)
        self.made_dirs: list[Path] = []
        self._made: set[Path] = set()   # made_dirs, to look up: a folder made here holds nothing to back up
        self._there: set[Path] = set()  # folders seen to exist already, not asked again per file
        self._stage: Path | None = None

    @property
    def stage(self) -> Path:
        if self._stage is None:
            self._stage = Path(tempfile.mkdtemp(prefix=".benchtui-import-", dir=self.root))
        return self._stage

    def write(self, dest: Path, data: bytes, *, new: bool = False) -> bool:
        """Stage ``data`` for ``dest``; False when ``dest`` already holds exactly it.
        ``new``: the caller saw that ``dest``'s folder does not exist (nothing to compare)."""
        try:
            if not new and dest.is_file() and dest.read_bytes() == data:
                return False
        except OSError:
            pass
        if self.dry:
            return True
        tmp = self.stage / f"{len(self.staged):06d}"
        tmp.write_bytes(data)
        self.staged.append((tmp, dest))
        return True

    def _mkdirs(self, folder: Path) -> None:
        missing = []
        while folder not in self._there and not folder.exists():
            missing.append(folder)
            folder = folder.parent
        self._there.add(folder)
        for d in reversed(missing):
            d.mkdir()
            self.made_dirs.append(d)
            self._made.add(d)
            self._there.add(d)

    def commit(self) -> None:
        backups = self.stage / "replaced" if self.staged else None
        try:
            for i, (tmp, dest) in enumerate(self.staged):
                self._mkdirs(dest.parent)
                backup = None
                if dest.parent not in self._made and dest.exists():
                    backups.mkdir(exist_ok=True)
                    backup = backups / f"{i:06d}"
                    os.replace(dest, backup)
                os.replace(tmp, dest)
                self.done.append((dest, backup))
        except BaseException:
            with interrupts_held():
                self.rollback()
            raise

    def rollback(self) -> None:
        for dest, backup in reversed(self.done):
            try:
                if backup is not None:
                    os.replace(backup, dest)
                else:
                    dest.unlink(missing_ok=True)
            except OSError:
                pass
        self.done.clear()
        for d in reversed(self.made_dirs):
            with suppress(OSError):
                d.rmdir()
        self.made_dirs.clear()
        self._made.clear()
        self._there.clear()

    def cleanup(self) -> None:
        if self._stage is not None:
            shutil.rmtree(self._stage, ignore_errors=True)
            self._stage = None


@contextmanager
def interrupts_held():
    """Ctrl-C waits while files are moved back: an undo cut short would leave
    the half-written workbench it is there to prevent."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


def remove_store(path: Path) -> None:
    for name in (path.name, path.name + "-wal", path.name + "-shm", path.name + "-journal", path.name + "-sound"):
        with suppress(OSError):
            (path.parent / name).unlink(missing_ok=True)


def imported_problem(folder: Path) -> tuple[str, str] | None:
    """(deck, problem) of a challenge folder written by an import, else None."""
    try:
        data = tomllib.loads((folder / "challenge.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    module = data.get("module")
    if isinstance(module, dict) and module.get("deck") and module.get("problem"):
        return str(module["deck"]), str(module["problem"])
    return None


def plan(deck: Deck, root: Path, tx: FileTransaction, result: ImportResult) -> tuple[list[Run], set[str], list[Run]]:
    """Stage every file; returns the runs whose answers are (or already were) in place,
    the challenges written, and the runs refused because their folder holds another answer."""
    challenges: set[str] = set()
    for problem in deck.problems.values():
        folder = root / "challenges" / problem.challenge
        if folder.exists():
            owner = imported_problem(folder)
            if owner != (deck.kind, problem.key):
                result.problems.append(
                    f"problem {problem.key}: challenges/{problem.challenge}/ exists and is not this deck's import of it "
                    f"({'deck ' + ' problem '.join(owner) if owner else 'a challenge of its own'}); "
                    "the problem and its runs are not imported")
                continue
        wrote = [tx.write(folder / rel, data) for rel, data in challenge_files(deck, problem).items()]
        result.challenges_written += any(wrote)
        result.files_written += sum(wrote)
        challenges.add(problem.key)
    result.challenges = len(challenges)
    placed, refused = [], []
    for run in deck.runs:
        problem = deck.problems[run.problem]
        if run.problem not in challenges:
            continue
        answer = root / "models" / run.model / problem.challenge
        files = run.answer_files(problem.module["answer_file"])
        target = answer / problem.module["answer_file"]
        if answer.exists():
            held = target.read_bytes() if target.is_file() else None
            if held == files[target.name]:  # this answer, already in place (files added beside it are kept)
                placed.append(run)
                continue
            what = "another solution.py" if held is not None else \
                   f"other files ({', '.join(sorted(p.name for p in answer.iterdir())[:3]) or 'none'}) and no solution.py"
            kept = "; its published result is kept, without its answer" if has_result(run.result) else ""
            result.problems.append(f"run {run.run_id}: models/{run.model}/{problem.challenge}/ already holds {what}; "
                                   f"an answer is never overwritten, so this run's answer is not imported{kept}")
            refused.append(run)
            continue
        wrote = [tx.write(answer / name, data, new=True) for name, data in files.items()]  # its folder is not there
        result.answers_written += any(wrote)
        result.files_written += sum(wrote)
        placed.append(run)
    result.answers = len(placed)
    result.models = len({r.model for r in placed})
    return placed, challenges, refused


def has_result(row: dict | None) -> bool:
    """Whether a run's published result is the deck's result file (not the leaderboard's figures alone)."""
    return bool(row and row.get("has_result"))


def count_results(result: ImportResult, placed: list[Run], without: list[dict], refused: list[Run]) -> None:
    rows = [r.result for r in placed] + without + [r.result for r in refused]
    result.results = sum(has_result(r) for r in rows)
    result.results_without_answer = len(without)
    result.results_refused = sum(has_result(r.result) for r in refused)
    result.results_board_only = sum(1 for r in rows if r and not has_result(r) and r.get("board_correct") is not None)


def import_deck(deck: Deck, root: Path, store_path: Path | None = None, *, dry_run: bool = False) -> ImportResult:
    """Write ``deck`` into the workbench at ``root`` (created if need be: models/, challenges/)
    and its published results into the store (``root/store.db`` unless given)."""
    result = ImportResult(deck.kind, deck.title, deck.path, deck.commit, deck.gpu, str(root), dry_run=dry_run,
                          problems=list(deck.problems_found), missing=deck.missing_lines(), notes=list(deck.notes))
    if not dry_run:
        root.mkdir(parents=True, exist_ok=True)
    tx = FileTransaction(root, dry=dry_run)
    try:
        placed, challenges, refused = plan(deck, root, tx, result)
        without = [r for r in deck.results_without_answer if r["problem"] in challenges]
        count_results(result, placed, without, refused)
        result.annotations = sum(len(r.annotations) for r in placed)
        result.annotations_other_gpu = sum(1 for r in placed for a in r.annotations if a.get("measured_on"))
        store_path = Path(store_path or root / "store.db")
        if dry_run:
            rehearse_store(store_path, deck, placed, without + [refused_row(r) for r in refused], result)
            return result
        new_store = not store_path.exists()
        try:  # every way out undoes what was written: an error, Ctrl-C (not an Exception), SystemExit
            for sub in ("models", "challenges"):
                if not (root / sub).exists():
                    tx._mkdirs(root / sub)
            tx.commit()
            store = Store(store_path, check=True)
            try:
                write_store(store, deck, placed, without + [refused_row(r) for r in refused], result)
            finally:
                store.close()
        except BaseException:
            with interrupts_held():
                tx.rollback()
                if new_store:  # a store this import made (perhaps without its tables) goes too
                    remove_store(store_path)
            raise
    finally:
        with interrupts_held():
            tx.cleanup()
    return result


def refused_row(run: Run) -> dict:
    """The published result of a run whose answer was not imported, as a result without an answer."""
    return {**(run.result or {}), "run_id": run.run_id, "problem": run.problem, "harness": run.harness,
            "deck_model": run.deck_model, "effort": run.effort}


def rehearse_store(store_path: Path, deck: Deck, placed: list[Run], without: list[dict], result: ImportResult) -> None:
    """A dry run's counts of what the store would get (line notes, rows new or changed): the
    import's rows written into the workbench's store and rolled back, or into a store in memory
    where there is none yet (or it awaits a migration, which a dry run does not apply)."""
    current = store_path.exists()
    store = Store(store_path, migrate=False) if current else Store(":memory:")
    try:
        if current and decks_sql.pending_migrations(store):
            store.close()
            store = Store(":memory:")
        with transactions.rehearsal(store):
            _write_import(store, deck, placed, without, result)
    finally:
        store.close()
        result.import_id = None


def _json(value) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _int(value) -> int | None:
    return None if value is None else int(bool(value))


def result_values(deck: Deck, row: dict, *, run_id: str, model: str | None, challenge: str, problem: str,
                  harness, deck_model, effort, has_answer: bool, source: str | None, sha: str | None,
                  import_id: int, at: str) -> tuple:
    return (deck.kind, run_id, model, challenge, problem, harness, deck_model, effort, int(has_answer),
            int(bool(row.get("has_result"))), _int(row.get("correct")), row.get("failure_reason"),
            row.get("peak_fraction"), row.get("speedup"), _json(row.get("shapes") or []), _json(row.get("stats") or {}),
            row.get("regime"), row.get("precision"), row.get("peak_tflops"), row.get("peak_bw_gbps"),
            row.get("board_label"), _int(row.get("board_correct")), row.get("board_peak_fraction"),
            row.get("annotation_verdict"), source, sha, deck.commit, import_id, at)


def write_store(store: Store, deck: Deck, placed: list[Run], without: list[dict], result: ImportResult) -> None:
    try:
        with transactions.write_transaction(store):
            _write_import(store, deck, placed, without, result)
    except transactions.StoreBusy as exc:
        raise DeckImportError(f"the store is busy, nothing imported: {exc}") from exc


def _write_import(store: Store, deck: Deck, placed: list[Run], without: list[dict], result: ImportResult) -> None:
    at = now_iso()
    import_id = decks_sql.insert_import(store, (
        deck.kind, deck.title, deck.path, deck.commit, deck.gpu, at, result.challenges, result.answers,
        result.results, result.annotations, _json(result.problems + result.missing), _json(result.notes)))
    result.import_id = import_id
    rows = []
    for run in placed:
        problem = deck.problems[run.problem]
        rows.append(result_values(deck, run.result or {}, run_id=run.run_id, model=run.model,
                                  challenge=problem.challenge, problem=run.problem, harness=run.harness,
                                  deck_model=run.deck_model, effort=run.effort, has_answer=True,
                                  source=run.source, sha=run.sha256, import_id=import_id, at=at))
    for row in without:
        problem = deck.problems[row["problem"]]
        rows.append(result_values(deck, row, run_id=row["run_id"], model=None, challenge=problem.challenge,
                                  problem=row["problem"], harness=row.get("harness"),
                                  deck_model=row.get("deck_model"), effort=row.get("effort"), has_answer=False,
                                  source=None, sha=None, import_id=import_id, at=at))
    result.results_written = decks_sql.upsert_results(store, rows)
    author = NOTE_AUTHOR.format(deck=deck.kind)
    annotations, notes = [], []
    for run in placed:
        challenge = deck.problems[run.problem].challenge
        answer_file = deck.problems[run.problem].module["answer_file"]
        for a in run.annotations:
            annotations.append((deck.kind, run.run_id, run.model, challenge, a["source"], a["verdict"], a["summary"],
                                a["peak_fraction"] if isinstance(a["peak_fraction"], (int, float)) else None,
                                a["auditor"], len(a["quotes"]), _json(a["body"]), a.get("measured_on"), import_id, at))
            for q in a["quotes"]:
                span = f"lines {q['start']}-{q['end']}" if q["start"] is not None and q["end"] != q["start"] else \
                       f"line {q['start']}" if q["start"] is not None else "no line given"
                text = f"[{a['verdict']}] {q['label'] or 'quoted'} ({span}; {a['source']})"
                relpath = answer_file if q["file"] == answer_file else q["file"]
                notes.append((run.model, challenge, relpath, q["start"], author, text))
    decks_sql.upsert_annotations(store, annotations)
    for model, challenge, relpath, line, who, text in notes:
        if decks_sql.add_note_once(store, model, challenge, relpath, line, who, text, at):
            result.notes_added += 1
