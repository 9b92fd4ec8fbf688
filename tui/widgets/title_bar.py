"""The matrix's title line, drawn as Textual's Header draws it, as one widget.

Textual's ``Header`` is four widgets (the header, its icon, its title and the
clock's space), each with its styles, layout and render before the first
frame: ~13 ms of the dashboard's start-up CPU. This draws the same line
(the icon in its 8 cells at the left, the title centred between the icon and
the clock's 10 cells) from the same title, in Header's colours; a click on
the icon opens the palette, as on Textual's.
"""
from __future__ import annotations

from rich.text import Text
from textual import events
from textual.widget import Widget

ICON, ICON_CELLS, CLOCK_CELLS = "⭘", 8, 10  # Textual's HeaderIcon (width 8, padding 0 1), HeaderClockSpace (width 10)


class TitleBar(Widget, can_focus=False):
    DEFAULT_CSS = """
    TitleBar {
        dock: top;
        width: 100%;
        height: 1;
        background: $panel;
        color: $foreground;
        text-wrap: nowrap;
    }
    """

    def render(self) -> Text:
        screen, app = self.screen, self.app
        title = screen.title if screen.title is not None else app.title
        sub_title = screen.sub_title if screen.sub_title is not None else app.sub_title
        shown = Text(title or "")  # App.format_title's rule, without parsing markup (Rich's emoji table)
        if sub_title:
            shown.append(f" — {sub_title}", style="dim")
        room = max(self.size.width - ICON_CELLS - CLOCK_CELLS, 0)
        shown.truncate(room, overflow="ellipsis")
        left = (room - shown.cell_len) // 2
        line = Text(f" {ICON}".ljust(ICON_CELLS) + " " * left, no_wrap=True)
        line.append_text(shown)
        line.append(" " * (self.size.width - line.cell_len))
        return line

    def on_mount(self) -> None:
        for node in (self.app, self.screen):
            self.watch(node, "title", self.refresh, init=False)
            self.watch(node, "sub_title", self.refresh, init=False)

    async def on_click(self, event: events.Click) -> None:
        if event.x < ICON_CELLS and self.app.ENABLE_COMMAND_PALETTE:
            event.stop()
            await self.run_action("app.command_palette")
