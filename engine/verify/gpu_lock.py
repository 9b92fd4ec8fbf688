"""One GPU job at a time per device, for anything timed on it.

Two runs timed side by side on one GPU slow each other, and a run's leftover
work would slow the next one's figures. ``device_lock()`` is an exclusive
``flock`` on a file named after the device, so it holds across threads
(``benchtui run --jobs N``), processes (two ``benchtui run``, the dashboard)
and Ray workers on one node (``--cluster``): each GPU job holds it from
before it touches the device to its end; CPU-only jobs never touch it and
stay parallel.

A run's checker takes the lock itself, as late as its challenge allows:
``execute_bundle`` opens the lock file and passes the descriptor to the
checker only (never to the answer's process); the checker locks it before
the challenge's checks, or, for a challenge whose conformance sets
``GPU_LOCK_LATE`` (fuse, paged_attention), after its CPU-only work (nvcc's
compile checks) and before anything touches the GPU. The lock lives on the
open file, which the orchestrator keeps open until both processes of the run
have ended, so it is released only then.

The device is the first entry of ``CUDA_VISIBLE_DEVICES`` (an index or a
UUID; a Ray task gets the one it was given), else ``0``. Lock files live in
``$BENCHTUI_GPU_LOCK_DIR``, else ``<tmp>/benchtui-gpu-locks`` (shared by every
user of the machine: the folder is world-writable and sticky).
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import re
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path


def device_key(env: Mapping[str, str] | None = None) -> str:
    visible = (os.environ if env is None else env).get("CUDA_VISIBLE_DEVICES") or ""
    first = visible.split(",")[0].strip()
    return first or "0"


def lock_dir() -> Path:
    return Path(os.environ.get("BENCHTUI_GPU_LOCK_DIR") or Path(tempfile.gettempdir()) / "benchtui-gpu-locks")


def lock_path(device: str | None = None) -> Path:
    key = re.sub(r"[^A-Za-z0-9_.-]", "_", device or device_key())
    return lock_dir() / f"gpu-{key}.lock"


def open_lock(device: str | None = None) -> int:
    """A descriptor of the device's lock file (not locked yet; not inherited
    by child processes unless passed)."""
    path = lock_path(device)
    folder = path.parent
    if not folder.is_dir():
        folder.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(OSError):
            folder.chmod(0o1777)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    with contextlib.suppress(OSError):
        os.fchmod(fd, 0o666)
    return fd


def hold(fd: int, stop: threading.Event | None = None, poll_s: float = 0.1) -> bool:
    """Lock ``fd`` exclusively, waiting for it; False when ``stop`` was set first.
    Locking a descriptor this open file already holds returns at once."""
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if stop is not None and stop.is_set():
                return False
            time.sleep(poll_s)


@contextlib.contextmanager
def device_lock(device: str | None = None, *, stop: threading.Event | None = None,
                poll_s: float = 0.1) -> Iterator[bool]:
    """Hold the device's lock for the block; yields True once held. Setting
    ``stop`` while it waits gives up the wait (yields False): the caller's
    own cancel then ends the job."""
    fd = open_lock(device)
    held = False
    try:
        held = hold(fd, stop, poll_s)
        yield held
    finally:
        if held:
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
