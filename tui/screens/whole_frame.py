"""Screens drawn whole in their first frame: WholeFrameScreen removes the
extra frames Textual draws after a pushed screen's first one, and ReadAheadScreen
reads its data before it is pushed. Kept out of tui/screens/base.py: the matrix
imports that at start-up and needs neither."""
from __future__ import annotations

import sys

from benchtui.tui.screens.base import GuardedScreen
from textual._time import get_time
from textual.message import Message
from textual.scrollbar import ScrollBar, ScrollBarCorner
from textual.widget import AwaitMount


def measure_tables_now(screen) -> None:
    """Each DataTable of ``screen`` measures the rows and cells it was given now, not on
    its next idle (Textual's DataTable._on_idle, private): filled just before the screen
    is pushed, a table measured itself after the layout that shows the screen, and the
    layout it asked for then was a second frame (~30 ms) after the first."""
    from textual.widgets import DataTable

    for table in screen.query(DataTable):
        try:
            if table._updated_cells:
                updated, table._updated_cells = table._updated_cells.copy(), set()
                table._update_column_widths(updated)
            if table._require_update_dimensions:
                table._require_update_dimensions = False
                new_rows = table._new_rows.copy()
                table._new_rows.clear()
                table._update_dimensions(new_rows)
        except AttributeError:  # Textual's internals moved: the table measures on idle, as before
            return


def _scrollbar_state(bar: ScrollBar) -> tuple:
    """What a scrollbar's picture is drawn from (textual.scrollbar.ScrollBar.render)."""
    styles = bar.parent.styles
    return (bar.size, bar.vertical, bar.window_virtual_size, bar.window_size, bar.position, bar.thickness,
            bar.mouse_over, bar.grabbed, bar.renderer, bar.parent.background_colors,
            styles.scrollbar_background, styles.scrollbar_background_hover, styles.scrollbar_background_active,
            styles.scrollbar_color, styles.scrollbar_color_hover, styles.scrollbar_color_active,
            bar.screen.styles.scrollbar_color)


def place_tab_underlines(screen) -> None:
    """Each Tabs' underline under its active tab now, where the layout put the tab:
    Textual moves it after the frame (call_after_refresh), a frame later."""
    from textual.css.query import NoMatches
    from textual.widgets import Tabs
    from textual.widgets._tabs import Underline

    for tabs in screen.query(Tabs):
        try:
            active = tabs.query_one("#tabs-list > Tab.-active")
            underline = tabs.query_one(Underline)
            start, end = active.virtual_region.shrink(active.styles.gutter).column_span
        except (NoMatches, AttributeError):
            continue
        underline.show_highlight = True
        underline.highlight_start, underline.highlight_end = start, end


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

    _full_layout_began = float("-inf")  # (textual._time's clock)

    def _on_layout(self, message) -> None:
        # Runs before Screen's own handler. A widget asks for a layout on its next idle,
        # after the screen may have laid everything out in the meantime (a pushed screen
        # does, before its widgets' idle): the request posted before that layout began
        # is met, and doing it again was a second frame after the first.
        # A scrollbar asks for one as it is shown or hidden, always beside the widget
        # it belongs to (whose own request is the one that places it).
        if message.time < self._full_layout_began or isinstance(message.widget, (ScrollBar, ScrollBarCorner)):
            message.stop()
            message.prevent_default()

    _whole_frame_began = float("-inf")

    def _on_update(self, message) -> None:
        # Likewise a widget's repaint request, posted before a layout that drew the
        # whole screen began: it is in that frame.
        widget = message.widget
        if message.time < self._whole_frame_began or (
                isinstance(widget, ScrollBar) and getattr(widget, "_drawn_as", None) == _scrollbar_state(widget)):
            message.stop()  # (a scrollbar drawn as it is now: new ones ask as they start)
            message.prevent_default()

    def _refresh_layout(self, size=None, scroll: bool = False) -> None:
        began = get_time()
        if not scroll:
            self._full_layout_began = began
        first = not scroll and not getattr(self, "_laid_out", False)
        if first and self.is_current and not self.app._batch_count:
            self._laid_out = True
            self._settle_first_layout(size)
            whole = True
        else:
            whole = self._repaint_required
        if whole:
            self._dirty_widgets.add(self)  # the layout's frame is the whole screen ...
        super()._refresh_layout(size, scroll)
        if whole and self.is_current and not self.app._batch_count:
            self._whole_frame_began = began
            self._repaint_required = False  # ... so the repaint after it has nothing to add
            # Each scrollbar the layout placed asked to be drawn again (its sizes set as
            # it was placed, then once more as its widget's size was updated), and was
            # drawn a frame later (~20-30 ms after the first), as it already was in it.
            # (A scrollbar that appears or goes asks its widget for a layout: kept.)
            # So is a scrollbar's own layout request: the layout placed it.
            for widget, _ in self._compositor.layers:
                if isinstance(widget, ScrollBar):
                    widget._repaint_required = widget._layout_required = False
                    widget._drawn_as = _scrollbar_state(widget)
                elif first:
                    widget._repaint_required = False

    def _settle_first_layout(self, size) -> None:
        """Lay the screen out once without drawing it. A first layout gives every widget
        its size, and each widget whose size (or virtual size) was set so asks for
        another layout: Textual did that one after the first frame, a second frame
        (~30 ms) with the same picture. Asked for here, the layout that follows and
        draws the screen is that second one."""
        self._hold_frame = True
        try:
            super()._refresh_layout(size)
        finally:
            self._hold_frame = False
        for widget, _ in self._compositor.layers:  # (scrollbars too: they are no one's children)
            widget._layout_required = False  # the layout about to be done is theirs
        for widget in self.walk_children(with_self=False):
            widget._layout_required = False
        self._layout_required = False
        self._layout_widgets.clear()
        place_tab_underlines(self)
        self.laid_out_once()

    def laid_out_once(self) -> None:
        """Between the two layouts of the screen's first frame: every widget has its size,
        nothing is drawn yet. For what a screen sizes to its widgets (on Resize, after the
        first frame, that was a second frame)."""


    def _compositor_refresh(self) -> None:
        if not getattr(self, "_hold_frame", False):
            super()._compositor_refresh()

    def refresh(self, *regions, **kwargs):
        if not regions and not kwargs and getattr(self, "_skip_bare_refresh", False):
            self._skip_bare_refresh = False
            return self
        if regions and not kwargs and self.styles.background.a == 1:
            return self  # a covered screen's repaint, forwarded: nothing of it shows through this one
        if kwargs == {"layout": True} and not regions and self._mount_laid_out(sys._getframe(1)):
            return self
        return super().refresh(*regions, **kwargs)

    def _mount_laid_out(self, caller) -> bool:
        """``caller`` is Textual's AwaitMount asking for the layout that places the
        widgets it waited for, and they are placed already. Each mount asks, once the
        widgets have run their on_mount; for the screen itself (push_screen's mount)
        and its composed widgets that came after the screen's first frame: a second
        layout and frame (~30 ms) the same as the first. (Private: AwaitMount's inner
        function; anything else there and the layout is done, as always.)"""
        if caller.f_code.co_name != "await_mount":
            return False
        waiter = caller.f_locals.get("self")
        widgets = getattr(waiter, "_widgets", None)
        if not isinstance(waiter, AwaitMount) or not widgets:
            return False
        try:
            return all(widget in self._compositor for widget in widgets)
        except Exception:
            return False


class ReadAheadScreen(WholeFrameScreen):
    """A screen whose data can be read before it is shown.

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
        measure_tables_now(self)  # before the first layout, which then is the only one
