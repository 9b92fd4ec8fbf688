"""A footer whose keys are in the screen's first frame.

Textual's ``Footer`` composes empty, waits for the screen's bindings signal
(sent once focus settles) and recomposes a refresh later, then again on every
later signal even when its keys are the same. At start-up that left the
matrix's first frame without keys, and put them on the terminal a tenth of a
second later (the recompose mounts a widget per key while the rescan starts).
This one composes its keys at once, with the screen, and recomposes as soon
as the signal comes (before the first frame is drawn) and only when the keys
it would show have changed: none on the matrix, whose keys are the same before
and after its table takes the focus. While the ctrl+p palette is open over the
screen its input has the focus (printable keys go to it, so the screen's
letter keys leave the active bindings): the footer keeps the screen's keys, as
it did under Textual's palette, instead of recomposing on opening and again on
closing (two layouts and a full repaint each). It relies on the Footer's
``_bindings_ready`` switch (Textual 8); tests/tui/test_tui_startup_imports.py
checks that the first frame has the keys.
"""
from __future__ import annotations

from textual.widgets import Footer


class KeysFooter(Footer):
    _shown: tuple | None = None

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.set_reactive(Footer._bindings_ready, True)  # compose the keys with the screen

    def _keys(self) -> tuple:
        """What the footer would show now: (key, description, enabled) per shown binding."""
        return tuple((binding.key, binding.description, enabled)
                     for (_, binding, enabled, _) in self.screen.active_bindings.values() if binding.show)

    def compose(self):
        if self._bindings_ready:
            self._shown = self._keys()
        yield from super().compose()

    def bindings_changed(self, screen) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus or not self.is_attached or screen is not self.screen:
            return  # as Footer: it catches up when the app or the screen is back
        palette = getattr(screen, "_jump_palette", None)
        if palette is not None and palette.is_open:
            return  # the screen's keys are back when it closes
        keys = self._keys()
        if keys != self._shown:
            self._shown = keys
            self.call_later(self.recompose)
