"""What a sandboxed process sees of the filesystem: an allow-list, nothing else.

The bwrap and unshare layers start from an empty root and bind in, at the
same absolute paths, only:

- the system folders a process needs (programs, the C library and loader,
  compilers: ``/usr`` and the ``/bin``, ``/lib*`` links or folders beside it);
- of ``/etc``, what the dynamic loader and the compilers read (:data:`ETC_PATHS`);
- the CPU topology under ``/sys`` (the whole of ``/sys`` on a GPU: NVML and
  the CUDA runtime read the PCI tree);
- the interpreter: ``sys.prefix``, ``sys.base_prefix``, ``sys.exec_prefix``
  (the standard library lives there) and every site folder on ``sys.path``;
- what the caller names: the scratch copy (writable), benchtui's engine,
  an adapter, a build cache;
- on a GPU, the folders of the driver's libraries (where the loader's cache
  finds ``libcuda``/``libnvidia-*``) and the CUDA toolkit of the nvcc
  benchtui finds.

The sandbox itself adds a private ``/tmp`` (with ``$HOME`` in it), a minimal
``/dev`` and the ``/proc`` of its own PID namespace. Every path is bound at
its real location; the symlinks met on the way to it (``/lib -> usr/lib``,
``/usr/local/cuda -> /etc/alternatives/cuda``, a venv's ``bin/python``) are
made again where no bind shows them. Folders the caller hides that sit inside
a bind (benchtui's bundled challenges inside site-packages) are covered by
an empty tmpfs after it.
"""
from __future__ import annotations

import functools
import os
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

# Programs, the C library and the loader, g++ (torch's load_inline, nvcc's host
# compiler), locales, time zones. On a merged-/usr system the others are links.
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# What the loader and the compilers read of /etc. Not passwd or group (the
# machine's users and their homes; the run's uid has no entry there anyway, and
# the sandbox sets LOGNAME), hosts or resolv.conf (no network), or anything
# else of the machine's setup.
ETC_PATHS = {
    "/etc/ld.so.cache": "the loader's cache, for libraries outside the default folders (CUDA's among them)",
    "/etc/ld.so.conf": "the loader's configuration",
    "/etc/ld.so.conf.d": "the loader's configuration",
    "/etc/alternatives": "the compilers behind c++, cc and gcc, for torch's load_inline and nvcc",
}  # no /etc/localtime either: the payload's time zone is UTC
# The CPU topology read at start-up by torch (cpuinfo), OpenMP and OpenBLAS.
SYS_PATHS = ("/sys/devices/system",)
# A GPU process also reads the PCI tree (NVML, the CUDA runtime's device ordering).
GPU_SYS_PATHS = ("/sys",)
# Loader-cache names of the NVIDIA driver's user-space libraries.
DRIVER_LIBRARY_PREFIXES = ("libcuda.", "libcudadebugger.", "libnvidia-", "libnvcuvid.", "libnvoptix.")
MAX_LINKS = 40  # as the kernel: a longer chain of symlinks is a loop


@dataclass(frozen=True)
class Bind:
    """One entry of the view, mounted in list order.

    A plain entry binds ``path`` from the host at the same place; ``mask`` lays
    an empty tmpfs over it; ``link`` makes ``path`` a symlink to that text."""
    path: Path
    writable: bool
    mask: bool = False
    link: str | None = None
    why: str = field(default="", compare=False)  # for `benchtui doctor`

    @property
    def bind(self) -> bool:
        return not self.mask and self.link is None


def _under(path: Path, root: Path) -> bool:
    parts = root.parts
    return path.parts[:len(parts)] == parts


def real_path(path: Path) -> tuple[Path, list[tuple[Path, str]]]:
    """``path`` with every symlink resolved, and the links met on the way
    (where each sits, what it says), in the order they were followed: what
    os.path.realpath does, by hand, to keep the links. Nothing is normalized
    first: as in the kernel, a ".." after a link goes above its target."""
    links: list[tuple[Path, str]] = []
    text = os.fspath(path)
    todo = (text if text.startswith("/") else f"{os.getcwd()}/{text}").split("/")[::-1]
    here = ""
    while todo:
        name = todo.pop()
        if name in ("", "."):
            continue
        if name == "..":
            here = here.rpartition("/")[0]
            continue
        step = f"{here}/{name}"
        if not os.path.islink(step):
            here = step
            continue
        if len(links) >= MAX_LINKS:
            raise OSError(f"too many levels of symbolic links: {path}")
        target = os.readlink(step)
        links.append((Path(step), target))
        if target.startswith("/"):
            here = ""
        todo.extend(target.split("/")[::-1])
    return Path(here or "/"), links


def interpreter_paths() -> list[Path]:
    """The interpreter's prefixes (the standard library is inside) and the site
    folders on ``sys.path``: a venv's own, ``pip install --user``'s, another
    environment's a ``.pth`` names. Only folders named so: never a project
    folder or a clone that happens to be on ``sys.path``."""
    sites = [p for p in sys.path if p and Path(p).name in ("site-packages", "dist-packages")]
    # sys.executable too: the payload's argv[0], at times a link from outside the prefixes
    found = [sys.base_prefix, sys.prefix, sys.exec_prefix, sys.base_exec_prefix, sys.executable, *sites]
    return [Path(p) for p in dict.fromkeys(os.path.abspath(p) for p in found)]


def _run(argv: list[str]) -> str:
    try:
        res = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return ""
    return res.stdout + res.stderr


@functools.lru_cache(maxsize=1)
def driver_libraries() -> tuple[Path, ...]:
    """The NVIDIA driver's libraries as the loader's cache lists them: the ones
    a sandboxed process can load, since its environment names no other folder."""
    tool = next((t for t in ("/sbin/ldconfig", "/usr/sbin/ldconfig") if os.access(t, os.X_OK)), None)
    return driver_libraries_in(_run([tool, "-p"])) if tool else ()


def driver_libraries_in(ldconfig_p: str) -> tuple[Path, ...]:
    """The driver's libraries in ``ldconfig -p`` output ("libcuda.so.1 (libc6,x86-64) => /path")."""
    libs = []
    for line in ldconfig_p.splitlines():
        name, sep, where = line.strip().partition(" => ")
        if sep and name.startswith(DRIVER_LIBRARY_PREFIXES) and os.path.isabs(where.strip()):
            libs.append(Path(where.strip()))
    return tuple(dict.fromkeys(libs))


@functools.lru_cache(maxsize=8)
def toolkit_root(nvcc: str) -> Path | None:
    """The CUDA toolkit an nvcc belongs to: the TOP its dry run names (an nvcc on
    PATH is often a wrapper script or a link), else the folder above its bin/."""
    for line in _run([nvcc, "-dryrun", "-x", "cu", "-c", os.devnull, "-o", os.devnull]).splitlines():
        if line.startswith("#$ TOP="):
            return Path(os.path.normpath(line.removeprefix("#$ TOP=").strip()))
    root = real_path(Path(nvcc))[0].parent.parent
    return None if root == Path("/") else root


def gpu_paths() -> list[tuple[Path, str]]:
    """The PCI tree, the driver's library folders, and the nvcc benchtui finds
    (as the checker finds it) with its toolkit."""
    from benchtui.verify.cuda.build import find_nvcc

    out = [(Path(p), "GPU: PCI tree") for p in GPU_SYS_PATHS]
    out += [(lib.parent, "GPU: the driver's libraries") for lib in driver_libraries()]
    nvcc = find_nvcc()
    if nvcc:
        out.append((Path(nvcc), "GPU: nvcc"))
        root = toolkit_root(nvcc)
        if root is not None:
            out.append((root, "GPU: the CUDA toolkit"))
    return out


def base_paths(gpu: bool) -> list[tuple[Path, str]]:
    """What every sandboxed process sees read-only, with why."""
    out = [(Path(p), "system") for p in SYSTEM_PATHS]
    out += [(Path(p), why) for p, why in ETC_PATHS.items()]
    out += [(Path(p), "the CPU topology") for p in SYS_PATHS]
    out += [(p, "interpreter") for p in interpreter_paths()]
    return out + (gpu_paths() if gpu else [])


def plan(*, ro: Iterable[tuple[Path, str]], rw: Sequence[Path] = (), hide: Sequence[Path] = ()) -> list[Bind]:
    """The view: binds, links and masks in mount order (parents before children).

    ``ro`` are (path, why) pairs bound read-only where they exist; ``rw`` are
    bound writable and must exist. ``hide`` paths lying inside a bind are
    covered by an empty tmpfs, unless the interpreter is inside them; anything
    the caller binds inside one is bound again after the mask."""
    entries: dict[Path, Bind] = {}
    links: dict[Path, str] = {}
    for path, why in ro:
        try:
            real, chain = real_path(Path(path))
        except OSError:
            continue
        if real.exists() and real != Path("/"):
            links.update(chain)
            entries.setdefault(real, Bind(real, False, why=why))
    for path in rw:
        real, chain = real_path(Path(path))
        if not real.exists():
            raise FileNotFoundError(f"sandbox path does not exist: {real}")
        if real == Path("/"):
            raise ValueError("the sandbox never binds the whole root writable")
        links.update(chain)
        entries[real] = Bind(real, True, why="scratch (writable)")
    masks = _masks(list(entries), hide)
    binds = [b for b in entries.values() if not _redundant(b, list(entries.values()), masks)]
    made = [Bind(at, False, link=target) for at, target in links.items()
            if at not in entries and _needs_link(at, binds, masks)]
    return sorted(binds + masks + made, key=lambda b: (len(b.path.parts), b.bind, str(b.path)))


def _masks(bound: list[Path], hide: Sequence[Path]) -> list[Bind]:
    """Hidden folders a bind would show: those strictly inside one, outermost
    first; never one that holds the interpreter, nor one inside another mask."""
    interp = [real_path(p)[0] for p in interpreter_paths()]
    out: list[Bind] = []
    for p in sorted({real_path(Path(x))[0] for x in hide}, key=lambda x: len(x.parts)):
        if not p.is_dir() or p in bound or not any(_under(p, b) for b in bound):
            continue
        if any(_under(i, p) for i in interp) or any(_under(p, m.path) for m in out):
            continue
        out.append(Bind(p, False, mask=True, why="hidden"))
    return out


def _cover(path: Path, entries: Sequence[Bind]) -> Bind | None:
    """The innermost bind or mask holding ``path`` (``path`` itself excluded);
    at the same path the mask, which is mounted after the bind."""
    holders = [b for b in entries if b.link is None and b.path != path and _under(path, b.path)]
    return max(holders, key=lambda b: (len(b.path.parts), b.mask), default=None)


def _redundant(b: Bind, binds: list[Bind], masks: Sequence[Bind]) -> bool:
    """A bind shown already by a bind around it of the same kind, with no mask between."""
    outer = _cover(b.path, [*binds, *masks])
    return outer is not None and not outer.mask and outer.writable == b.writable


def in_mask(entry: Bind, view: Sequence[Bind]) -> bool:
    """An entry inside a mask of the view (made once the mask is mounted)."""
    return any(m.mask and m.path != entry.path and _under(entry.path, m.path) for m in view)


def _needs_link(at: Path, binds: Sequence[Bind], masks: Sequence[Bind]) -> bool:
    """A symlink shows by itself where a bind brings the folder it sits in."""
    outer = _cover(at, [*binds, *masks])
    return outer is None or outer.mask


def folders_to_make(view: Sequence[Bind], mounted: Sequence[Path]) -> dict[Path, list[Path]]:
    """For each entry of the view, the folders above it that nothing shows yet:
    they live on the fresh root, on a tmpfs the sandbox mounts first (one of
    ``mounted``) or in a mask; bwrap would make them 0700, and the run's uid
    must be able to traverse them. A folder inside a bind is the host's own."""
    made: set[Path] = {Path("/"), *mounted}
    seen: list[Bind] = []
    out: dict[Path, list[Path]] = {}
    for entry in view:
        todo = []
        for anc in reversed(entry.path.parents):
            holder = max((b for b in seen if b.link is None and _under(anc, b.path)),
                         key=lambda b: (len(b.path.parts), b.mask), default=None)
            if anc in made or (holder is not None and (holder.path == anc or holder.bind)):
                continue
            todo.append(anc)
            made.add(anc)
        out[entry.path] = todo
        seen.append(entry)
    return out
