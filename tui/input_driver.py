"""A terminal driver whose escape key is not held back 100 ms.

Textual's Linux driver (macOS uses it too) reads the terminal in a thread
that waits for input with ``select(0.1)`` and only then checks whether a lone
ESC byte has waited long enough (ESCDELAY) to be the escape key. So the
escape key always waited the full 100 ms of that select, whatever ESCDELAY
said, and every `esc back` was a tenth of a second late before anything moved.

Here the input thread's selector, after a read that brought input, waits at
most ESCDELAY before returning, so the driver's check runs on time: one extra
wake-up per key press, none while idle. Everything else is Textual's own
driver; its selector comes from its module's ``selectors``, which this
driver's input thread sees as a copy whose ``SelectSelector`` is the one below.
"""
from __future__ import annotations

import selectors
import types

from textual import constants
from textual.drivers import linux_driver


class PromptSelector(selectors.SelectSelector):
    """Waits at most ESCDELAY after a select that found input."""

    def __init__(self) -> None:
        super().__init__()
        self.after_input = False

    def select(self, timeout=None):
        if self.after_input and (timeout is None or timeout > constants.ESCAPE_DELAY):
            timeout = constants.ESCAPE_DELAY
        ready = super().select(timeout)
        self.after_input = bool(ready)
        return ready


def _selectors_with_prompt_escape() -> types.ModuleType:
    module = types.ModuleType("selectors")
    module.__dict__.update(selectors.__dict__)
    module.SelectSelector = PromptSelector
    return module


class PromptEscapeDriver(linux_driver.LinuxDriver):
    def run_input_thread(self) -> None:
        # Textual's loop, reading its selector class from the module global at its start.
        linux_driver.selectors = _selectors_with_prompt_escape()
        try:
            super().run_input_thread()
        finally:
            linux_driver.selectors = selectors
