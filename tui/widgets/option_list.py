"""An OptionList that keeps its rendered options while its width stays the same."""
from __future__ import annotations

from textual import events
from textual.widgets import OptionList


class SteadyOptionList(OptionList):
    """Textual sends a Resize to every widget that appears, and OptionList then forgets
    its rendered options and asks for a layout: a list shown in a screen's first frame
    was drawn again a frame later (~25-30 ms), as it was. Only a new width changes how
    the options wrap, so only that clears them."""

    _width: int | None = None

    def _on_resize(self, event: events.Resize) -> None:
        # (Textual calls each class's handler in turn: prevent_default stops OptionList's.)
        # The width now, not the event's: a screen laid out twice before its first frame
        # (WholeFrameScreen) sends the first layout's Resize too, its size since changed.
        if self.size.width == self._width:
            event.prevent_default()
        self._width = self.size.width

    def render_lines(self, crop):
        # The options are measured and drawn for the width they are drawn at (OptionList
        # measures them here): a Resize to that width changes nothing. A list first drawn
        # in its screen's first frame gets its first Resize after it.
        self._width = self.size.width
        return super().render_lines(crop)

    def _size_updated(self, size, virtual_size, container_size, layout: bool = True) -> bool:
        # OptionList measures its options as it draws them, after the layout, and then
        # asks for another layout for its new virtual size (a scrollbar): a second frame.
        # Measured as the layout sizes it, that layout's next pass has them.
        changed = super()._size_updated(size, virtual_size, container_size, layout)
        self._update_lines()
        return changed
