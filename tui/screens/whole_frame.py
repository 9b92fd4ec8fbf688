"""Screens drawn whole in their first frame (issue 20): WholeFrameScreen removes the
extra frames Textual draws after a pushed screen's first one, and ReadAheadScreen
reads its data before it is pushed. Kept out of tui/screens/base.py: the matrix
imports that at start-up and needs neither."""
from __future__ import annotations

from textual.message import Message

from tui.screens.base import GuardedScreen


class WholeFrameScreen(GuardedScreen):
    """A full, opaque screen shown in one frame, not three.

    Textual draws a screen pushed on top in three passes, each written whole to the
    terminal: the layout (its widgets changed), then the repaint its resume asked
    for, then the repaint the screen beneath forwards (push_screen repaints the
    screen it covers, and a covered screen passes its repaints up, for screens that
    let it show through). Opening an answer, the last byte came ~35 ms after the
    first; a screen whose first frame is also a layout is drawn once here.
    """

    async def _compose(self) -> None:
        # Screen sets its breakpoint classes (-narrow, -wide) on its first Resize, after
        # the first frame, and restyles every widget for them: another frame. Set from
        # the app's size before the widgets are styled, they are already right then.
        width, height = self.app.size
        classes = {}
        for dimension, own, apps in ((width, self.HORIZONTAL_BREAKPOINTS, self.app.HORIZONTAL_BREAKPOINTS),
                                     (height, self.VERTICAL_BREAKPOINTS, self.app.VERTICAL_BREAKPOINTS)):
            breakpoints = own if own is not None else apps  # Screen._on_resize's rule
            if breakpoints:
                classes |= {name: False for _, name in breakpoints}
                classes |= dict.fromkeys(self._get_breakpoint_classes(dimension, breakpoints), True)
        if classes:
            self.update_classes(classes, update=False)
        await super()._compose()

    def _extend_compose(self, widgets: list) -> None:
        super()._extend_compose(widgets)  # Textual's own: the toast rack and the tooltip
        # The toast rack has no display rule of its own until the screen resumes, when it
        # is set (none, without notifications): a layout and a frame after the first.
        # Set before it mounts, it is what it will stay.
        from textual.widgets._toast import ToastRack

        for rack in widgets:
            if isinstance(rack, ToastRack):
                rack.display = bool(self.app._notifications)

    def _on_screen_resume(self, event) -> None:
        # Runs before Screen's own handler (Textual calls each class's, subclass first).
        # push_screen asks the screen to restyle every widget as it resumes; on the
        # first resume they were styled as they mounted, a frame ago, and restyling
        # a DataTable drops its render cache: the tables drawn a third time.
        # Its handler then repaints the whole screen, for a screen uncovered again; on
        # the first resume the screen's first frame is whole (or about to be): that
        # repaint was a second frame, the same as the first.
        if not getattr(self, "_resumed_before", False):
            self._resumed_before = True
            event.refresh_styles = False
            self._skip_bare_refresh = True
            self.call_next(setattr, self, "_skip_bare_refresh", False)  # only within this handler

    def _screen_resized(self, size) -> None:
        # The screen's first Resize comes after its first frame, at the size that frame
        # was laid out for; laying out again then is a whole frame for nothing (a layout
        # asked for since is done on the screen's next update, as always).
        if size == self._compositor.size:
            return
        super()._screen_resized(size)

    def _refresh_layout(self, size=None, scroll: bool = False) -> None:
        whole = self._repaint_required
        if whole:
            self._dirty_widgets.add(self)  # the layout's frame is the whole screen ...
        super()._refresh_layout(size, scroll)
        if whole and self.is_current and not self.app._batch_count:
            self._repaint_required = False  # ... so the repaint after it has nothing to add

    def refresh(self, *regions, **kwargs):
        if not regions and not kwargs and getattr(self, "_skip_bare_refresh", False):
            self._skip_bare_refresh = False
            return self
        if regions and not kwargs and self.styles.background.a == 1:
            return self  # a covered screen's repaint, forwarded: nothing of it shows through this one
        return super().refresh(*regions, **kwargs)


class ReadAheadScreen(WholeFrameScreen):
    """A screen whose data can be read before it is shown (issue 20).

    ``BenchApp.open_read_ahead`` runs :meth:`read_ahead` in a worker thread and
    pushes the screen with the messages it returned; :meth:`fill_or_load` (called
    at the end of the screen's ``on_mount``) handles them before the first frame.
    A key then draws one whole frame, not an empty screen followed by a full one
    (each a full-screen render: ~60-100 ms at 140x45 on this project's 2-core
    machine). Where reading takes longer than the app waits, the screen is shown
    first and handles the messages when they come; where it failed, or the screen
    was pushed some other way, the screen loads for itself (:meth:`load_self`),
    which also reports any error.
    """

    def __init__(self) -> None:
        super().__init__()
        self.read_ahead_messages: list[Message] | None = None  # set before the push
        self.waiting_for_read_ahead = False
        self._began = False  # fill_or_load has run

    def read_ahead(self, app) -> list[Message]:
        """The messages the screen's own workers would post on opening. In a worker
        thread, before the screen is mounted, so ``app`` is given: an unmounted
        screen has none (``self.app`` raises NoActiveAppError there). May raise."""
        raise NotImplementedError

    def load_self(self) -> None:
        """Start the screen's own workers (what on_mount did before read-ahead)."""
        raise NotImplementedError

    def fill_or_load(self) -> None:
        self._began = True
        messages, self.read_ahead_messages = self.read_ahead_messages, None
        if messages is not None:
            self.take_read_ahead(messages)
        elif not self.waiting_for_read_ahead:
            self.load_self()

    def deliver_read_ahead(self, messages: list[Message] | None) -> None:
        """The read-ahead's messages, arriving after the push (the app stopped waiting)."""
        if not self._began:  # pushed, not mounted yet: on_mount takes them
            self.read_ahead_messages, self.waiting_for_read_ahead = messages, False
        elif self.waiting_for_read_ahead and self in self.app.screen_stack:
            self.take_read_ahead(messages)

    def take_read_ahead(self, messages: list[Message] | None) -> None:
        """Handle the read-ahead messages now, as if posted (None: reading failed)."""
        self.waiting_for_read_ahead = False
        if messages is None:
            self.load_self()
            return
        for message in messages:
            getattr(self, message.handler_name)(message)
