"""One answer run as a self-contained job bundle, and the function that runs it.

A bundle holds everything a run needs from the driver's disk, by value: the
answer's scratch copy (a tar: links leaving the workbench already dropped,
the challenge's data files already added), the adapter's bytes and the lines
the driver already wrote to the results file (the ``adapter`` check), the
challenge plugin (a tar, or its local path when the run stays on this
machine), the job (seed, backend, thresholds, prompt facts) and the limits.

:func:`execute_bundle` is the part of a run that needs only files: scratch
folder -> the two sandboxed processes -> the results file parsed -> the
self-check. It runs the same on the driver (``benchtui run``) and inside a
Ray task on a worker node (``benchtui run --cluster``): answer code only ever
runs inside the sandbox it starts, never in the process calling it. What it
returns is plain data; the driver judges it (verdict, coverage) and writes
the store. Nothing here touches the store or the workbench.
"""
from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
import json
import os
import platform
import socket
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NotRequired, TypedDict, cast

import benchtui
from benchtui.challenges.definition import RunLimits
from benchtui.host import resources
from benchtui.host.backends import probe_all
from benchtui.records.checks import CheckRow, DoneRecord
from benchtui.records.job import Job
from benchtui.records.verdicts import CHECK_VERDICTS, MISSING_DEPENDENCY
from benchtui.runner import sandbox
from benchtui.runner.selfcheck import plan_self_check, read_capped
from benchtui.verify import gpu_lock, monitor

REPO_ROOT = resources.PACKAGE_ROOT  # all of benchtui's files: the clone, or the installed package folder
ANSWER_GRACE_S = 5.0


class SelfCheckResult(TypedDict, total=False):
    """The answer's own tests, run after its checks: shown, never counted (engine/runner/selfcheck.py)."""
    self_status: str
    self_command: str
    self_output: str
    self_exit_code: int
    self_duration_s: float


class WorkerFacts(TypedDict):
    """Where a cluster task ran: versions and the device, as the run row records them."""
    versions: dict[str, str]
    device: str
    pid: int


class BundleResult(TypedDict):
    """What ``execute_bundle`` returns, here or from a Ray task: plain data."""
    checks: list[CheckRow]
    done: DoneRecord | None  # None: the checker did not run to its end
    timed_out: bool
    wall_s: float
    stopped: bool  # by the caller (Ctrl-C, a cancelled batch), not by a limit
    exit_code: int | None
    signal: int | None
    layer: str
    in_flight: str | None  # the check the time limit stopped
    checker_stderr: str
    answer_stdout: str
    answer_stderr: str
    host: str
    trace: NotRequired[Any]  # an audit's baseline (collect_trace)
    lines: NotRequired[dict[str, Any]]  # an audit's baseline (collect_lines)
    self_check: NotRequired[SelfCheckResult]
    node: NotRequired[str]  # a cluster task's node
    facts: NotRequired[WorkerFacts]  # a cluster task's worker


@dataclass
class JobBundle:
    """Everything one run needs, by value (picklable: it travels through Ray's object store)."""
    key: str  # "model/challenge" (a run) or the mutant's cache key (an audit)
    model: str
    challenge_id: str
    answer_tar: bytes  # the scratch copy, ready to run
    job: Job  # without the paths and descriptors, filled in where it runs
    limits: RunLimits
    gpu: bool = False
    challenge_dir: str | None = None  # the plugin's folder, when it runs on the driver's machine
    challenge_tar: bytes | None = None  # the plugin itself, when it travels (a Ray task)
    adapter_name: str | None = None
    adapter_bytes: bytes | None = None
    results_preamble: str = ""  # results lines the driver wrote before the run (the `adapter` check)
    overlay: dict[str, str] = field(default_factory=dict)  # relpath -> text written over the copy (an audit's mutant)
    self_check: bool = True
    layer: str = "auto"  # the sandbox layer; "auto": the strongest that works where it runs
    allow_unsafe: bool = False
    checker: str = "benchtui.runner.child"
    answer_server: str = "benchtui.runner.answer_server"
    collect_trace: bool = False  # an audit's baseline: the {"trace"} line of the results
    collect_lines: str | None = None  # an audit's baseline: this file of the answer's copy (lines reached)
    hide: list[str] = field(default_factory=list)  # the driver's folders an answer must not see, where they exist
    engine_version: str = benchtui.__version__
    engine_fingerprint: str = ""


# -- trees as bytes --------------------------------------------------------------------

def pack_tree(folder: Path, skip_adapters: bool = False) -> bytes:
    """A tar of ``folder``'s regular files and folders (no links, no caches), in name order."""
    buf = io.BytesIO()
    folder = Path(folder)
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(folder.rglob("*")):
            rel = path.relative_to(folder)
            if "__pycache__" in rel.parts or path.is_symlink():
                continue
            if path.is_dir():
                info = tarfile.TarInfo(rel.as_posix())
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
            elif path.is_file():
                data = path.read_bytes()
                info = tarfile.TarInfo(rel.as_posix())
                info.size, info.mode = len(data), 0o644 | (path.stat().st_mode & 0o111)
                tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def unpack_tree(data: bytes, dst: Path) -> None:
    """Unpack a :func:`pack_tree` tar into ``dst``; nothing may land outside it."""
    dst = Path(dst)
    dst.mkdir(parents=True, exist_ok=True)
    root = dst.resolve()
    with tarfile.open(fileobj=io.BytesIO(data), mode="r") as tar:
        for member in tar.getmembers():
            target = (root / member.name).resolve()
            if not (member.isfile() or member.isdir()) or (target != root and root not in target.parents):
                raise ValueError(f"refusing a tar member outside the folder or not a plain file: {member.name!r}")
            if member.isdir():
                target.mkdir(parents=True, exist_ok=True)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                src = tar.extractfile(member)
                if src is None:  # a plain file always has its bytes; said, were it ever not
                    raise ValueError(f"a tar member without its bytes: {member.name!r}")
                with src:
                    target.write_bytes(src.read())
                if member.mode & 0o111:
                    target.chmod(0o755)


def open_up(folder: Path) -> None:
    """The sandbox may run as an unprivileged uid: make the scratch tree writable for it."""
    for path in [folder, *folder.rglob("*")]:
        with contextlib.suppress(OSError):
            path.chmod(0o777 if path.is_dir() else 0o666)


_fingerprint: str | None = None


def engine_fingerprint() -> str:
    """sha256 over engine's own Python files: a worker running other code than the driver is refused."""
    global _fingerprint
    if _fingerprint is None:
        root = Path(benchtui.__file__).resolve().parent
        h = hashlib.sha256()
        for path in sorted(root.rglob("*.py")):
            if "__pycache__" not in path.parts:
                h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
        _fingerprint = h.hexdigest()
    return _fingerprint


class EngineMismatch(RuntimeError):
    """The worker's benchtui is not the driver's: install the same version on every node."""


def check_engine(bundle: JobBundle) -> None:
    if bundle.engine_version != benchtui.__version__ or (bundle.engine_fingerprint and bundle.engine_fingerprint != engine_fingerprint()):
        raise EngineMismatch(
            f"benchtui on node {platform.node()} ({benchtui.__version__}, {engine_fingerprint()[:12]}, {Path(benchtui.__file__).parent}) "
            f"is not the driver's ({bundle.engine_version}, {bundle.engine_fingerprint[:12]}): install the same benchtui on every node")


# -- running it ------------------------------------------------------------------------

def hidden_from_answers(bundle: JobBundle, challenge_path: Path) -> list[Path]:
    """What an answer's process must not see on this machine: the challenges,
    the driver's workbench and store where this machine has them, and
    benchtui's own files (the checkout, or the installed challenges, demo
    and dashboard)."""
    return [challenge_path.parent, *(Path(p) for p in bundle.hide), resources.bundled_challenges(), *resources.install_folders()]


def execute_bundle(bundle: JobBundle, layer: str | None = None, stop: threading.Event | None = None) -> BundleResult:
    """Run one bundle: scratch copy -> checker and answer, each in its own
    sandbox -> results parsed -> the self-check on a fresh copy. ``layer``:
    a sandbox layer already chosen here (else the bundle's request is
    resolved on this machine). Returns plain data (see the end)."""
    if layer is None:
        layer = sandbox.choose_layer(bundle.layer, allow_unsafe=bundle.allow_unsafe)
    limits = bundle.limits
    with tempfile.TemporaryDirectory(prefix="benchtui-run-") as scratch:
        tmp = Path(scratch)
        work, out = tmp / "answer", tmp / "out"
        unpack_tree(bundle.answer_tar, work)
        for rel, text in bundle.overlay.items():
            (work / rel).write_text(text, encoding="utf-8")
        open_up(work)
        if bundle.challenge_tar is not None:
            challenge_path = tmp / "challenges" / bundle.challenge_id
            unpack_tree(bundle.challenge_tar, challenge_path)
        else:
            challenge_path = Path(bundle.challenge_dir or "")
        out.mkdir()
        open_up(out)
        results = out / "results.jsonl"
        if bundle.results_preamble:
            results.write_text(bundle.results_preamble, encoding="utf-8")
            results.chmod(0o666)
        adapter = None
        if bundle.adapter_name and bundle.adapter_bytes is not None:
            adapter = tmp / "adapter" / bundle.adapter_name
            adapter.parent.mkdir()
            adapter.write_bytes(bundle.adapter_bytes)
            adapter.parent.chmod(0o777)
            adapter.chmod(0o666)
        job = dataclasses.replace(bundle.job, challenge_dir=str(challenge_path), answer_dir=str(work),
                                  adapter_path=str(adapter) if adapter else None, results_path=str(results))
        hide = hidden_from_answers(bundle, challenge_path)
        # One GPU job at a time per device (engine/verify/gpu_lock.py): the checker locks this
        # descriptor before it touches the GPU; it is released when it is closed here, after
        # both processes ended. CPU-only jobs stay parallel.
        lock_fd = gpu_lock.open_lock() if bundle.gpu else None
        try:
            checks, done, res = two_processes(job, work, out, adapter, challenge_path, limits, bundle.gpu, layer, hide,
                                              checker=bundle.checker, answer_server=bundle.answer_server, cancel=stop,
                                              gpu_lock_fd=lock_fd)
        finally:
            if lock_fd is not None:
                os.close(lock_fd)
        got: BundleResult = {"checks": checks, "done": done, "timed_out": res.timed_out, "wall_s": res.wall_s,
               "stopped": done is None and stop is not None and stop.is_set(),  # by the caller, not by a limit
               "exit_code": res.exit_code, "signal": res.signal, "layer": layer,
               "in_flight": in_flight(results) if res.timed_out else None,
               "checker_stderr": read_capped(out / "stderr.txt"),
               "answer_stdout": read_capped(out / "answer_stdout.txt"),
               "answer_stderr": read_capped(out / "answer_stderr.txt"),
               "host": platform.node()}
        if bundle.collect_trace:
            got["trace"] = None
            for line in read_capped(results, 64 * 1024 * 1024).splitlines():
                if line.startswith('{"trace"'):
                    got["trace"] = json.loads(line)["trace"]
        if bundle.collect_lines:
            got["lines"] = {}
            if (work / bundle.collect_lines).is_file():
                with contextlib.suppress(ValueError):
                    got["lines"] = json.loads((work / bundle.collect_lines).read_text(encoding="utf-8"))
        if bundle.self_check and not (stop is not None and stop.is_set()):
            with gpu_lock.device_lock(stop=stop) if bundle.gpu else contextlib.nullcontext():
                got["self_check"] = self_check(bundle, layer, hide)
        return got


def self_check_env(gpu: bool) -> dict[str, str]:
    """The self-check's environment: Python writes its output as it goes, so a self-check its
    budget stops keeps what it printed (a buffer killed with the process is lost)."""
    return {**sandbox_env(gpu), "PYTHONUNBUFFERED": "1"}


def sandbox_env(gpu: bool) -> dict[str, str]:
    """What the sandboxed processes get on top of the sandbox's own clean environment:
    benchtui's engine, and for a GPU run the devices this process was given (a Ray task
    asking for one GPU gets CUDA_VISIBLE_DEVICES: the answer sees only that one)."""
    env: dict[str, str] = {}  # the interpreter's own site finds benchtui (installed, or a clone's editable install)
    if gpu:  # CuPy's kernel cache would go to the sandbox's 1 MB $HOME
        env["CUPY_CACHE_DIR"] = "/tmp/benchtui-cupy-cache"
    if "NVCC" in os.environ:  # the nvcc this process found (or none): the checker's must be the same
        env["NVCC"] = os.environ["NVCC"]
    if gpu:
        env.update(toolkit_env())
    if gpu and os.environ.get("CUDA_VISIBLE_DEVICES") is not None:
        env["CUDA_VISIBLE_DEVICES"] = os.environ["CUDA_VISIBLE_DEVICES"]
    return env


def toolkit_env() -> dict[str, str]:
    """For a GPU run, the toolkit whose files the sandbox binds (engine/runner/sandbox_view.py),
    found the way an answer's build tools look for it: its bin/ first on PATH (where a
    Makefile or torch finds nvcc), CUDA_HOME (torch's load_inline) and NVCC (benchtui's own)."""
    from benchtui.runner.sandbox_view import toolkit_root
    from benchtui.verify.cuda.build import find_nvcc

    nvcc = find_nvcc()
    if not nvcc:
        return {}
    env = {"NVCC": nvcc}
    root = toolkit_root(nvcc)
    if root is not None and (root / "bin").is_dir():
        env["CUDA_HOME"] = str(root)
        env["PATH"] = f"{root / 'bin'}:{sandbox.BASE_ENV['PATH']}"
    return env


def module_build_cache(challenge_path: Path, work: Path) -> Path | None:
    """For a kernel-deck challenge (a ``[module]`` table) run on a GPU: the
    answer's own build cache, kept between its runs in the temporary folder
    and keyed by the hash of its Python files, so its inline CUDA or Triton
    kernels are built once. Only this folder is bound writable into the
    answer's sandbox: another answer's cache is out of its reach."""
    import tomllib

    from benchtui.verify.module.host import answer_hash

    try:
        spec = tomllib.loads((Path(challenge_path) / "challenge.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    if not isinstance(spec.get("module"), dict):
        return None
    folder = Path(tempfile.gettempdir()) / f"benchtui-build-cache-{os.getuid()}" / answer_hash(work)[:32]
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    return folder


ANSWER_OOM_SCORE_ADJ = 1000  # the answer's code (its process, its self-check): the OOM killer takes it first


def process_limits(limits: RunLimits, wall_s: float, gpu: bool) -> sandbox.Limits:
    """One sandboxed process's limits from the run's: its own wall-clock limit (the checker's is
    the run's time limit; the answer's a little longer; the self-check's what is left of its
    budget), no address-space limit on a GPU (RLIMIT_AS breaks CUDA)."""
    memory = None if gpu else min(limits.memory_mb, machine_memory_mb() or limits.memory_mb)
    return sandbox.Limits(wall_s=wall_s, cpu_s=limits.cpu_s, memory_mb=memory, file_size_mb=limits.file_size_mb)


def machine_memory_mb() -> int | None:
    """The memory this machine has (MiB, /proc/meminfo's MemTotal), or None where it cannot say:
    no address-space limit is set above it, so an answer meets its own limit before the
    machine runs out and the kernel's OOM killer picks a process."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def two_processes(job: Job, work: Path, out: Path, adapter: Path | None, challenge_path: Path, limits: RunLimits, gpu: bool,
                  layer: str, hide: list[Path], checker: str = "benchtui.runner.child",
                  answer_server: str = "benchtui.runner.answer_server", cancel: threading.Event | None = None,
                  gpu_lock_fd: int | None = None) -> tuple[list[CheckRow], DoneRecord | None, sandbox.SandboxResult]:
    """The checker and the answer, each in its own sandbox, joined by a
    socket; the checker also gets a socket to a memory monitor run here.
    ``checker``/``answer_server`` name the entry modules (an audit's differ); setting
    ``cancel`` stops the checker (and with it the answer) at once. ``gpu_lock_fd``
    (engine/verify/gpu_lock.py) goes to the checker only."""
    checker_end, answer_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    monitor_here, monitor_there = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    job = dataclasses.replace(job, answer_fd=checker_end.fileno(), monitor_fd=monitor_there.fileno(), gpu_lock_fd=gpu_lock_fd,
                              run_deadline=time.time() + limits.timeout_s)  # the checker's sandbox clock starts now
    (out / "job.json").write_text(job.to_json())
    box = process_limits(limits, limits.timeout_s, gpu)
    # the answer's process outlives the checker's limit a little, so the time limit
    # stops the checker (which names the check in flight), never the answer first:
    # it ends anyway when the checker goes
    # the answer's process is the OOM killer's first choice, never the checker
    answer_box = dataclasses.replace(process_limits(limits, limits.timeout_s + ANSWER_GRACE_S, gpu),
                                     oom_score_adj=ANSWER_OOM_SCORE_ADJ)
    env = sandbox_env(gpu)
    build_cache = module_build_cache(challenge_path, work) if gpu else None
    answer_env = {**env, "BENCHTUI_BUILD_CACHE": str(build_cache)} if build_cache else env
    answer_proc: list[subprocess.Popen[bytes]] = []
    stop = threading.Event()

    def answer_pid() -> int | None:
        if not answer_proc:
            return None
        return sandbox.find_process(answer_proc[0].pid, f"{sys.executable}\0-m\0{answer_server}\0".encode())

    def run_answer() -> None:
        try:
            sandbox.run_sandboxed(
                [sys.executable, "-m", answer_server, str(answer_end.fileno()), str(work), str(adapter or "")],
                workdir=work, ro_paths=[resources.ENGINE_DIR] + ([adapter.parent] if adapter else []),
                rw_paths=[build_cache] if build_cache else [],
                hide_paths=hide, limits=answer_box, layer=layer, env=answer_env, gpu=gpu,
                stdout_path=out / "answer_stdout.txt", stderr_path=out / "answer_stderr.txt",
                pass_fds=[answer_end.fileno()], started=answer_proc.append, stop=stop)
        finally:
            answer_end.close()

    monitor.serve(monitor_here, answer_pid)
    thread = threading.Thread(target=run_answer, name="benchtui-answer", daemon=True)
    thread.start()
    try:
        res = sandbox.run_sandboxed(
            [sys.executable, "-m", checker, str(out / "job.json")],
            workdir=out, rw_paths=[], ro_paths=[challenge_path, REPO_ROOT, work], limits=box,
            layer=layer, env=env, gpu=gpu, stdout_path=out / "stdout.txt", stderr_path=out / "stderr.txt",
            pass_fds=[checker_end.fileno(), monitor_there.fileno(), *([gpu_lock_fd] if gpu_lock_fd is not None else [])],
            stop=cancel)
    finally:
        checker_end.close()
        monitor_there.close()
        thread.join(timeout=2.0)  # the answer's process ends on the checker's goodbye or EOF
        if thread.is_alive():
            stop.set()
            thread.join()
    checks, done = parse_results(out / "results.jsonl")
    return checks, done, res


def self_check(bundle: JobBundle, layer: str, hide: list[Path]) -> SelfCheckResult:
    """Run the answer's own tests/demos on a fresh scratch copy."""
    limits, gpu = bundle.limits, bundle.gpu
    with tempfile.TemporaryDirectory(prefix="benchtui-self-") as tmp:
        work = Path(tmp) / "answer"
        unpack_tree(bundle.answer_tar, work)
        open_up(work)
        plan = plan_self_check(work, sys.executable, gpu=gpu)
        if not plan.commands and plan.missing:
            return {"self_status": MISSING_DEPENDENCY, "self_command": "", "self_output": "; ".join(plan.skipped)}
        if not plan.commands:
            return {"self_status": "none", "self_command": "", "self_output": "; ".join(plan.skipped) or "no tests or demos found"}
        budget = limits.self_check_timeout_s
        outputs, exit_code, started = [], 0, time.perf_counter()
        status = MISSING_DEPENDENCY if plan.missing else "pass"
        for cmd, label in zip(plan.commands, plan.labels):
            left = budget - (time.perf_counter() - started)
            if left <= 0:
                outputs.append(f"$ {label}\n[not run: the self-check budget of {budget:g} s is spent]")
                status = "timeout"
                break
            log = Path(tmp) / "self.log"
            res = sandbox.run_sandboxed(cmd, workdir=work, limits=dataclasses.replace(process_limits(limits, left, gpu), oom_score_adj=ANSWER_OOM_SCORE_ADJ),
                                        layer=layer, hide_paths=hide,
                                        ro_paths=[resources.ENGINE_DIR], env=self_check_env(gpu), gpu=gpu,
                                        stdout_path=log, stderr_path=log)
            text = read_capped(log, 16 * 1024)
            code = res.exit_code if res.exit_code is not None else -(res.signal or 9)
            outputs.append(f"$ {label}\n{text}\n[exit {code}{', timed out' if res.timed_out else ''}, {res.wall_s:.2f} s]")
            if res.timed_out:
                status = "timeout"
            if code != 0 and exit_code == 0:
                exit_code = code
                status = "timeout" if res.timed_out else "fail"
        outputs.extend(f"[skipped] {s}" for s in plan.skipped)
        return {"self_exit_code": exit_code, "self_duration_s": round(time.perf_counter() - started, 3),
                "self_command": " && ".join(plan.labels), "self_output": "\n\n".join(outputs), "self_status": status}


def in_flight(path: Path) -> str | None:
    """The check that had started but not finished when the checker stopped."""
    started, finished = [], set()
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    for line in lines:
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj.get("started"), str):
            started.append(obj["started"])
        elif isinstance(obj.get("check"), dict):
            finished.add(obj["check"].get("name"))
    return started[-1] if started and started[-1] not in finished else None


def parse_results(path: Path) -> tuple[list[CheckRow], DoneRecord | None]:
    """Checks and the final 'done' record from the child's results file.
    A torn last line (the child was killed mid-write) is ignored."""

    checks: list[CheckRow] = []
    done: DoneRecord | None = None
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return checks, None
    for line in lines:
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if "check" in obj and isinstance(obj["check"], dict):
            c = obj["check"]
            if c.get("verdict") in CHECK_VERDICTS and isinstance(c.get("name"), str):
                checks.append(cast(CheckRow, c))  # the checker's Check.as_dict, its name and verdict read
        elif obj.get("done"):
            done = obj
    return checks, done


def worker_facts(backend: str) -> WorkerFacts:
    """Where it ran: versions and the device, as the run row records them."""
    out = {"python": platform.python_version(), "benchtui": benchtui.__version__}
    for st in probe_all().values():
        out.update(st.versions)
    status = probe_all().get(backend)
    return {"versions": out, "device": status.device if status and status.available else "", "pid": os.getpid()}
