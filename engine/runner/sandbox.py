"""Run one untrusted child process inside the strongest isolation available.

Three layers, strongest first (measured facts: /work/shared/specs/sandbox.md):

- ``bwrap``: bubblewrap; new pid/net/ipc/uts namespaces, an empty root with
  only the view of engine/runner/sandbox_view.py bound in (the system, the
  interpreter, what the run names), a private /tmp, a minimal /dev.
- ``unshare``: util-linux ``unshare`` plus a small mount script that builds
  the same view by hand on a fresh tmpfs and ``chroot``s into it.
- ``rlimits``: new session, resource limits, process sweep. No network or
  file-system isolation: only with an explicit unsafe flag.

In every layer the environment is cleared, output goes to files (a
``setsid()`` grandchild cannot hold a pipe open), resource limits are set
by ``prlimit`` just before the payload, and the whole tree is killed at the
wall-clock limit. Run as root, the payload drops to a fresh unprivileged uid of its own
(where it can still reach its interpreter), because RLIMIT_NPROC means nothing for uid 0.
"""
from __future__ import annotations

import contextlib
import os
import secrets
import select
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchtui.runner import sandbox_view
from benchtui.runner.sandbox_view import Bind

LAYERS = ("bwrap", "unshare", "rlimits")  # strongest first
# Each run gets its own unprivileged uid from this range: RLIMIT_NPROC counts
# every process of a uid machine-wide, so with one shared uid a fork bomb in
# one run would starve every run beside it (and fail innocent answers).
RUN_UID_BASE = 200_000
RUN_UID_SPAN = 1 << 20
SANDBOX_HOME = "/tmp/sandbox-home"  # inside the private /tmp of bwrap/unshare
TMPFS_SIZE = 512 * 1024 * 1024  # bytes; /tmp lives in RAM
TOKEN_VAR = "BENCHTUI_SANDBOX_TOKEN"  # tags rlimits-layer processes for the sweep
BASE_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONHASHSEED": "0",
    "MPLBACKEND": "Agg",
    # The run's uid has no passwd entry (and /etc/passwd is not in the view):
    # getpass.getuser(), which torch's compile caches call, reads these first.
    "LOGNAME": "sandbox",
    "USER": "sandbox",
}
# Makes $HOME, enters the work dir, then becomes the payload. Under bwrap the
# payload is never PID 1 (bwrap is); under unshare the mount script is.
SHIM = 'mkdir -p -m 700 "$HOME" 2>/dev/null; cd "$1" || exit 126; shift; exec "$@"'
DEV_NODES = ("null", "zero", "full", "random", "urandom", "tty")
SANDBOX_MOUNTS = (Path("/tmp"), Path("/dev"), Path("/proc"))  # what each layer mounts before the view


@dataclass(frozen=True)
class Limits:
    wall_s: float  # wall-clock limit: kill the whole process tree
    cpu_s: int = 600  # RLIMIT_CPU
    memory_mb: int | None = 4096  # RLIMIT_AS; None for CUDA jobs (RLIMIT_AS breaks CUDA)
    file_size_mb: int = 256  # RLIMIT_FSIZE
    open_files: int = 256  # RLIMIT_NOFILE (soft)
    # Hard RLIMIT_NOFILE: packages a prompt allows raise their soft limit at
    # import (mlx_lm: setrlimit(NOFILE, (2048, 4096))); a lower hard limit made
    # that import fail inside the sandbox, the harness's fault, not the answer's.
    open_files_hard: int = 4096
    processes: int = 256  # RLIMIT_NPROC: counts threads, per uid; only meaningful for a non-root uid
    # /proc/self/oom_score_adj: 1000 makes this process the kernel's OOM killer's first choice
    # (an answer's, so that it goes before the checker, the dashboard or another job); None: left as is
    oom_score_adj: int | None = None


@dataclass(frozen=True)
class LayerStatus:
    name: str
    works: bool
    blocks_network: bool
    detail: str  # why not, or version and which uid the payload runs as


@dataclass
class SandboxResult:
    exit_code: int | None
    signal: int | None
    timed_out: bool
    wall_s: float
    stdout_path: Path
    stderr_path: Path
    layer: str
    leftovers_killed: int
    uid: int = 0  # uid the payload ran as (host view)

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


class SandboxUnavailable(Exception):
    """No layer that is allowed here works; the message says what to do."""


# ---------------------------------------------------------------- helpers

def _tool(name: str) -> str | None:
    return shutil.which(name, path="/usr/bin:/bin:/usr/sbin:/sbin:/usr/local/bin")


def _is_root() -> bool:
    return os.geteuid() == 0


def view(workdir: Path | None, ro_paths: Sequence[Path] = (), rw_paths: Sequence[Path] = (),
         hide_paths: Sequence[Path] = (), gpu: bool = False) -> list[Bind]:
    """What a bwrap or unshare payload sees of the filesystem, in mount order
    (engine/runner/sandbox_view.py): the system, the interpreter, on a GPU its
    driver and toolkit, ``ro_paths`` read-only; ``workdir`` and ``rw_paths``
    writable; ``hide_paths`` masked where a bind would show them."""
    ro = [*sandbox_view.base_paths(gpu), *((Path(p), "named by the run") for p in ro_paths)]
    rw = ([workdir] if workdir is not None else []) + list(rw_paths)
    return sandbox_view.plan(ro=ro, rw=rw, hide=hide_paths)


def _child_env(home: str, extra: dict[str, str] | None, token: str | None) -> dict[str, str]:
    env = {**BASE_ENV, "HOME": home, **(extra or {})}
    if token:
        env[TOKEN_VAR] = token
    return env


def _prlimit_argv(limits: Limits) -> list[str]:
    mb = 1024 * 1024
    # Soft CPU limit sends SIGXCPU, the hard one a second later SIGKILL.
    argv = [_tool("prlimit") or "prlimit", f"--cpu={limits.cpu_s}:{limits.cpu_s + 1}",
            f"--fsize={limits.file_size_mb * mb}", f"--nofile={limits.open_files}:{max(limits.open_files, limits.open_files_hard)}",
            f"--nproc={limits.processes}"]
    if limits.memory_mb is not None:
        argv.append(f"--as={limits.memory_mb * mb}")
    return argv + ["--"]


def run_uid() -> int:
    """A fresh unprivileged uid (and gid) for one run."""
    return RUN_UID_BASE + secrets.randbelow(RUN_UID_SPAN)


def _setpriv_argv(uid: int | None) -> list[str]:
    argv = [_tool("setpriv") or "setpriv"]
    if uid is not None:
        argv += [f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
    # No capabilities survive the exec, and setuid binaries cannot regain any.
    return argv + ["--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]


def _payload_chain(argv: list[str], workdir: Path, limits: Limits, uid: int | None) -> list[str]:
    # raising one's own oom_score_adj needs no privilege; it is inherited by everything the payload starts
    oom = f"echo {int(limits.oom_score_adj)} > /proc/self/oom_score_adj; " if limits.oom_score_adj is not None else ""
    return [*_setpriv_argv(uid), *_prlimit_argv(limits), "/bin/sh", "-c", oom + SHIM, "sh", str(workdir), *argv]


def _gpu_devices() -> list[Path]:
    return sorted(Path("/dev").glob("nvidia*"))


def _chown_tree(root: Path, uid: int, gid: int) -> None:
    """lchown everything under root: never follow a symlink the answer planted."""
    os.lchown(root, uid, gid)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            os.lchown(os.path.join(dirpath, name), uid, gid)


def _world_reachable(path: Path) -> bool:
    """Can an unprivileged uid traverse to this path (every ancestor has o+x)?"""
    try:
        return all(os.stat(parent).st_mode & 1 for parent in Path(path).resolve().parents)
    except OSError:
        return False


# ------------------------------------------------------------ per layer

def _bwrap_argv(inner: list[str], plan: list[Bind], gpu: bool) -> list[str]:
    """bwrap starts from an empty root: only the plan's entries, /dev, /proc and a private /tmp."""
    argv = [_tool("bwrap") or "bwrap", "--dev", "/dev", "--proc", "/proc",
            "--perms", "1777", "--size", str(TMPFS_SIZE), "--tmpfs", "/tmp"]
    parents = sandbox_view.folders_to_make(plan, SANDBOX_MOUNTS)
    for b in plan:
        for folder in parents[b.path]:
            argv += ["--perms", "0755", "--dir", str(folder)]
        if b.mask:
            argv += ["--perms", "0755", "--size", str(1024 * 1024), "--tmpfs", str(b.path)]
        elif b.link is not None:
            argv += ["--symlink", b.link, str(b.path)]
        else:
            argv += ["--bind" if b.writable else "--ro-bind", str(b.path), str(b.path)]
    if gpu:
        for dev in _gpu_devices():
            argv += ["--dev-bind-try", str(dev), str(dev)]
    argv += ["--remount-ro", "/"]  # the fresh root's own folders: nobody writes there
    argv += ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"]
    if not _is_root():
        argv.append("--unshare-user")  # as root, keep real uids so setpriv can drop to the run's uid
    return argv + ["--die-with-parent", "--new-session", "--", *inner]


def _ln_commands(links: list[tuple[str, str]], parents: bool = False) -> list[str]:
    """Shell commands making the symlinks (where, target): one `ln -s -t DIR`
    for each folder's links named as their target's last part (/bin -> usr/bin,
    /dev/fd -> /proc/self/fd), one `ln -s` for each other; each is a process."""
    q = shlex.quote
    grouped: dict[str, list[str]] = {}
    out = []
    for at, target in links:
        if os.path.basename(at) == os.path.basename(target.rstrip("/")):
            grouped.setdefault(os.path.dirname(at), []).append(target)
        else:
            out.append(f"ln -s {q(target)} {q(at)}")
    out = [f"ln -s -t {q(folder)} {' '.join(map(q, targets))}" for folder, targets in grouped.items()] + out
    if parents:
        out = [f"mkdir -p {q(os.path.dirname(at))}" for at, _ in links] + out
    return out


def _fstab_field(path: str) -> str:
    # fstab fields are split on whitespace; libmount reads octal escapes.
    return "".join(f"\\{ord(c):03o}" if c in " \t\n\\" else c for c in path)


def _fstab(entries: list[tuple[str, str, str, str]]) -> str:
    """A dash `printf` (a builtin: no process) writing fstab lines for `mount -a -T`."""
    lines = [" ".join((_fstab_field(src), _fstab_field(dst), fs, opts, "0", "0")) for src, dst, fs, opts in entries]
    return "printf '%s\\n' " + " ".join(shlex.quote(line) for line in lines)


def _unshare_argv(inner: list[str], plan: list[Bind], gpu: bool) -> list[str]:
    """unshare + a mount script that builds the view on a fresh tmpfs at /mnt/r and chroots.

    Mounts go through two `mount -a` calls over generated fstab files: one
    process per mount would cost ~4 ms each. The script stays PID 1 of the
    new namespace (it does not exec), so the payload is PID 2 and SIGXCPU
    still kills it.
    """
    q = shlex.quote
    r = "/mnt/r"
    first = [("none", r, "tmpfs", "size=1m,mode=755,X-mount.mkdir"),
             ("none", f"{r}/tmp", "tmpfs", f"size={TMPFS_SIZE},mode=1777,X-mount.mkdir"),
             ("none", f"{r}/dev", "tmpfs", "size=1m,mode=755,X-mount.mkdir"),
             ("none", f"{r}/dev/shm", "tmpfs", "size=64m,mode=1777,X-mount.mkdir"),
             ("/proc", f"{r}/proc", "none", "rbind,X-mount.mkdir")]
    devs = [Path("/dev") / d for d in DEV_NODES] + (_gpu_devices() if gpu else [])
    devs = [d for d in devs if d.exists() and not d.is_dir()]
    files = [r + str(d) for d in devs]  # bind targets must exist
    second = [(str(d), r + str(d), "none", "bind") for d in devs]
    links, late_links = [(f"{r}/dev/fd", "/proc/self/fd")], []  # late: inside a mask, made once it is there
    for b in plan:
        dst = r + str(b.path)
        if b.link is not None:
            (late_links if sandbox_view.in_mask(b, plan) else links).append((dst, b.link))
        elif b.mask:
            second.append(("none", dst, "tmpfs", "size=1m,mode=755,X-mount.mkdir"))
        elif b.path.is_dir():
            # rbind: a plain bind of a folder with mounts under it is refused in a user namespace
            second.append((str(b.path), dst, "none", ("rbind" if b.writable else "rbind,ro") + ",X-mount.mkdir"))
        else:
            files.append(dst)
            second.append((str(b.path), dst, "none", "bind" if b.writable else "bind,ro"))
    folders = sorted({os.path.dirname(f) for f in files + [at for at, _ in links]} - {r, f"{r}/dev"})
    lines = ["set -e", "umask 022",
             "mount -t tmpfs -o size=1m,mode=755 none /mnt",
             f"{_fstab(first)} > /mnt/fstab.1", "mount -a -T /mnt/fstab.1",
             *([f"mkdir -p {' '.join(map(q, folders))}"] if folders else []),
             *(f": > {q(f)}" for f in files),  # `:` is a builtin: no process
             *_ln_commands(links),
             f"{_fstab(second)} > /mnt/fstab.2", "mount -a -T /mnt/fstab.2",
             *_ln_commands(late_links, parents=True),
             f"mount -o remount,bind,ro {r}",  # the fresh root's own folders: nobody writes there
             f'{q(_tool("chroot") or "chroot")} {r} "$@"',
             "exit $?"]  # not the last command: dash would exec it and the payload would be PID 1
    outer = [_tool("unshare") or "unshare"]
    if not _is_root():
        outer += ["--user", "--map-root-user"]
    outer += ["--mount", "--net", "--pid", "--fork", "--kill-child", "--mount-proc", "--ipc", "--uts",
              "--propagation", "private"]
    return [*outer, "--", "/bin/sh", "-c", "\n".join(lines), "sh", *inner]


# -------------------------------------------------------- process sweep

def _proc_stat(pid: int) -> tuple[int, int] | None:
    """(ppid, session id) of a live process, or None."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    fields = raw[raw.rindex(b")") + 2:].split()
    return int(fields[1]), int(fields[3])


def _all_pids() -> list[int]:
    return [int(n) for n in os.listdir("/proc") if n.isdigit()]


def _descendants(root: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for pid in _all_pids():
        st = _proc_stat(pid)
        if st:
            children.setdefault(st[0], []).append(pid)
    found, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def find_process(root: int, marker: bytes) -> int | None:
    """The oldest descendant of root whose command line starts with marker
    (the payload, not a child it forked: a child cannot be older than its
    parent; the sandbox tools' own command lines only contain it)."""
    best = None
    for pid in _descendants(root):
        try:
            if not Path(f"/proc/{pid}/cmdline").read_bytes().startswith(marker):
                continue
            raw = Path(f"/proc/{pid}/stat").read_bytes()
            start = int(raw[raw.rindex(b")") + 2:].split()[19])
        except (OSError, ValueError, IndexError):
            continue
        if best is None or start < best[0]:
            best = (start, pid)
    return best[1] if best else None


def _tagged(token: str, session: int) -> set[int]:
    """Processes of one rlimits-layer run: its session, or its env token."""
    needle = f"{TOKEN_VAR}={token}".encode()
    found = set()
    for pid in _all_pids():
        st = _proc_stat(pid)
        if st and st[1] == session:
            found.add(pid)
            continue
        try:
            if needle in Path(f"/proc/{pid}/environ").read_bytes():
                found.add(pid)
        except OSError:
            pass
    found.discard(os.getpid())
    return found


def _kill_all(pids: set[int]) -> int:
    killed = 0
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
            killed += 1
        except ProcessLookupError:
            pass
    return killed


def _sweep(token: str, session: int, rounds: int = 50) -> int:
    """Kill until nothing tagged is left (a forking process needs a few rounds)."""
    seen: set[int] = set()
    for _ in range(rounds):
        live = {p for p in _tagged(token, session) if _is_alive_not_zombie(p)}
        if not live:
            break
        _kill_all(live)
        seen |= live
        time.sleep(0.005)
    return len(seen)


def _is_alive_not_zombie(pid: int) -> bool:
    try:
        raw = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return raw[raw.rindex(b")") + 2:raw.rindex(b")") + 3] != b"Z"


# ------------------------------------------------------------------ run

def run_sandboxed(argv: list[str], *, workdir: Path, limits: Limits, layer: str,
                  env: dict[str, str] | None = None, ro_paths: Sequence[Path] = (),
                  rw_paths: Sequence[Path] = (), gpu: bool = False,
                  stdout_path: Path, stderr_path: Path, hide_paths: Sequence[Path] = (),
                  pass_fds: Sequence[int] = (), started: Callable[[subprocess.Popen[bytes]], None] | None = None,
                  stop: threading.Event | None = None) -> SandboxResult:
    """Run argv in `layer`; workdir and rw_paths are writable at the same absolute path.

    Under bwrap and unshare the payload sees nothing else but :func:`view`'s
    entries: ``ro_paths`` read-only beside the system and the interpreter,
    and ``hide_paths`` covered by an empty tmpfs where one of those would
    show them (``ro_paths`` under them are bound again). ``pass_fds`` stay open in the
    payload. ``started`` gets the process once it runs; setting ``stop``
    ends the whole tree early (not counted as a timeout)."""
    if layer not in LAYERS:
        raise ValueError(f"unknown sandbox layer {layer!r}; expected one of {', '.join(LAYERS)}")
    if not argv:
        raise ValueError("empty argv")
    workdir = Path(workdir).resolve()
    rw = [Path(p).resolve() for p in rw_paths]
    root = _is_root()
    token = uuid.uuid4().hex if layer == "rlimits" else None
    scratch_home: Path | None = None
    if layer == "rlimits":
        payload = shutil.which(argv[0]) or argv[0]
        drop = root and all(_world_reachable(p) for p in [Path(payload), workdir, *rw])
        uid = run_uid() if drop else None
        scratch_home = Path(tempfile.mkdtemp(prefix="benchtui-home-"))
        home = str(scratch_home)
        cmd = _payload_chain(argv, workdir, limits, uid)
    else:
        drop = root
        uid = run_uid() if drop else None
        plan = view(workdir, ro_paths, rw, hide_paths, gpu)
        home = SANDBOX_HOME
        inner = _payload_chain(argv, workdir, limits, uid)
        cmd = (_bwrap_argv if layer == "bwrap" else _unshare_argv)(inner, plan, gpu)
    # The whole tree dies with the thread that started it (a Ray worker killed by a cancel,
    # a driver killed outright): the outer helper gets SIGKILL from the kernel, and its
    # namespace (unshare --kill-child, bwrap --die-with-parent) or session goes with it.
    cmd = _pdeathsig_prefix() + cmd
    owned = [workdir, *rw] + ([scratch_home] if scratch_home else [])
    if drop:
        for p in owned:
            _chown_tree(p, uid, uid)
    stdout_path, stderr_path = Path(stdout_path), Path(stderr_path)
    leftovers = 0
    timed_out = False
    start = time.monotonic()
    try:
        with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                    env=_child_env(home, env, token), cwd=workdir,
                                    start_new_session=True, close_fds=True, pass_fds=tuple(pass_fds))
        if started is not None:
            started(proc)
        # Until proc.wait() reaps it, the exited child's zombie pins its pid,
        # so the group and session ids below cannot belong to anyone else.
        if not _wait_exit(proc, limits.wall_s, stop):
            timed_out = not (stop is not None and stop.is_set())
            tree = _descendants(proc.pid)
            _kill_group(proc.pid)
            leftovers = _kill_all(tree)
        wall = time.monotonic() - start
        if token:  # no pid namespace: kill its session and whatever escaped it, counting them
            leftovers += _sweep(token, proc.pid)
        else:  # the namespace died with its PID 1 already; the group is the outer helper's
            _kill_group(proc.pid)
        proc.wait()
    finally:
        if drop:
            for p in owned:
                if p.exists():
                    _chown_tree(p, os.getuid(), os.getgid())
        if scratch_home:
            shutil.rmtree(scratch_home, ignore_errors=True)
    code, sig = _decode_status(proc.returncode, layer)
    return SandboxResult(exit_code=code, signal=sig, timed_out=timed_out, wall_s=wall,
                         stdout_path=stdout_path, stderr_path=stderr_path, layer=layer,
                         leftovers_killed=leftovers, uid=uid if uid is not None else os.getuid())


_pdeathsig: list[str] | None = None


def _pdeathsig_prefix() -> list[str]:
    """``setpriv --pdeathsig KILL --`` where this util-linux has it (2.33+), else nothing."""
    global _pdeathsig
    if _pdeathsig is None:
        tool = _tool("setpriv")
        ok = False
        if tool:
            try:
                ok = subprocess.run([tool, "--pdeathsig", "KILL", "--", "/bin/true"], capture_output=True, timeout=10).returncode == 0
            except (OSError, subprocess.SubprocessError):
                ok = False
        _pdeathsig = [tool, "--pdeathsig", "KILL", "--"] if ok else []
    return list(_pdeathsig)


def _wait_exit(proc: subprocess.Popen[bytes], timeout: float, stop: threading.Event | None = None) -> bool:
    """Wait for proc to exit, at most timeout seconds, without reaping it; True if it did.

    A pidfd wakes us the moment the child exits; Popen.wait(timeout) polls
    with sleeps of up to 50 ms, which alone would double the start-up cost.
    """
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        try:
            proc.wait(timeout=timeout)
            return True
        except subprocess.TimeoutExpired:
            return False
    try:
        if stop is None:
            ready, _, _ = select.select([pidfd], [], [], timeout)
            return bool(ready)  # not reaped yet: see run_sandboxed
        deadline = time.monotonic() + timeout
        while not stop.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            ready, _, _ = select.select([pidfd], [], [], min(left, 0.05))
            if ready:
                return True
        return False
    finally:
        os.close(pidfd)


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _decode_status(returncode: int, layer: str) -> tuple[int | None, int | None]:
    """(exit code, signal). bwrap and the unshare script report a payload
    killed by signal N as exit 128+N (the shell convention); so does a
    payload that itself exits 129..192 — an accepted ambiguity."""
    if returncode < 0:
        return None, -returncode
    if layer != "rlimits" and 128 < returncode <= 128 + 64:
        return None, returncode - 128
    return returncode, None


# ---------------------------------------------------------------- probe

_probe_lock = threading.Lock()
_probe_cache: list[LayerStatus] | None = None


def _version(tool: str) -> str:
    try:
        out = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=5)
        return (out.stdout or out.stderr).strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        return tool


def _failure_reason(stderr: str, exit_code: int | None) -> str:
    """The lines of a failed probe that say what failed: mount(8) ends its
    message with a generic "dmesg(1) may have more information" line."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip() and not ln.strip().startswith("dmesg(1)")]
    return ("; ".join(lines[-2:]) if lines else f"`true` exited {exit_code}")[:300]


def _probe_one(name: str) -> LayerStatus:
    needed = {"bwrap": ["bwrap", "setpriv", "prlimit"], "unshare": ["unshare", "setpriv", "prlimit", "chroot"],
              "rlimits": ["setpriv", "prlimit"]}[name]
    missing = [t for t in needed if _tool(t) is None]
    if missing:
        return LayerStatus(name, False, False, f"not installed: {', '.join(missing)}")
    if name == "unshare" and not Path("/mnt").is_dir():
        return LayerStatus(name, False, False, "no /mnt directory to build the sandbox root in")
    limits = Limits(wall_s=10, memory_mb=None)
    with tempfile.TemporaryDirectory(prefix="benchtui-probe-") as tmp:
        work = Path(tmp) / "work"
        work.mkdir()
        out, err = Path(tmp) / "out", Path(tmp) / "err"
        try:
            res = run_sandboxed(["/bin/true"], workdir=work, limits=limits, layer=name,
                                stdout_path=out, stderr_path=err)
        except OSError as exc:
            return LayerStatus(name, False, False, f"cannot start: {exc}")
        if res.exit_code != 0:
            return LayerStatus(name, False, False, _failure_reason(err.read_text(errors="replace"), res.exit_code))
        with socket.socket() as server:
            server.bind(("127.0.0.1", 0))
            server.listen(1)
            port = server.getsockname()[1]
            net = run_sandboxed(["/bin/bash", "-c", f"exec 3<>/dev/tcp/127.0.0.1/{port}"], workdir=work,
                                limits=limits, layer=name, stdout_path=out, stderr_path=err)
    detail = _version(_tool(name) or name) if name != "rlimits" else "resource limits and a new session only"
    return LayerStatus(name, True, net.exit_code != 0, f"{detail}; payload uid {res.uid}")


def probe_layers(refresh: bool = False) -> list[LayerStatus]:
    """Run `true` and a loopback connect in each layer; cached per process."""
    global _probe_cache
    with _probe_lock:
        if _probe_cache is None or refresh:
            _probe_cache = [_probe_one(name) for name in LAYERS]
        return list(_probe_cache)


def _install_hint(statuses: list[LayerStatus]) -> str:
    why = "; ".join(f"{s.name}: {s.detail}" for s in statuses if s.name != "rlimits")
    return (f"no isolating sandbox works here ({why}); install bubblewrap (apt install bubblewrap) or allow "
            "unprivileged user namespaces (sysctl kernel.apparmor_restrict_unprivileged_userns=0), "
            "or pass the unsafe flag to run without network isolation")


def choose_layer(requested: str = "auto", *, allow_unsafe: bool = False) -> str:
    """The layer to use: `auto` picks the strongest that works and isolates."""
    if requested != "auto" and requested not in LAYERS:
        raise ValueError(f"unknown sandbox layer {requested!r}; expected auto or one of {', '.join(LAYERS)}")
    statuses = {s.name: s for s in probe_layers()}
    if requested == "auto":
        for name in LAYERS:
            s = statuses[name]
            if s.works and s.blocks_network:
                return name
        if allow_unsafe and statuses["rlimits"].works:
            return "rlimits"
        raise SandboxUnavailable(_install_hint(list(statuses.values())))
    s = statuses[requested]
    if not s.works:
        raise SandboxUnavailable(f"sandbox layer {requested} does not work here: {s.detail}")
    if not s.blocks_network and not allow_unsafe:
        raise SandboxUnavailable(f"sandbox layer {requested} does not block the network; "
                                 "pass the unsafe flag to use it anyway")
    return requested


def describe_layers(allow_unsafe: bool = False) -> list[dict[str, Any]]:
    """For `benchtui doctor`: every layer, and which one `auto` would use."""
    try:
        active = choose_layer("auto", allow_unsafe=allow_unsafe)
    except SandboxUnavailable:
        active = None
    return [{"name": s.name, "works": s.works, "blocks_network": s.blocks_network, "detail": s.detail,
             "active": s.name == active} for s in probe_layers()]
