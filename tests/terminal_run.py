"""`benchtui` in a child process whose stderr is a pseudo-terminal, as a user's is."""
from __future__ import annotations

import os
import pty
import subprocess
import sys
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def on_a_terminal(args: list[str], *, program: list[str] | None = None) -> tuple[int, str, str]:
    """(exit code, stdout, what the terminal on stderr got) of ``benchtui ARGS``
    (``program``: what runs in place of ``python -m benchtui``)."""
    master, slave = pty.openpty()
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "100", "LINES": "30"}
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen([*(program or [sys.executable, "-m", "benchtui"]), *args], stdout=subprocess.PIPE, stderr=slave,
                            stdin=subprocess.DEVNULL, cwd=REPO, env=env)
    os.close(slave)
    got = bytearray()

    def read() -> None:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed its end
                return
            if not chunk:
                return
            got.extend(chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    out, _ = proc.communicate(timeout=300)
    reader.join(timeout=10)
    os.close(master)
    return proc.returncode, out.decode(), got.decode("utf-8", "replace")
