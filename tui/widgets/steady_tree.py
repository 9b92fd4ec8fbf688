"""A Tree that keeps its lines while its size stays the same (the answer screen's file tree)."""
from __future__ import annotations

from textual.widgets import Tree


class SteadyTree(Tree):
    """Textual's Tree rebuilds its lines on every Resize, and the first comes after the
    screen's first frame: another layout and frame. Its lines do not depend on the
    width; only the line cache's size depends on the height."""

    _built_for = None

    def _on_resize(self, event) -> None:
        # (Textual calls each class's handler in turn: prevent_default stops Tree's.)
        self._line_cache.grow(event.size.height)
        if self._built_for == self.size:
            event.prevent_default()
        self._built_for = self.size

    def render_lines(self, crop):
        self._built_for = self.size  # the lines it draws are for this size
        return super().render_lines(crop)

    def relabel(self, labels: list) -> None:
        """TreeNode.set_label for each (node, label) that changes, drawn with the tree's
        next frame: set_label repaints each node's line in a callback, after the frame
        that already showed the new labels (and on every resize, labels or not)."""
        changed = False
        for node, label in labels:
            text = self.process_label(label)
            if node.label == text:
                continue
            try:
                node._label = text
                node._updates += 1
                changed = True
            except AttributeError:  # Textual's internals moved
                node.set_label(label)
        if changed:
            self._invalidate()
