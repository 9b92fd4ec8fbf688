"""The base of every benchtui screen: a failing handler becomes a notification.

Textual ends a screen's message loop when one of its handlers raises (and
prints a traceback when the app exits). Catching around ``_on_message`` (the
one place a screen's own handlers run; private Textual API, pinned by
tests/tui/test_tui_errors.py) keeps the screen alive and reports the error.
Key actions are guarded in ``BenchApp._dispatch_action``.
"""
from __future__ import annotations

import traceback

from textual.message import Message
from textual.screen import Screen

# Below this many columns footers drop the padding around each key, so that every
# screen's `q Quit` and `? Help` still fit at 80 columns.
COMPACT_FOOTER_BELOW = 120


class GuardedScreen(Screen):
    def on_mount(self) -> None:
        self.fit_footer()

    def on_resize(self) -> None:
        self.fit_footer()

    def fit_footer(self) -> None:
        from benchtui.tui.widgets.footer import KeysFooter

        narrow = self.app.size.width < COMPACT_FOOTER_BELOW
        for footer in self.query(KeysFooter):  # it shows the palette key while it fits
            footer.compact = narrow

    def on_screen_suspend(self) -> None:
        # A screen covered with its jump palette open (an answer chosen in it) closes it,
        # out of sight: the screen is drawn again when it resumes anyway.
        palette = getattr(self, "_jump_palette", None)
        if palette is not None and palette.is_open:
            palette.close()

    async def _on_message(self, message: Message) -> None:
        try:
            await super()._on_message(message)
        except Exception as error:
            self.app.log.error("".join(traceback.format_exception(error)))
            self.app.report_error(f"{type(self).__name__}: {message.handler_name} failed: {type(error).__name__}", error)
