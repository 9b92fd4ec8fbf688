"""tui/input_driver.py: the escape key is not held back by the input thread's 100 ms select."""
from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from textual import constants

REPO = Path(__file__).resolve().parents[2]


def test_after_input_the_selector_waits_at_most_the_escape_delay():
    from benchtui.tui.input_driver import PromptSelector

    read, write = os.pipe()
    selector = PromptSelector()
    selector.register(read, 1)  # EVENT_READ
    try:
        os.write(write, b"\x1b")
        assert selector.select(5.0)  # input: at once
        os.read(read, 16)
        start = time.monotonic()
        assert selector.select(5.0) == []  # nothing more: back after ESCDELAY, not 5 s
        assert time.monotonic() - start < 4.0  # (ESCDELAY, far below the 5 s asked)
        assert not selector.after_input
        start = time.monotonic()
        assert selector.select(0.3) == []  # idle: the caller's own timeout
        assert time.monotonic() - start >= 0.25
    finally:
        selector.close()
        os.close(read)
        os.close(write)


def test_the_dashboard_uses_it_where_textual_would_use_its_linux_driver(demo_wb, monkeypatch):
    from benchtui.tui.app import BenchApp
    from benchtui.tui.input_driver import PromptEscapeDriver
    from textual.drivers.linux_driver import LinuxDriver

    monkeypatch.setattr(constants, "DRIVER", None)
    app = BenchApp(demo_wb)
    if not issubclass(App_default_driver(), LinuxDriver):
        pytest.skip("Textual picks another driver on this platform")
    assert app.get_driver_class() is PromptEscapeDriver


def App_default_driver():
    from textual.app import App

    return App().get_driver_class()


KEYS_APP = r"""
import sys
from textual.app import App
from benchtui.tui.input_driver import PromptEscapeDriver

class Keys(App):
    def on_key(self, event):
        with open(sys.argv[1], "a") as log:  # Textual draws on stderr
            print(event.key, file=log)
        if event.key == "q":
            self.exit()

Keys(driver_class=PromptEscapeDriver).run()
"""


@pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal")
def test_on_a_terminal_escape_and_arrow_keys_are_read_as_such(tmp_path):
    """A lone ESC is the escape key; an arrow's escape sequence, written at once, stays an arrow."""
    master, slave = pty.openpty()
    log = tmp_path / "keys.log"
    log.write_text("")
    proc = subprocess.Popen([sys.executable, "-c", KEYS_APP, str(log)], stdin=slave, stdout=slave, stderr=slave,
                            cwd=REPO, env={**os.environ, "TERM": "xterm-256color"}, start_new_session=True)
    os.close(slave)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and b"\x1b[?1049h" not in _drain(master, 0.2):
            pass  # until the app has taken the screen
        for data in (b"\x1b", b"\x1b[B", b"x", b"\x1b", b"q"):
            os.write(master, data)
            _drain(master, 0.3)
        proc.wait(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    assert log.read_text().split() == ["escape", "down", "x", "escape", "q"]


def _drain(fd: int, wait: float) -> bytes:
    out = b""
    while select.select([fd], [], [], wait)[0]:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
        wait = 0.05
    return out
