"""The matrix's footer: its keys as one line of text, in the first frame.

Textual's ``Footer`` is a container of one widget per key, composed empty and
filled a refresh later (when the screen's bindings signal comes), then composed
again on every later signal. Ten widgets were a quarter of the dashboard's
CPU before its first frame at 50 x 200 (~30 ms: styles, layout and a render
each), and the keys reached the terminal a frame late. This widget draws the
same keys, in the same colours and spacing (Textual's footer variables and
its compact rule; the palette key at the right while it fits), as one line
rendered from the screen's active bindings:
nothing to compose, and a bindings change is a repaint. A click on a key
presses it, as on Textual's footer.
"""
from __future__ import annotations

from rich.text import Text
from textual import events
from textual.reactive import reactive
from textual.widget import Widget

# Textual's `vkey` border, left edge: what its footer draws before the palette key
PALETTE_EDGE = "▏"


class KeysFooter(Widget, can_focus=False):
    ALLOW_SELECT = False
    COMPONENT_CLASSES = {"keys-footer--key", "keys-footer--description", "keys-footer--edge"}
    DEFAULT_CSS = """
    KeysFooter {
        dock: bottom;
        height: 1;
        color: $footer-foreground;
        background: $footer-background;
        text-wrap: nowrap;
        .keys-footer--key {
            color: $footer-key-foreground;
            background: $footer-key-background;
            text-style: bold;
        }
        .keys-footer--description {
            color: $footer-description-foreground;
            background: $footer-description-background;
        }
        .keys-footer--edge { color: $foreground 20%; }
    }
    """

    compact = reactive(False)  # the same rule as Textual's footer (tui/screens/base.py sets both)

    def __init__(self, compact: bool = False, **kwargs) -> None:
        super().__init__(**kwargs)
        self.set_reactive(KeysFooter.compact, compact)
        self._spots: list[tuple[int, int, str, bool]] = []  # (start, end, key, enabled) of each drawn key
        self._shown: tuple | None = None

    def keys(self) -> list[tuple[str, str, str, bool, bool]]:
        """(key, how it is shown, description, enabled, is the palette key), left to right;
        one per action, as Textual's footer lists them."""
        return [key[:5] for key in self._keys()]

    def _keys(self) -> list[tuple[str, str, str, bool, bool, bool]]:
        """keys(), each with whether it is the app's own (q, ?): kept when room is short."""
        app = self.app
        active = self.screen.active_bindings
        seen, out = set(), []
        for node, binding, enabled, _ in active.values():
            if binding.show and binding.action not in seen:
                seen.add(binding.action)
                out.append((binding.key, app.get_key_display(binding), binding.description, enabled, False,
                            node is app))
        if app.ENABLE_COMMAND_PALETTE:
            found = active.get(app.COMMAND_PALETTE_BINDING)
            if found is not None:
                _, binding, enabled, _ = found
                out.append((binding.key, app.get_key_display(binding), binding.description, enabled, True, True))
        return out

    def render(self) -> Text:
        keys, width = self._keys(), self.size.width
        line, right, spots = self._line(keys)
        if line.cell_len + right.cell_len > width:  # no room: the palette key goes (ctrl+p still works)
            keys = [k for k in keys if not k[4]]
            line, right, spots = self._line(keys)
        while line.cell_len > width and any(not k[5] for k in keys):
            # still none: the screen's last keys go, the app's (q, ?) stay whole; ? lists them all
            drop = max(i for i, k in enumerate(keys) if not k[5])
            keys = keys[:drop] + keys[drop + 1:]
            line, right, spots = self._line(keys)
        gap = max(width - line.cell_len - right.cell_len, 0)
        line.append(" " * gap)
        offset = line.cell_len
        line.append_text(right)
        self._spots = [(s + (offset if palette else 0), e + (offset if palette else 0), key, enabled)
                       for s, e, key, enabled, palette in spots]
        return line

    def _line(self, keys: list) -> tuple[Text, Text, list]:
        """The keys drawn: (the line, the palette key at the right, each key's spot)."""
        key_style = self.get_component_rich_style("keys-footer--key")
        description_style = self.get_component_rich_style("keys-footer--description")
        line, right, spots = Text(no_wrap=True, overflow="crop"), Text(no_wrap=True), []
        for key, shown, description, enabled, palette, _ in keys:
            part = right if palette else line
            if palette:
                part.append(PALETTE_EDGE, self.get_component_rich_style("keys-footer--edge"))
            start = part.cell_len
            if self.compact or palette:  # Textual's palette key is always drawn compact
                part.append(shown, key_style)
                if description:
                    part.append(f" {description}", description_style)
                part.append(" ")
            else:
                part.append(f" {shown} ", key_style)
                if description:
                    part.append(f"{description} ", description_style)
            if not enabled:
                part.stylize("dim", start)
            spots.append((start, part.cell_len, key, enabled, palette))
        return line, right, spots

    def on_mount(self) -> None:
        self._shown = tuple(self.keys())
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _bindings_changed(self, screen) -> None:
        palette = getattr(screen, "_jump_palette", None)
        if palette is not None and palette.is_open:
            # its input has the focus, so the screen's letter keys leave the active
            # bindings: the footer keeps showing them, as under Textual's palette
            return  # (and the palette's opening and closing repaint nothing here)
        keys = tuple(self.keys())
        if keys != self._shown:  # the matrix's are the same before and after its table takes the focus
            self._shown = keys
            self.refresh()

    def watch_compact(self) -> None:
        self.refresh()

    def on_click(self, event: events.Click) -> None:
        for start, end, key, enabled in self._spots:
            if start <= event.x < end:
                if enabled:
                    self.app.simulate_key(key)
                else:
                    self.app.bell()
                return
