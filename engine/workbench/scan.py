"""Index a workbench into the store: models, answers, files, transcripts, warnings.

Rescans are incremental: a file whose size and mtime are unchanged keeps its
stored hash and kind (no re-read), and an answer whose files all do (and
whose git state and kinds stand) is skipped whole. Answer folders are only ever read.
"""
from __future__ import annotations

import difflib
import functools
import hashlib
import json
import os
import stat
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from benchtui.challenges.prompts import file_prompt_sha256
from benchtui.records.scan_kinds import CHAT_KIND, WAITING_KIND
from benchtui.store import scan_sql
from benchtui.store.database import Store, now_iso
from benchtui.text.caps import BINARY_TEXT, BINARY_TRANSCRIPT, EMPTY_TRANSCRIPT, TEXT_CAP_BYTES, over_cap
from benchtui.text.suggest import close_names
from benchtui.transcripts.sniff import HEAD_BYTES, sniff_format, sniff_head
from benchtui.workbench.answer_stat import DIR_FD, parts_from_listing, walk_parts
from benchtui.workbench.gitinfo import read_git
from benchtui.workbench.layout import Workbench
from benchtui.workbench.strays import MOST_NAMED, OUTSIDE_KIND, Stray, known_prompts, list_strays, match_prompt, read_chat

MAX_TEXT_BYTES = TEXT_CAP_BYTES  # larger text files are flagged, never parsed or displayed (engine/text/caps.py)
TEXT_KINDS = {"source", "cuda", "prompt", "doc", "transcript"}
SOURCE_EXT = {".py", ".c", ".cc", ".cpp", ".cxx", ".h", ".hpp", ".sh", ".toml", ".cfg", ".ini", ".yaml", ".yml", ".metal", ".js", ".rs", ".go"}
CUDA_EXT = {".cu", ".cuh", ".ptx"}
DOC_EXT = {".md", ".txt", ".rst", ".markdown"}
DATA_EXT = {".csv", ".tsv", ".npy", ".npz", ".bin", ".parquet", ".safetensors", ".pt", ".pkl", ".h5"}
TRANSCRIPT_EXT = {".jsonl", ".json", ".ndjson"}
WARNING_KINDS = ("no_answer", "duplicate_file", "prompt_drift", "unreadable_file", "challenge_override", "bad_challenge",
                 OUTSIDE_KIND)  # and the information beside them: scan_kinds.INFO_KINDS


@dataclass
class Warning:
    kind: str
    model: str | None
    challenge: str | None
    path: str | None
    detail: str

    def as_dict(self) -> dict:
        return {"kind": self.kind, "model": self.model, "challenge": self.challenge, "path": self.path, "detail": self.detail}


@dataclass
class ScanResult:
    scan_id: int
    models: int = 0
    answers: int = 0
    files: int = 0
    transcripts: int = 0
    hashed: int = 0
    unchanged: int = 0  # answers skipped whole: every file as its stored row says (_ModelPass._stat_sig)
    duration_s: float = 0.0
    git_commit: str | None = None
    warnings: list[Warning] = field(default_factory=list)
    info: list[Warning] = field(default_factory=list)  # what the scan did, not what is wrong (scan_kinds.INFO_KINDS)
    # where the time went: phase -> {"wall_s", "cpu_s" (this process), "workers_cpu_s"} (PhaseClock)
    phases: dict[str, dict[str, float]] = field(default_factory=dict)

    def as_json(self) -> dict:
        return {"models": self.models, "answers": self.answers, "files": self.files,
                "transcripts": self.transcripts, "warnings": [w.as_dict() for w in self.warnings],
                "info": [w.as_dict() for w in self.info]}


class PhaseClock:
    """Wall and CPU time of a scan's phases, this process's and its worker
    processes' apart (``bench/scale.py`` prints them): ``mark(name)`` closes
    the phase that ran since the last mark. Workers count once they are
    gone (getrusage's finished children): each phase's pool is shut down
    before its phase ends."""

    def __init__(self, into: dict[str, dict[str, float]]):
        self.into = into
        self.last = self._now()

    @staticmethod
    def _now() -> tuple[float, float, float]:
        try:
            import resource
        except ImportError:  # no getrusage here: the workers' share is not known
            children = 0.0
        else:
            usage = resource.getrusage(resource.RUSAGE_CHILDREN)
            children = usage.ru_utime + usage.ru_stime
        return time.perf_counter(), time.process_time(), children

    def mark(self, name: str) -> None:
        now = self._now()
        self.into[name] = {key: round(b - a, 3) for key, a, b in
                           zip(("wall_s", "cpu_s", "workers_cpu_s"), self.last, now)}
        self.last = now


@dataclass
class FileFacts:
    relpath: str
    size: int
    mtime_ns: int
    sha256: str
    kind: str
    readable: int
    problem: str | None
    lines: int | None
    transcript_format: str | None = None


def classify(relpath: str, data_files: set[str]) -> str:
    """A file's kind from its name (transcripts are refined by content)."""
    name = Path(relpath).name
    suffix = Path(relpath).suffix.lower()
    if name == "PROMPT.md" or (suffix in DOC_EXT and "prompt" in Path(relpath).stem.lower()):
        # a prompt the benchmark handed out (ternary_rerun_prompt.md): shared by design, never a copy
        return "prompt"
    if relpath in data_files or name in data_files or suffix in DATA_EXT:
        return "data"
    if suffix in CUDA_EXT:
        return "cuda"
    if suffix in SOURCE_EXT:
        return "source"
    if suffix in DOC_EXT:
        return "doc"
    return "artifact"


@functools.lru_cache(maxsize=1 << 16)
def _classify_cached(relpath: str, data_files: frozenset[str]) -> str:
    return classify(relpath, set(data_files))


def examine(path: Path | str, relpath: str, st: os.stat_result, data_files: set[str] | frozenset[str]) -> FileFacts:
    """Hash a file and decide its kind and readability (one read)."""
    kind = _classify_cached(relpath, frozenset(data_files))
    problem = None
    lines = None
    try:
        with open(path, "rb") as fh:
            # The head as large as the file (capped), not the cap: asking for
            # MAX_TEXT_BYTES + 1 bytes allocated 10 MB per file, a third of a
            # cold scan's reading. At least HEAD_BYTES + 1: sniffing needs to
            # know whether its head is the whole file.
            head = fh.read(max(min(st.st_size, MAX_TEXT_BYTES), HEAD_BYTES) + 1)
            digest = hashlib.sha256(head)
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
    except OSError as exc:
        return FileFacts(relpath, st.st_size, st.st_mtime_ns, "", kind, 0, f"unreadable: {exc.strerror or exc}", None)
    fmt = None
    binary = b"\x00" in head[:65536]
    empty = False
    if os.path.splitext(relpath)[1].lower() in TRANSCRIPT_EXT and kind != "data":  # Path().suffix's answer
        fmt = sniff_head(head, complete=len(head) <= HEAD_BYTES)  # the bytes just read: no second open
        # (the head is the whole file up to the cap: a file it shows blank holds no text at all)
        empty = not binary and st.st_size <= MAX_TEXT_BYTES and not head.removeprefix(b"\xef\xbb\xbf").strip()
        if fmt or binary or empty:
            # A binary or empty session.jsonl is still the answer's transcript: listed as one, and
            # flagged in the words `benchtui transcript` uses, not filed away as an artifact.
            kind = "transcript"
    if kind in TEXT_KINDS:
        if st.st_size > MAX_TEXT_BYTES:
            problem = over_cap(st.st_size, MAX_TEXT_BYTES)
        elif binary:
            problem = BINARY_TRANSCRIPT if kind == "transcript" else BINARY_TEXT
        elif empty:
            problem = EMPTY_TRANSCRIPT
        else:
            head = head[:MAX_TEXT_BYTES + 1]
            try:
                text = head.decode("utf-8")
                lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
            except UnicodeDecodeError as exc:
                problem = f"not UTF-8 (byte {exc.start}: {head[exc.start:exc.start + 1]!r})"
    return FileFacts(relpath, st.st_size, st.st_mtime_ns, digest.hexdigest(), kind, 0 if problem else 1, problem, lines, fmt)


def _examine_job(path: str, rel: str, st: os.stat_result, data_files: frozenset[str]) -> FileFacts:
    return examine(path, rel, st, data_files)


def _examine_chunk(jobs: list[tuple]) -> list[FileFacts]:
    return [_examine_job(*job) for job in jobs]


# Files hashed per job sent to a worker process: one job per file cost more
# in hand-overs than hashing most of them.
EXAMINE_CHUNK = 100
# Threads stat-ing answer folders at a rescan (_ModelPass.stat_models): this machine's cores
STAT_THREADS = min(os.cpu_count() or 1, 4)


class _Examiner:
    """examine() for many files, in order: submit() a batch, results() later.
    In forked worker processes (as many as engine/transcripts/index.py gives
    its parsing, and none beside other threads: the dashboard scans from a
    worker thread) once a batch brings at least POOL_MIN files to hash, else
    here. A pool that breaks leaves the rest to this process."""

    def __init__(self):
        self.pool = None
        self.broken = False

    def submit(self, jobs: list[tuple]) -> tuple:
        """Hand ``jobs`` to the workers (when they are used); results() waits for them."""
        from benchtui.transcripts.index import POOL_MIN, index_workers

        if self.pool is None and not self.broken and len(jobs) >= POOL_MIN:
            workers = index_workers(len(jobs))
            if workers > 1:
                import multiprocessing
                from concurrent.futures import ProcessPoolExecutor

                self.pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"))
        if self.pool is None or self.broken or len(jobs) < 2 * EXAMINE_CHUNK:
            return None, jobs  # examined here, when asked for
        from concurrent.futures import BrokenExecutor

        chunks = [jobs[i:i + EXAMINE_CHUNK] for i in range(0, len(jobs), EXAMINE_CHUNK)]
        futures = []
        for chunk in chunks:
            try:
                futures.append(None if self.broken else self.pool.submit(_examine_chunk, chunk))
            except BrokenExecutor:
                self.broken = True
                futures.append(None)
        return chunks, futures

    def results(self, handle: tuple) -> list[FileFacts]:
        from concurrent.futures import BrokenExecutor

        chunks, futures = handle
        if chunks is None:
            return _examine_chunk(futures)
        out: list[FileFacts] = []
        for chunk, future in zip(chunks, futures):
            try:
                out.extend(future.result() if future is not None and not self.broken else _examine_chunk(chunk))
            except BrokenExecutor:
                self.broken = True
                out.extend(_examine_chunk(chunk))
        return out

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None


def walk_answer(workbench: Workbench, folder: Path, links: set[str] | None = None):
    """(relpath, path, stat) for every regular file, never following links out;
    the relpaths that are symbolic links are added to ``links``.

    os.scandir, not pathlib: a rescan stats every file of every answer (60,000
    at bench/scale.py's size) and pathlib's per-path parsing was most of it."""
    stack = [("", os.fspath(folder))]
    while stack:
        prefix, directory = stack.pop()
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        subdirs = []
        for entry in entries:
            rel = prefix + entry.name
            try:
                is_link = entry.is_symlink()
                if not is_link and entry.is_dir(follow_symlinks=False):
                    if entry.name not in {"__pycache__", ".git"} and not entry.name.startswith("."):
                        subdirs.append((rel + "/", entry.path))
                    continue
            except OSError:
                yield rel, Path(entry.path), None
                continue
            if is_link:
                if links is not None:
                    links.add(rel)
                path = Path(entry.path)
                if path.is_dir():
                    continue  # a linked folder: never followed
                if not workbench.contains(path):
                    yield rel, path, None
                    continue
            try:
                st = entry.stat()  # follows a link that stays inside the workbench
            except OSError:
                yield rel, Path(entry.path), None
                continue
            if not stat.S_ISREG(st.st_mode):
                continue  # fifos, sockets: nothing to index
            yield rel, entry.path, st
        stack.extend(reversed(subdirs))


def _prompt_drift(store: Store, prompts: dict[str, list[tuple[str, str, str]]], challenges: dict) -> list[Warning]:
    """Compare each answer's PROMPT.md with the one most answers carry."""
    out = []
    for challenge, items in prompts.items():
        if len({sha for _, sha, _ in items}) < 2:
            continue  # every answer carries the same bytes: no drift, nothing to read
        items = [(model, sha, Path(path)) for model, sha, path in items]
        official = file_prompt_sha256(challenges[challenge].prompt_path) if challenge in challenges else None
        # Whitespace-only differences (a trailing newline, re-wrapped lines) are
        # the same prompt: compare hashes of the normalised text (engine/challenges/prompts.py).
        items = [(model, file_prompt_sha256(path) or sha, path) for model, sha, path in items]
        counts = Counter(sha for _, sha, _ in items)
        if len(counts) < 2:
            continue
        best = max(counts.values())
        leaders = sorted(sha for sha, n in counts.items() if n == best)
        canon = official if official in leaders else leaders[0]
        canon_path = next(p for _, sha, p in items if sha == canon)
        canon_lines = _read_lines(canon_path)
        for model, sha, path in items:
            if sha == canon:
                continue
            lines = _read_lines(path)
            diff = list(difflib.unified_diff(canon_lines, lines, lineterm="", n=0))
            added = sum(1 for d in diff if d.startswith("+") and not d.startswith("+++"))
            removed = sum(1 for d in diff if d.startswith("-") and not d.startswith("---"))
            ratio = difflib.SequenceMatcher(None, canon_lines, lines, autojunk=False).ratio()
            out.append(Warning("prompt_drift", model, challenge, f"{model}/{challenge}/PROMPT.md",
                               f"differs from the PROMPT.md {best} of {len(items)} answers carry: "
                               f"+{added} -{removed} lines, {ratio:.0%} similar"))
    return out


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


def sha256_file(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def scan_workbench(workbench: Workbench, store: Store, *, index_transcripts: bool = True,
                   on_model: Callable[[str, int, int], None] | None = None) -> ScanResult:
    """``on_model(model, done, total)``: called as each model's folder is reached (progress)."""
    started = time.perf_counter()
    phases: dict[str, dict[str, float]] = {}
    clock = PhaseClock(phases)
    git = read_git(workbench.root)
    scan_id = scan_sql.start_scan(store, {"started_at": now_iso(), "workbench": str(workbench.root),
                                          "layout": workbench.layout, "git_commit": git.commit,
                                          "git_dirty": int(git.dirty)})
    result = ScanResult(scan_id=scan_id, git_commit=git.commit, phases=phases)
    stamp = now_iso()
    result.warnings.extend(challenge_warnings(workbench))
    challenge_prompts = {cid: sha256_file(c.prompt_path) for cid, c in workbench.challenges.items()}

    with scan_sql.batch(store):
        _store_challenges(store, workbench.challenges, challenge_prompts)
        clock.mark("git_and_challenges")
        models = _ModelPass(workbench, store, git, result, stamp=stamp)
        models.run(on_model)
        clock.mark("files")
        scan_sql.update_answers(store, models.answer_updates)
        scan_sql.set_stat_walks(store, models.stat_walks)
        # Gone from disk: keep the rows (grades refer to them) but mark them absent.
        gone = scan_sql.mark_seen(store, models.seen_models, models.seen_answers, scan_id)
        changes = derived_key(store)
        if models.derived is not None and changes == models.changes_at_start:
            # nothing these warnings read has changed since the last scan derived them (m018)
            derived = [Warning(**w) for w in models.derived["warnings"]]
        else:
            # From the stored rows, as this scan left them: an answer skipped as
            # unchanged adds its files' hashes without being read again. Read
            # beside the stat calls (_ModelPass.store_reads) when this scan has
            # since changed no file row and no answer's presence.
            if models.early_reads is not None and not models.looked_into and not gone:
                shared, prompts = models.early_reads
            else:
                shared, prompts = scan_sql.shared_content(store), scan_sql.answer_prompts(store)
            derived = duplicate_warnings(_places_by_sha(shared))
            derived += _prompt_drift(store, _answer_prompts(prompts, workbench.root), workbench.challenges)
            scan_sql.keep_scan_derived(store, changes, scan_sql.unsettled_answers(store), [w.as_dict() for w in derived])
        result.warnings.extend(derived)
        result.models = len(models.seen_models)
        result.answers = len(models.seen_answers)
        result.unchanged = models.skipped
        scan_sql.replace_scan_warnings(store, scan_id, [w.as_dict() for w in result.warnings + result.info])
    clock.mark("rows_and_warnings")  # with the commit of everything above

    if index_transcripts:
        _index_transcripts(store, workbench, phases)
        clock.mark("transcripts")
    result.duration_s = time.perf_counter() - started
    scan_sql.finish_scan(store, scan_id, {
        "finished_at": now_iso(), "models": result.models, "answers": result.answers, "files": result.files,
        "transcripts": result.transcripts, "warnings": len(result.warnings), "hashed": result.hashed,
        "duration_s": round(result.duration_s, 4)})
    store.set_meta("last_scan_id", str(scan_id))
    return result


@functools.cache
def _derived_by() -> str:
    """A digest of the code that derives what scan_sql.scan_derived keeps (this
    module, scan_sql, the prompts' normalising): an upgrade or an edit of it
    derives them again rather than showing warnings worded by older code."""
    from benchtui.challenges import prompts

    digest = hashlib.blake2b(digest_size=8)
    for path in (__file__, scan_sql.__file__, prompts.__file__):
        with open(path, "rb") as fh:
            digest.update(fh.read())
    return digest.hexdigest()


def derived_key(store: Store) -> str | None:
    """Where the index stands (scan_sql.index_changes) and the code that derives from it; None without m018."""
    changes = scan_sql.index_changes(store)
    return None if changes is None else f"{changes}/{_derived_by()}"


def duplicate_warnings(by_sha: dict[str, list[tuple[str, str, str]]]) -> list[Warning]:
    """A warning on each file whose content another model's answer holds too."""
    out = []
    for sha, places in by_sha.items():
        if len({m for m, _, _ in places}) < 2:
            continue
        for model, cid, rel in places:
            others = ", ".join(f"{m}/{c}/{r}" for m, c, r in places if m != model)
            out.append(Warning("duplicate_file", model, cid, f"{model}/{cid}/{rel}",
                               f"same content (sha256 {sha[:12]}) as {others}"))
    return out


def _places_by_sha(shared: list[tuple[str, str, str, str]]) -> dict[str, list[tuple[str, str, str]]]:
    """scan_sql.shared_content's rows by hash."""
    by_sha: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    for sha, model, cid, rel in shared:
        by_sha[sha].append((model, cid, rel))
    return by_sha


def _answer_prompts(rows: list[tuple[str, str, str, str]], root: Path) -> dict[str, list[tuple[str, str, str]]]:
    """scan_sql.answer_prompts's rows by challenge, each with its PROMPT.md's path."""
    prompts: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    for cid, model, sha, rel_folder in rows:
        prompts[cid].append((model, sha, os.path.join(root, rel_folder, "PROMPT.md")))
    return prompts


class _ModelPass:
    """The scan's pass over the models' folders: each model's answers are walked
    (and their new or changed files handed to the examiner), then stored, with
    what the later steps need gathered on the way: the models and answers seen,
    the answers whose row changed. An answer whose every file matches its
    stored row (stat, git state, name-based kind) is skipped whole: nothing
    of it is examined, compared or written (``skipped`` counts them)."""

    def __init__(self, workbench: Workbench, store: Store, git, result: ScanResult, *, stamp: str):
        self.workbench, self.store, self.git, self.result, self.stamp = workbench, store, git, result, stamp
        self.challenges = workbench.challenges
        # The previous index: the answers' rows (with each one's stat digest) in one read; the file
        # and transcript rows only of the answers a rescan looks into, a model's in one read each
        self.existing_answers = scan_sql.previous_answers(store)
        self.existing_files: dict[int, dict[str, tuple]] = {}
        self.existing_transcripts: dict[int, dict[str, dict]] = {}
        self.unsettled: set[int] = set()  # store_reads
        self.early_reads: tuple[list, list] | None = None  # store_reads: shared content, answer prompts
        # store_reads: the last scan's derived results while the index is as it left them (scan_sql.scan_derived)
        self.changes_at_start: str | None = None
        self.derived: dict | None = None
        self._data_files: dict[str, tuple[set[str], frozenset[str]]] = {}
        self._kinds: dict[frozenset[str], dict[str, str]] = {}  # data files -> relpath -> kind by name
        self.skipped = 0
        self.looked_into = 0  # answers not skipped: their file and answer rows may be written
        self.seen_models: set[str] = set()
        self.seen_answers: set[int] = set()
        self.known = functools.cache(lambda: prompts_known(workbench))  # read once, when a chat export first needs it
        self.answer_updates: list[tuple] = []
        self.stat_walks: list[tuple[str, int]] = []  # (listing, answer id): answers.stat_walk to keep
        self.examiner: _Examiner | None = None

    def run(self, on_model: Callable[[str, int, int], None] | None = None) -> None:
        """A model's answers in two steps, walk (and hand the hashing out) then
        store, one model behind: the workers hash model k while this process
        stores model k - 1 and walks model k + 1. Rows are written in the
        same order as ever. Before that, the stat digest of each answer a
        rescan may skip, on both cores (stat_models)."""
        self.examiner = _Examiner()
        try:
            walked = None
            model_dirs = self.workbench.model_dirs()
            looked = self.stat_models(model_dirs)
            for i, (model, model_dir) in enumerate(model_dirs.items()):
                if on_model is not None:
                    on_model(model, i, len(model_dirs))
                ahead = self.walk_model(model, model_dir, *looked[model])
                if walked is not None:
                    self.store_model(*walked)
                walked = ahead
            if walked is not None:
                self.store_model(*walked)
        finally:
            self.examiner.close()

    def stat_models(self, model_dirs: dict[str, Path]) -> dict[str, tuple[dict[str, str], dict[str, str | None]]]:
        """model -> (its answer folders, challenge -> the stat digest of each
        answer with a stored one). In STAT_THREADS threads, one model at a
        time each: stat calls release the GIL, and most of a rescan with
        nothing changed is stat calls. The threads are gone before the walk
        (the examiner forks only a process without other threads)."""
        if len(model_dirs) < 2 or STAT_THREADS < 2:
            self.store_reads(early=False)
            return {model: self.stat_model(model, d) for model, d in model_dirs.items()}
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(STAT_THREADS, thread_name_prefix="benchtui-stat") as pool:
            # the store's reads in one thread (SQLite runs without the GIL), the stats beside them
            reads = pool.submit(self.store_reads, early=True)
            looked = dict(zip(model_dirs, pool.map(self.stat_model, model_dirs, model_dirs.values())))
            reads.result()
        return looked

    def store_reads(self, *, early: bool) -> None:
        """The answers whose rows a rescan cannot take as they are (``unsettled``)
        and, when ``early``, what the duplicate and prompt-drift warnings read
        (``early_reads``): the same rows after the model pass when it writes
        no file row and marks no answer gone (scan_workbench). Neither is read
        while the index is as the last scan left it (``derived``)."""
        self.changes_at_start = derived_key(self.store)
        self.derived = scan_sql.scan_derived(self.store, self.changes_at_start)
        stored = set(self.derived["unsettled"]) if self.derived is not None else scan_sql.unsettled_answers(self.store)
        self.unsettled = stored | self._renamed_kinds()
        if early and self.derived is None:
            self.early_reads = (scan_sql.shared_content(self.store), scan_sql.answer_prompts(self.store))

    def stat_model(self, model: str, model_dir: Path) -> tuple[dict[str, str], dict[str, str | None]]:
        """One model's share of stat_models; listings worth keeping go to stat_walks."""
        answer_dirs = self.workbench.answer_paths(model_dir)
        sigs: dict[str, str | None] = {}
        todo = [(cid, directory, row) for cid, directory in answer_dirs.items()
                if (row := self.existing_answers.get((model, cid))) is not None and row[7] is not None]
        if not todo:
            return answer_dirs, sigs
        if not DIR_FD:  # no stat relative to a folder here: each answer listed
            for cid, directory, row in todo:
                sigs[cid] = self._stat_sig(None, cid, directory, row)
            return answer_dirs, sigs
        try:
            dir_fd = os.open(model_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            return answer_dirs, sigs  # each answer looked into: the walk says what cannot be read
        try:
            for cid, directory, row in todo:
                sigs[cid] = self._stat_sig(dir_fd, cid, directory, row)
        finally:
            os.close(dir_fd)
        return answer_dirs, sigs

    def walk_model(self, model: str, model_dir: Path, answer_dirs: dict[str, str], sigs: dict[str, str | None]) -> tuple:
        """Walk a model's answers: an answer whose stat digest (``sigs``) is as
        stored is skipped whole; the new or changed files of the others go to
        the examiner in one batch (worker processes hash them while this
        process writes the previous model)."""
        workbench, result = self.workbench, self.result
        self.seen_models.add(model)
        rel_model = model_dir.relative_to(workbench.root).as_posix()
        scan_sql.upsert_model(self.store, model, rel_model, self.stamp)
        answers: list[tuple] = []
        jobs: list[tuple] = []
        answer_ids = set(answer_dirs)
        chats = stray_records(model, list_strays(model_dir, answer_ids, workbench.contains), answer_ids,
                              self.known, result, challenge_ids=workbench.challenges)
        walk: list[tuple] = []  # (cid, directory, data files, row) of the answers looked into
        for cid, directory in answer_dirs.items():
            data_files, frozen = self.data_files(cid)
            row = self.existing_answers.get((model, cid))
            rel_folder = f"{rel_model}/{cid}" if rel_model != "." else cid
            if (row is not None and row[7] is not None and row[1:3] == (rel_folder, "answer") and row[6] == 1
                    and cid not in chats and row[0] not in self.unsettled
                    and sigs.get(cid) == row[7]):
                answers.append((cid, None, None, None, None, None))  # nothing to do but count it
                continue
            walk.append((cid, directory, data_files, row))
        self.looked_into += len(walk)
        known = [row[0] for _, _, _, row in walk if row is not None]
        self.existing_files.update(scan_sql.previous_files(self.store, known))
        self.existing_transcripts.update(scan_sql.previous_transcripts(self.store, known))
        for cid, _directory, data_files, row in walk:
            old = self.existing_files.get(row[0], {}) if row is not None else {}
            folder = model_dir / cid
            links: set[str] = set()
            listed = _listed_files(workbench, folder, old, self.data_files(cid)[1], links, jobs)
            answers.append((cid, folder, data_files, old, listed, links))
        result.hashed += len(jobs)
        return model, rel_model, answers, self.examiner.submit(jobs), chats

    def _renamed_kinds(self) -> set[int]:
        """The answers holding a file stored as a doc or prompt that today's naming
        rules (and the challenge's data files) call something else: the stat
        digest is of today's names, so a kind stored otherwise (by an older
        scanner) is looked for here, once per name, not per file."""
        with_data = [cid for cid, c in self.challenges.items() if c.data_files]
        out: set[int] = set()
        for cid, rel, kind in scan_sql.name_kinds(self.store, with_data):
            frozen = self.data_files(cid)[1] if cid is not None else frozenset()
            if self.kind_by_name(rel, frozen) != kind:
                out |= scan_sql.answers_holding(self.store, rel, kind, cid)
        return out

    def data_files(self, cid: str) -> tuple[set[str], frozenset[str]]:
        """The challenge's data files, as a set and as a frozenset (read once per scan)."""
        got = self._data_files.get(cid)
        if got is None:
            names = set(self.challenges[cid].data_files)
            got = self._data_files[cid] = (names, frozenset(names))
        return got

    def kind_by_name(self, rel: str, frozen: frozenset[str]) -> str:
        """classify(rel) under the challenge's data files (a dict per data-file set: most names repeat)."""
        kinds = self._kinds.get(frozen)
        if kinds is None:
            kinds = self._kinds[frozen] = {}
        kind = kinds.get(rel)
        if kind is None:
            kind = kinds[rel] = _classify_cached(rel, frozen)
        return kind

    def _stat_sig(self, dir_fd: int | None, cid: str, directory: str, row: tuple) -> str | None:
        """stat_signature of the answer folder as it is now, None when only the
        full walk can tell (a link, something that cannot be read). Every file
        is stat'ed (an edit in place keeping the size still moves the mtime),
        by the folder's stored listing while its folders are as they were
        (answer_stat.py); a listing taken anew is kept (stat_walks)."""
        frozen = self.data_files(cid)[1]
        status_of = None if self.git.top is None else self.git.status_in(Path(directory))
        kinds = self._kinds.get(frozen)
        if kinds is None:
            kinds = self._kinds[frozen] = {}

        def kind_of(rel: str) -> str:
            return kinds.get(rel) or self.kind_by_name(rel, frozen)

        parts = parts_from_listing(dir_fd, cid, row[8], kinds, kind_of, status_of) if row[8] and dir_fd is not None else None
        if parts is None:
            parts, listing = walk_parts(directory, kind_of, status_of)
            if parts is None:
                return None
            if listing is not None and listing != row[8]:
                self.stat_walks.append((listing, row[0]))
        return stat_signature(parts, frozen)

    def store_model(self, model: str, rel_model: str, answers: list, handle: tuple, chats: dict) -> None:
        """Write a walked model's answers: their files, transcripts and rows."""
        examined = self.examiner.results(handle)
        result = self.result
        for cid, folder, data_files, old, listed, links in answers:
            row = self.existing_answers.get((model, cid))
            if folder is None and row is not None:  # unchanged (walk_model): its rows stand as they are
                self.seen_answers.add(row[0])
                self.skipped += 1
                result.files += row[3]
                result.transcripts += row[4]
                continue
            # answer_dirs names each folder model_dir / cid: no relative_to per answer
            rel_folder = f"{rel_model}/{cid}" if rel_model != "." else cid
            answer_id = (scan_sql.insert_answer(self.store, model, cid, rel_folder, self.stamp)
                         if row is None else row[0])
            self.seen_answers.add(answer_id)
            facts = self._facts(model, cid, listed, examined)
            _store_files(self.store, answer_id, facts, old, self.git, folder, links)
            transcripts = [f for f in facts if f.kind == "transcript"]
            # with the chat exports at the model's root that quote this challenge's prompt (../NAME)
            all_transcripts = transcripts + chats.get(cid, [])
            _store_transcripts(self.store, answer_id, all_transcripts, self.existing_transcripts.get(answer_id, {}),
                               folder)
            status = _answer_status(result, model, cid, facts, transcripts, data_files)
            values = (rel_folder, status, len(facts), len(all_transcripts), sum(f.size for f in facts), 1,
                      self._written_sig(folder, listed, facts, links, cid))
            if row is None or row[1:8] != values:  # an unchanged answer is not written (last_seen: mark_seen)
                self.answer_updates.append((*values, self.stamp, answer_id))
            result.files += len(facts)
            result.transcripts += len(all_transcripts)

    def _written_sig(self, folder: Path, listed: list, facts: list[FileFacts], links: set[str], cid: str) -> str | None:
        """The stat_signature a later rescan's _stat_sig finds while nothing
        changes: from the facts just stored (None with a link or a file that
        could not be read: those answers are looked into each time)."""
        if links or len(facts) != len(listed):
            return None
        frozen = self.data_files(cid)[1]
        status_of = None if self.git.top is None else self.git.status_in(folder)
        return stat_signature([stat_part(f.relpath, f.size, f.mtime_ns,
                                         status_of(f.relpath) if status_of is not None else None,
                                         self.kind_by_name(f.relpath, frozen)) for f in facts], frozen)

    def _facts(self, model: str, cid: str, listed: list, examined: list) -> list[FileFacts]:
        """An answer's files' facts (stored, or as the examiner found them); a
        warning for each that cannot be read."""
        result = self.result
        facts: list[FileFacts] = []
        for rel, _path, f in listed:
            if isinstance(f, str):
                result.warnings.append(Warning("unreadable_file", model, cid, f"{model}/{cid}/{rel}", f))
                continue
            if isinstance(f, int):
                f = examined[f]
            facts.append(f)
            if f.problem:
                result.warnings.append(Warning("unreadable_file", model, cid, f"{model}/{cid}/{rel}", f.problem))
        return facts


def stat_part(rel: str, size: int, mtime_ns: int, git_status: str | None, kind_by_name: str) -> str:
    """One file's share of stat_signature."""
    return f"{rel}\0{size}\0{mtime_ns}\0{git_status or ''}\0{kind_by_name}"


def stat_signature(parts: list[str], data_files: frozenset[str]) -> str:
    """A digest of an answer folder as a rescan sees it without reading a file:
    each regular file's stat_part (name, size, mtime, git state, kind by
    today's naming rules) and the challenge's data files. Stored with the
    answer (answers.stat_sig): a rescan that finds the same digest, for an
    answer whose rows need nothing else, skips it whole."""
    parts.sort()
    text = "\n".join(parts) + "\n\0" + "\0".join(sorted(data_files))
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _listed_files(workbench: Workbench, folder: Path, old: dict[str, tuple], frozen_data: frozenset,
                  links: set[str], jobs: list) -> list[tuple]:
    """(rel, path, FileFacts | index into ``jobs`` | why it could not be read) for
    each file of an answer folder, in walk order: a file whose size and mtime
    match its stored row keeps its stored facts; the others are appended to
    ``jobs`` for the examiner."""
    listed = []
    for rel, path, st in walk_answer(workbench, folder, links):
        if st is None:
            listed.append((rel, path, "symlink leaves the workbench (not followed)"
                           if Path(path).is_symlink() else "cannot stat"))
            continue
        prev = old.get(rel)
        # prev: scan_sql.FILE_COLUMNS (id, relpath, size, mtime_ns, sha256, kind, readable, problem, git_status, lines)
        if prev and prev[2] == st.st_size and prev[3] == st.st_mtime_ns and prev[4]:
            kind = prev[5]
            if kind in ("doc", "prompt"):  # name-based: follow the current rules
                kind = _classify_cached(rel, frozen_data)
            listed.append((rel, path, FileFacts(rel, st.st_size, st.st_mtime_ns, prev[4], kind, prev[6],
                                                prev[7], prev[9])))
        else:
            listed.append((rel, path, len(jobs)))
            jobs.append((path, rel, st, frozen_data))
    return listed


def _answer_status(result: ScanResult, model: str, cid: str, facts: list[FileFacts], transcripts: list[FileFacts],
                   data_files: set[str]) -> str:
    """"answer", or "no_answer" with a warning (or, for a folder that holds only
    what was handed out, information) that says what the folder holds.
    The prompt, transcripts and the data the challenge hands out are not an answer."""
    substantive = [f for f in facts if f.kind not in {"prompt", "transcript"} and f.relpath not in data_files]
    if substantive:
        return "answer"
    detail = "the folder holds only its PROMPT.md" if not transcripts else "only PROMPT.md and a transcript: no answer files"
    if any(f.relpath in data_files for f in facts):
        detail += " (and the challenge's data files)"
    if not facts:
        detail = "the folder is empty"
    if facts and not transcripts:
        # what `deploy` (or new-model) hands out and nothing else: the model has not
        # answered yet; information, not a warning (the matrix still shows no answer)
        result.info.append(Warning(WAITING_KIND, model, cid, f"{model}/{cid}", f"waiting for an answer: {detail}"))
    else:
        result.warnings.append(Warning("no_answer", model, cid, f"{model}/{cid}", detail))
    return "no_answer"


def prompts_known(workbench: Workbench) -> dict[str, list[str]]:
    """strays.known_prompts for this workbench (read only when a chat export needs it)."""
    answer_prompts: dict[str, list[Path]] = defaultdict(list)
    for model_dir in workbench.model_dirs().values():
        for cid, folder in workbench.answer_dirs(model_dir).items():
            if (folder / "PROMPT.md").is_file():
                answer_prompts[cid].append(folder / "PROMPT.md")
    return known_prompts(workbench.challenges, answer_prompts)


def misnamed(relpath: str, challenge_ids) -> str:
    """For a file in a folder named like a challenge ("flash_atention/kernel.py"): "; did you mean
    'flash_attention'?", so a misspelt answer folder is named as one; else ""."""
    folder = relpath.split("/", 1)[0] if "/" in relpath else ""
    close = close_names(folder, challenge_ids, n=1) if folder else []
    return f"; {folder}/ is not a challenge: did you mean {close[0]!r}?" if close else ""


def stray_records(model: str, strays: list[Stray], answer_ids: set[str], known, result: ScanResult,
                  challenge_ids=()) -> dict[str, list[FileFacts]]:
    """Name each file of the model's folder outside its answer folders (in
    ``result``); returns challenge id -> the chat exports that quote its prompt,
    as transcript facts of that answer (relpath ``../NAME``). ``known``: a
    callable giving strays.known_prompts, called when a chat needs it."""
    chats: dict[str, list[FileFacts]] = defaultdict(list)
    prompts = None
    for stray in strays[:MOST_NAMED]:
        where = f"{model}/{stray.relpath}"
        if stray.st is None:
            result.warnings.append(Warning(OUTSIDE_KIND, model, None, where, f"outside any challenge folder, {stray.problem}"))
            continue
        chat = read_chat(stray, MAX_TEXT_BYTES)
        if chat is None:
            result.warnings.append(Warning(OUTSIDE_KIND, model, None, where, "outside any challenge folder: not indexed"
                                           + misnamed(stray.relpath, challenge_ids)))
            continue
        prompts = known() if prompts is None else prompts
        cid, close = match_prompt(chat.prompt, prompts)
        if cid in answer_ids:
            chats[cid].append(FileFacts("../" + stray.relpath, chat.size, chat.mtime_ns, chat.sha256, "transcript", 1, None,
                                        chat.lines, "chat"))
            result.info.append(Warning(CHAT_KIND, model, cid, where, f"a one-shot chat export quoting {cid}'s prompt: "
                                       f"indexed as {model}/{cid}'s transcript"))
        elif cid:
            result.warnings.append(Warning(OUTSIDE_KIND, model, None, where, f"a one-shot chat export quoting {cid}'s "
                                           f"prompt, but {model} has no {cid}/ folder: not indexed"))
        elif close:
            result.warnings.append(Warning(OUTSIDE_KIND, model, None, where, "a one-shot chat export whose prompt is as "
                                           f"close to {' as to '.join(close)}: not indexed"))
        else:
            result.warnings.append(Warning(OUTSIDE_KIND, model, None, where, "a one-shot chat export quoting no "
                                           "challenge's prompt: not indexed"))
    if len(strays) > MOST_NAMED:
        result.warnings.append(Warning(OUTSIDE_KIND, model, None, f"{model}/", f"{len(strays) - MOST_NAMED} more files "
                                       "outside any challenge folder: not indexed"))
    return chats


def challenge_warnings(workbench: Workbench) -> list[Warning]:
    """What the workbench's own challenges/ changed in the bundled set, and
    what in it could not be read (engine/challenges/catalog.py)."""
    from benchtui.challenges.catalog import same_content

    found = workbench.challenge_set
    out = [Warning("challenge_override", None, o.id, f"challenges/{o.own.name}", o.describe())
           for o in found.overrides if not same_content(o.own, o.bundled)]
    for folder, message in found.problems:
        out.append(Warning("bad_challenge", None, folder.name, f"challenges/{folder.name}",
                           f"left out: {message}"))
    return out


def _store_files(store: Store, answer_id: int, facts: list[FileFacts], old: dict[str, tuple], git, folder: Path,
                 links: set[str]) -> None:
    """Write the answer's files that changed; ``old``: relpath -> the stored row,
    a tuple of scan_sql.FILE_COLUMNS."""
    keep = {f.relpath for f in facts}
    gone = [r[0] for rel, r in old.items() if rel not in keep]
    updates, fresh = [], []
    status_of = git.status_in(folder, links)
    for f in facts:
        prev = old.get(f.relpath)
        values = (f.relpath, f.size, f.mtime_ns, f.sha256, f.kind, f.readable, f.problem, status_of(f.relpath), f.lines)
        if prev is None:
            fresh.append((answer_id, *values))
        elif prev[1:] != values:
            updates.append((*values, prev[0]))
        # unchanged: no write (keeps warm rescans cheap)
    scan_sql.write_files(store, answer_id, gone, updates, fresh)


def _store_challenges(store: Store, challenges: dict, prompts: dict[str, str | None]) -> None:
    """Upsert the challenges' rows; unchanged rows are not written."""
    stored = scan_sql.stored_challenges(store)
    rows = []
    for pos, (cid, c) in enumerate(challenges.items()):
        values = (c.position if c.position != 99 else pos + 1, c.title, c.difficulty, c.language,
                  json.dumps(list(c.backends)), json.dumps(list(c.display_names)),
                  json.dumps(list(c.forbidden_imports)), str(c.path), prompts.get(cid))
        if stored.get(cid) != values:
            rows.append((cid, *values))
    scan_sql.upsert_challenges(store, rows)


def _store_transcripts(store: Store, answer_id: int, transcripts: list[FileFacts], old: dict[str, dict],
                       folder: Path) -> None:
    keep = {f.relpath for f in transcripts}
    for rel, r in old.items():
        if rel not in keep:
            scan_sql.delete_transcript(store, r["id"])
    for f in transcripts:
        prev = old.get(f.relpath)
        if prev and prev["sha256"] == f.sha256 and (not f.problem or prev.get("status") == "error"):
            continue  # unchanged (a file the cap now refuses is marked again, below)
        fmt = f.transcript_format or sniff_format(folder / f.relpath)
        values = {"answer_id": answer_id, "relpath": f.relpath, "sha256": f.sha256, "size": f.size,
                  "format": fmt, "status": "found" if f.readable else "error", "problem": f.problem}
        if f.problem:
            values["parsed_sha256"] = None  # the indexer records why it is not parsed (without reading it whole)
        scan_sql.write_transcript(store, prev["id"] if prev else None, values)


def _index_transcripts(store: Store, workbench: Workbench, phases: dict[str, dict[str, float]] | None = None) -> None:
    from benchtui.transcripts.index import index_pending  # parses only new or changed transcripts

    index_pending(store, workbench.root, phases=phases)
