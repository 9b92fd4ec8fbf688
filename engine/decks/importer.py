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
import pickle
import shutil
import signal
import tempfile
import threading
import tomllib
from collections.abc import Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

from benchtui.decks.challenge import challenge_files
from benchtui.decks.model import Deck, Run
from benchtui.store import decks_sql, transactions
from benchtui.store.database import Store, now_iso
from benchtui.store.row_spool import PLACED, REFUSED, WITHOUT_ANSWER, RowSpool

NOTE_AUTHOR = "{deck} annotation"
O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


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
    """Writes that land together or not at all.

    A file that may replace one is staged and moved into place by :meth:`commit`; a new
    answer folder is written in place (:meth:`write_new_folder`: nothing there to replace,
    and undoing it is removing it). What was written is logged in order and undone in
    reverse; the log spills to a file in the stage (:meth:`settle`), so a transaction of any
    size holds a bounded part of it in memory."""

    SPILL = 4096  # log entries held before they go to the stage's log file

    def __init__(self, root: Path, *, dry: bool = False):
        self.root = root
        self.dry = dry  # only say what would be written
        self.staged: list[tuple[Path, Path]] = []    # (staged file, destination)
        # what was written, oldest first: ("file", destination, backup of what it replaced or None),
        # ("dir", folder made), ("folder", new folder, [names of the files written into it])
        self.done: list[tuple] = []
        self._spilled: list[int] = []  # offsets in the log file of the entries spilled there, a chunk each
        self._made: set[Path] = set()   # folders made here, to look up: one holds nothing to back up
        self._there: set[Path] = set()  # folders seen to exist already, not asked again per file
        self._stage: Path | None = None
        self._backups = 0  # files moved aside into the stage's replaced/

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

    def write_new_folder(self, folder: str, files: dict[str, bytes]) -> bool:
        """Make ``folder`` (its parents too) and write ``files`` (plain names) into it; False,
        writing nothing, where ``folder`` exists already. A dry run says whether it would."""
        if self.dry:
            return not os.path.exists(folder)
        try:
            os.mkdir(folder)
        except FileExistsError:
            return False
        except FileNotFoundError:  # its model's folder is new too
            self._mkdirs(Path(folder).parent)
            os.mkdir(folder)
        names: list[str] = []
        self.done.append(("folder", folder, names))  # logged first: a write cut short is undone too
        for name, data in files.items():
            names.append(name)
            fd = os.open(os.path.join(folder, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_CLOEXEC, 0o666)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
            finally:
                os.close(fd)
        return True

    def _mkdirs(self, folder: Path) -> None:
        missing = []
        while folder not in self._there and not folder.exists():
            missing.append(folder)
            folder = folder.parent
        self._there.add(folder)
        for d in reversed(missing):
            d.mkdir()
            self.done.append(("dir", d))
            self._made.add(d)
            self._there.add(d)

    def commit(self) -> None:
        """Move every staged file into place."""
        backups = self.stage / "replaced" if self.staged else None
        try:
            for tmp, dest in self.staged:
                self._mkdirs(dest.parent)
                backup = None
                if dest.parent not in self._made and dest.exists():
                    backups.mkdir(exist_ok=True)
                    self._backups += 1
                    backup = backups / f"{self._backups:06d}"
                    os.replace(dest, backup)
                os.replace(tmp, dest)
                self.done.append(("file", dest, backup))
            self.staged.clear()
        except BaseException:
            with interrupts_held():
                self.rollback()
            raise

    def settle(self) -> None:
        """Spill the log to the stage's log file once it has grown past SPILL entries."""
        if self.dry or len(self.done) < self.SPILL:
            return
        with open(self.stage / "written.log", "ab") as log:
            self._spilled.append(log.tell())
            pickle.dump(self.done, log, protocol=pickle.HIGHEST_PROTOCOL)
        self.done = []

    def rollback(self) -> None:
        """Undo everything written, newest first."""
        self._undo(self.done)
        self.done = []
        if self._spilled:
            with open(self.stage / "written.log", "rb") as log:
                for offset in reversed(self._spilled):
                    log.seek(offset)
                    self._undo(pickle.load(log))
            self._spilled.clear()
        self._made.clear()
        self._there.clear()

    @staticmethod
    def _undo(entries: list[tuple]) -> None:
        for entry in reversed(entries):
            kind, path = entry[0], entry[1]
            if kind == "file":
                backup = entry[2]
                with suppress(OSError):
                    if backup is not None:
                        os.replace(backup, path)
                    else:
                        os.unlink(path)
            elif kind == "folder":
                for name in reversed(entry[2]):
                    with suppress(OSError):
                        os.unlink(os.path.join(path, name))
                with suppress(OSError):
                    os.rmdir(path)
            else:
                with suppress(OSError):
                    os.rmdir(path)

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


def plan_challenges(deck: Deck, root: Path, tx: FileTransaction, result: ImportResult, said: list[str]) -> set[str]:
    """Stage every problem's challenge folder; the problems whose folder is (or will be) this
    deck's import of it. What is refused is said in ``said``."""
    challenges: set[str] = set()
    for problem in deck.problems.values():
        folder = root / "challenges" / problem.challenge
        if folder.exists():
            owner = imported_problem(folder)
            if owner != (deck.kind, problem.key):
                said.append(
                    f"problem {problem.key}: challenges/{problem.challenge}/ exists and is not this deck's import of it "
                    f"({'deck ' + ' problem '.join(owner) if owner else 'a challenge of its own'}); "
                    "the problem and its runs are not imported")
                continue
        wrote = [tx.write(folder / rel, data) for rel, data in challenge_files(deck, problem).items()]
        result.challenges_written += any(wrote)
        result.files_written += sum(wrote)
        challenges.add(problem.key)
    result.challenges = len(challenges)
    return challenges


def place_runs(deck: Deck, runs: list[Run], root: Path, tx: FileTransaction, result: ImportResult,
               challenges: set[str], said: list[str]) -> tuple[list[Run], list[Run]]:
    """Write the answers of ``runs`` into their new folders; returns the runs whose answers are
    (or already were) in place, and those refused because their folder holds another answer."""
    models = str(root / "models")
    placed, refused = [], []
    for run in runs:
        if run.problem not in challenges:
            continue
        problem = deck.problems[run.problem]
        answer_file = problem.module["answer_file"]
        folder = os.path.join(models, run.model, problem.challenge)
        files = run.answer_files(answer_file)
        if tx.write_new_folder(folder, files):
            result.answers_written += 1
            result.files_written += len(files)
            placed.append(run)
            continue
        held = held_bytes(os.path.join(folder, answer_file))
        if held == files[answer_file]:  # this answer, already in place (files added beside it are kept)
            placed.append(run)
            continue
        what = "another solution.py" if held is not None else f"other files ({held_names(folder)}) and no solution.py"
        kept = "; its published result is kept, without its answer" if has_result(run.result) else ""
        said.append(f"run {run.run_id}: models/{run.model}/{problem.challenge}/ already holds {what}; "
                    f"an answer is never overwritten, so this run's answer is not imported{kept}")
        refused.append(run)
    return placed, refused


def held_bytes(path: str) -> bytes | None:
    """The file's bytes, or None where there is no file."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def held_names(folder: str) -> str:
    try:
        return ", ".join(sorted(os.listdir(folder))[:3]) or "none"
    except OSError:
        return "none"


def has_result(row: dict | None) -> bool:
    """Whether a run's published result is the deck's result file (not the leaderboard's figures alone)."""
    return bool(row and row.get("has_result"))


def count_results(result: ImportResult, rows: Sequence[dict | None]) -> None:
    """Add published results (each run's, None where it has none) to the import's counts."""
    result.results += sum(has_result(r) for r in rows)
    result.results_board_only += sum(1 for r in rows if r and not has_result(r) and r.get("board_correct") is not None)


def import_deck(deck: Deck, root: Path, store_path: Path | None = None, *, dry_run: bool = False,
                on_batch=None) -> ImportResult:
    """Write ``deck`` into the workbench at ``root`` (created if need be: models/, challenges/)
    and its published results into the store (``root/store.db`` unless given).

    Its runs are taken a batch at a time (``Deck.run_batches``): each batch's answers are
    written and its rows set aside on disk (:class:`RowSpool`) before the next is read, so the
    memory an import takes does not grow with the deck. ``on_batch(result)`` is called after
    each batch, with the counts so far."""
    result = ImportResult(deck.kind, deck.title, deck.path, deck.commit, deck.gpu, str(root), dry_run=dry_run,
                          missing=deck.missing_lines())
    if not dry_run:
        root.mkdir(parents=True, exist_ok=True)
    tx = FileTransaction(root, dry=dry_run)
    store_path = Path(store_path or root / "store.db")
    new_store = not store_path.exists()
    scratch = None if not dry_run else Path(tempfile.mkdtemp(prefix="benchtui-import-dry-"))
    try:
        spool = RowSpool((scratch or tx.stage) / "rows.db")
        try:  # every way out undoes what was written: an error, Ctrl-C (not an Exception), SystemExit
            said: list[str] = []  # the import's own lines, after the reader's
            if not dry_run:
                for sub in ("models", "challenges"):
                    if not (root / sub).exists():
                        tx._mkdirs(root / sub)
            challenges = plan_challenges(deck, root, tx, result, said)
            if not dry_run:
                tx.commit()
            models: set[str] = set()
            for batch in deck.run_batches():
                placed, refused = place_runs(deck, batch, root, tx, result, challenges, said)
                spool_runs(spool, deck, placed, refused, result)
                models.update(r.model for r in placed)
                tx.settle()
                if on_batch is not None:
                    on_batch(result)
            without = [r for r in deck.results_without_answer if r["problem"] in challenges]
            spool.add_results(WITHOUT_ANSWER, [without_values(deck, row) for row in without])
            count_results(result, without)
            result.results_without_answer = len(without)
            result.models = len(models)
            result.problems = [*deck.problems_found, *said]
            result.notes = list(deck.notes)
            if dry_run:
                rehearse_store(store_path, deck, spool, result)
                return result
            store = Store(store_path, check=True)
            try:
                write_store(store, deck, spool, result)
            finally:
                store.close()
        except BaseException:
            with interrupts_held():
                tx.rollback()
                if new_store and not dry_run:  # a store this import made (perhaps without its tables) goes too
                    remove_store(store_path)
            raise
        finally:
            spool.close()
    finally:
        with interrupts_held():
            tx.cleanup()
            if scratch is not None:
                shutil.rmtree(scratch, ignore_errors=True)
    return result


def spool_runs(spool: RowSpool, deck: Deck, placed: list[Run], refused: list[Run], result: ImportResult) -> None:
    """A batch's rows set aside for the store, and its counts added."""
    spool.add_results(PLACED, [run_values(deck, run) for run in placed])
    spool.add_results(REFUSED, [without_values(deck, refused_row(run)) for run in refused])
    count_results(result, [r.result for r in placed] + [r.result for r in refused])
    result.results_refused += sum(has_result(r.result) for r in refused)
    result.answers += len(placed)
    author = NOTE_AUTHOR.format(deck=deck.kind)
    annotations, notes = [], []
    for run in placed:
        if not run.annotations:
            continue
        challenge = deck.problems[run.problem].challenge
        answer_file = deck.problems[run.problem].module["answer_file"]
        for a in run.annotations:
            result.annotations += 1
            result.annotations_other_gpu += bool(a.get("measured_on"))
            annotations.append((deck.kind, run.run_id, run.model, challenge, a["source"], a["verdict"], a["summary"],
                                a["peak_fraction"] if isinstance(a["peak_fraction"], (int, float)) else None,
                                a["auditor"], len(a["quotes"]), _json(a["body"]), a.get("measured_on")))
            for q in a["quotes"]:
                span = f"lines {q['start']}-{q['end']}" if q["start"] is not None and q["end"] != q["start"] else \
                       f"line {q['start']}" if q["start"] is not None else "no line given"
                text = f"[{a['verdict']}] {q['label'] or 'quoted'} ({span}; {a['source']})"
                relpath = answer_file if q["file"] == answer_file else q["file"]
                notes.append((run.model, challenge, relpath, q["start"], author, text))
    spool.add_annotations(annotations)
    spool.add_notes(notes)


def refused_row(run: Run) -> dict:
    """The published result of a run whose answer was not imported, as a result without an answer."""
    return {**(run.result or {}), "run_id": run.run_id, "problem": run.problem, "harness": run.harness,
            "deck_model": run.deck_model, "effort": run.effort}


def rehearse_store(store_path: Path, deck: Deck, spool: RowSpool, result: ImportResult) -> None:
    """A dry run's counts of what the store would get (line notes, rows new or changed): the
    import's rows written into the workbench's store and rolled back, or into a store in memory
    where there is none yet (or it awaits a migration, which a dry run does not apply)."""
    current = store_path.exists()
    store = Store(store_path, migrate=False) if current else Store(":memory:")
    try:
        if current and decks_sql.pending_migrations(store):
            store.close()
            store = Store(":memory:")
        with spool.attached(store) as rows, transactions.rehearsal(store):
            _write_import(store, deck, rows, spool, result)
    finally:
        store.close()
        result.import_id = None


def _json(value) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _int(value) -> int | None:
    return None if value is None else int(bool(value))


def result_values(deck: Deck, row: dict, *, run_id: str, model: str | None, challenge: str, problem: str,
                  harness, deck_model, effort, has_answer: bool, source: str | None, sha: str | None) -> tuple:
    """A deck_results row's values in RESULT_COLUMNS' order, less the stamps the store's write adds."""
    return (deck.kind, run_id, model, challenge, problem, harness, deck_model, effort, int(has_answer),
            int(bool(row.get("has_result"))), _int(row.get("correct")), row.get("failure_reason"),
            row.get("peak_fraction"), row.get("speedup"), _json(row.get("shapes") or []), _json(row.get("stats") or {}),
            row.get("regime"), row.get("precision"), row.get("peak_tflops"), row.get("peak_bw_gbps"),
            row.get("board_label"), _int(row.get("board_correct")), row.get("board_peak_fraction"),
            row.get("annotation_verdict"), source, sha, deck.commit)


def run_values(deck: Deck, run: Run) -> tuple:
    """The row of a run whose answer is in place."""
    return result_values(deck, run.result or {}, run_id=run.run_id, model=run.model,
                         challenge=deck.problems[run.problem].challenge, problem=run.problem, harness=run.harness,
                         deck_model=run.deck_model, effort=run.effort, has_answer=True, source=run.source,
                         sha=run.sha256)


def without_values(deck: Deck, row: dict) -> tuple:
    """The row of a published result with no answer in the workbench."""
    return result_values(deck, row, run_id=row["run_id"], model=None, challenge=deck.problems[row["problem"]].challenge,
                         problem=row["problem"], harness=row.get("harness"), deck_model=row.get("deck_model"),
                         effort=row.get("effort"), has_answer=False, source=None, sha=None)


def write_store(store: Store, deck: Deck, spool: RowSpool, result: ImportResult) -> None:
    try:
        with spool.attached(store) as rows, transactions.write_transaction(store):
            _write_import(store, deck, rows, spool, result)
    except transactions.StoreBusy as exc:
        raise DeckImportError(f"the store is busy, nothing imported: {exc}") from exc


def _write_import(store: Store, deck: Deck, rows: str, spool: RowSpool, result: ImportResult) -> None:
    """The import's record, then its rows from the spool attached as ``rows``."""
    at = now_iso()
    import_id = decks_sql.insert_import(store, (
        deck.kind, deck.title, deck.path, deck.commit, deck.gpu, at, result.challenges, result.answers,
        result.results, result.annotations, _json(result.problems + result.missing), _json(result.notes)))
    result.import_id = import_id
    result.results_written = decks_sql.upsert_results_from(store, f"{rows}.results", (import_id, at))
    decks_sql.upsert_annotations_from(store, f"{rows}.annotations", (import_id, at))
    for model, challenge, relpath, line, who, text in spool.notes():
        if decks_sql.add_note_once(store, model, challenge, relpath, line, who, text, at):
            result.notes_added += 1
