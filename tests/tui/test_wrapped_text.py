"""WrappedText (the published screen's summary) draws what a Static draws, cell for
cell (text, styles and the offsets a mouse selection copies), at any width; and of
a long text in a short scrolling pane it wraps only the lines it draws."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from benchtui.tui.screens.published import summary_text
from benchtui.tui.widgets.wrapped_text import WrappedText
from rich.text import Text
from textual.app import App
from textual.containers import VerticalScroll
from textual.geometry import Region
from textual.widgets import Static

sys.path.insert(0, str(Path(__file__).parent))
from test_tui_published_screen_sizes import deck_data, deck_rows  # noqa: E402


def summary(problems: int = 0) -> Text:
    text = summary_text(deck_data(deck_rows(40)))
    for i in range(problems):  # a deck of many problems: a line each
        text.append(f"  kb_l1_p{i}: ", style="bold")
        text.append(f"{i % 4} agree, {i % 3} differ, 0 not judged here\n")
    text.append("a line wider than the pane, wrapped at words " * 8 + "\n", style="red")
    text.append("a\ttab, then a word longer than any width " + "x" * 200)
    return text


class Both(App):
    CSS = "VerticalScroll { height: 10; } .panel { padding: 0 1; height: auto; }"

    def __init__(self, text: Text) -> None:
        super().__init__()
        self.text = text

    def compose(self):
        with VerticalScroll():
            yield Static(self.text, id="static", classes="panel")
        with VerticalScroll():
            yield WrappedText(self.text, id="wrapped", classes="panel")


def drawn(widget) -> list[list]:
    return [list(strip) for strip in widget.render_lines(Region(0, 0, widget.size.width, widget.virtual_size.height))]


@pytest.mark.parametrize("width", [30, 80, 140])
async def test_it_draws_what_a_static_draws(width):
    app = Both(summary())
    async with app.run_test(size=(width, 40)) as pilot:
        await pilot.pause()
        static, wrapped = app.query_one("#static"), app.query_one("#wrapped", WrappedText)
        assert wrapped.size == static.size and wrapped.size.height > 20
        assert drawn(wrapped) == drawn(static)
        assert str(wrapped.render()) == str(app.text)


async def test_a_long_text_is_wrapped_only_where_it_is_drawn():
    app = Both(summary(600))
    async with app.run_test(size=(80, 40)) as pilot:
        await pilot.pause()
        wrapped = app.query_one("#wrapped", WrappedText)
        lines = len(wrapped._content_lines())
        assert lines > 600 and wrapped.size.height >= lines
        # the lines of the rows in view (10) and those wider than the pane (their rows had to be
        # counted), at each width the first layouts tried: not the 600
        assert len({line for line, _ in wrapped._strips.keys()}) < 30  # noqa: SIM118 (an LRUCache: no __iter__)
        wrapped.update("one line")
        await pilot.pause()
        assert wrapped.size.height == 1 and "one line" in "".join(s.text for s in drawn(wrapped)[0])
