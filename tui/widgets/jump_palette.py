"""ctrl+p: jump to a model, challenge, answer, file or transcript, or run one of
Textual's system commands (theme, quit, keys, screenshot, ...).

Textual's own command palette is a modal screen with a tinted background: it
repainted the whole screen behind it (dimmed), started its providers
asynchronously and gathered their hits in batches every 0.25 s, so it took
about a second to settle at 50 models x 200 challenges. This palette is a
widget in its own layer, docked at the top of the screen it opens on: mounted
there the first time and shown or hidden afterwards, so opening it paints its
own rows and nothing else. Each keystroke searches the prebuilt index
(tui/palette_index.py, a few ms at 70,000 targets) and fills the list in the
same handler: one frame a key. What else it took (each measured on a pseudo-
terminal with bench/tui_trace.py, and held by tests/tui/test_tui_palette.py):

- the matrix table keeps its focused look under the palette and is neither
  restyled nor repainted (MatrixTable.held_focus): blurred, DataTable dropped
  every cache and rendered every row again, on opening and on closing;
- the matrix's footer keeps its keys while the palette is open (it recomposed
  twice: tui/widgets/footer.py);
- the list has a fixed height and no scrollbar: a list that grew and shrank
  with its hits laid the screen out again a frame later, and a scrollbar was
  painted in a frame of its own; the list is not rendered twice when it
  reappears (JumpList._on_resize), nor the table's scrollbars on each layout
  (MatrixTable._size_updated).

Matching is what the old provider did: every word of the query, in any order,
as a substring (else fuzzily, by the index), then each word scored by
Textual's fuzzy matcher (the hits sorted by the mean score) and its letters
highlighted; system commands are matched by title on the whole query.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from benchtui.tui.palette_index import PaletteIndex, Target, palette_index
from benchtui.tui.widgets.option_list import SteadyOptionList
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Input, OptionList
from textual.widgets.option_list import Option

DISCOVER = 40  # targets listed for an empty query
HIGHLIGHT = "bold underline"


@dataclass(frozen=True)
class Hit:
    score: float
    prompt: Content  # the text, matched letters highlighted
    help: str
    run: Callable[[], object]
    text: str
    covers: bool = False  # it opens a screen over this one (an answer, a file, a transcript)


def target_action(app, target: Target) -> Callable[[], object]:
    """What choosing ``target`` does: a model or challenge jumps the matrix there; an answer, file or transcript opens it."""
    if target.action == "matrix":
        return partial(app.jump_matrix, model=target.model, challenge=target.challenge)
    if target.action == "transcript":
        return partial(app.open_transcript, target.model, target.challenge, target.relpath)
    if target.relpath is not None:
        return partial(app.open_answer, target.model, target.challenge, target.relpath)
    return partial(app.open_answer, target.model, target.challenge)


def covers(target: Target) -> bool:
    return target.action != "matrix"


def search(app, index: PaletteIndex, query: str, screen, commands: list | None = None) -> list[Hit]:
    """The palette's list for ``query``: the index's targets holding every word
    (any order, fuzzily if none holds them as they are) and the system commands
    whose title matches, best score first; for an empty query the first
    targets, then every system command. ``commands``: the screen's system
    commands (App.get_system_commands), read now if not given."""
    from textual.fuzzy import Matcher

    commands = list(app.get_system_commands(screen)) if commands is None else commands
    terms = query.split()
    if not terms:
        hits = [Hit(0.0, Content(t.text), t.help, target_action(app, t), t.text, covers=covers(t))
                for t in index.first(DISCOVER)]
        hits += [Hit(0.0, Content(c.title), c.help, c.callback, c.title)
                 for c in sorted(commands, key=lambda c: c.title) if c.discover]
        return hits
    hits = []
    matchers = [Matcher(t, match_style=HIGHLIGHT) for t in terms]
    for target in index.search(" ".join(terms)):
        text = target.text
        matches = [m.fuzzy_search.match(m.query, text) for m in matchers]
        if not all(score > 0 for score, _ in matches):
            continue
        prompt = Content(text)
        for _, offsets in matches:
            for offset in offsets:
                prompt = prompt.stylize(HIGHLIGHT, offset, offset + 1)
        score = sum(score for score, _ in matches) / len(matches)
        hits.append(Hit(score, prompt, target.help, target_action(app, target), text, covers=covers(target)))
    whole = Matcher(query.strip(), match_style=HIGHLIGHT)
    for command in commands:
        score = whole.match(command.title)
        if score > 0:
            hits.append(Hit(score, whole.highlight(command.title), command.help, command.callback, command.title))
    hits.sort(key=lambda h: h.score, reverse=True)  # stable: the index's priority order among equals
    return hits


class JumpInput(Input):
    """The query. Its palette searches as the value changes, in the same
    handler: through Input.Changed the input was painted in one frame and
    the list in the next."""

    def watch_value(self, value: str) -> None:
        palette = self.parent
        if isinstance(palette, JumpPalette) and palette.is_open:
            palette.show(value)

    def on_focus(self) -> None:
        # (after Input's own handler, which starts the blink as the focus comes)
        palette = self.parent
        if isinstance(palette, JumpPalette):
            self.call_after_refresh(palette._blink_from_now)


class JumpList(SteadyOptionList, can_focus=False):
    """The hits; the focus stays in the input (its keys move this list)."""

    # No scrollbar (overflow-y: hidden): every list change re-laid it out and
    # its scrollbar was painted a frame later (~25 ms). The highlight scrolls
    # the list; so does the mouse wheel:
    @property
    def allow_vertical_scroll(self) -> bool:
        return self.virtual_size.height > self.scrollable_content_region.height


class JumpPalette(Vertical):
    DEFAULT_CSS = """
    JumpPalette {
        layer: palette;
        dock: top;
        visibility: hidden;
        height: auto;
        margin-top: 1;  /* the header stays in view; no side margins: a docked widget is as wide as the screen plus them */
        background: $surface;
        border: round $primary;
        &.-open { visibility: visible; }
        & > Input { border: none; height: 1; padding: 0 1; background: $surface; }
        & > Input:focus { border: none; background-tint: 0%; }
        & > JumpList { height: 50vh; overflow-y: hidden; border: none; border-top: hkey $primary 50%; background: $surface; padding: 0; }
        & > JumpList:focus { border: none; border-top: hkey $primary 50%; background-tint: 0%; }
        & > JumpList > .option-list--option { padding: 0 1; }
    }
    """
    BINDINGS = [
        Binding("escape", "close", "Close", show=False),
        Binding("down", "move('cursor_down')", show=False),
        Binding("up", "move('cursor_up')", show=False),
        Binding("pagedown", "move('page_down')", show=False),
        Binding("pageup", "move('page_up')", show=False),
    ]

    COVER_WAIT_S = 0.6  # longer than a screen waits for its data before it shows anyway

    def __init__(self) -> None:
        super().__init__(id="jump-palette")
        self.index = PaletteIndex([])
        self.hits: list[Hit] = []
        self.commands: list = []  # the screen's system commands, read as it opens
        self._return_focus: Widget | None = None
        self._cover_timer = None  # run_hit's: closes the palette if no screen covered it

    def compose(self) -> ComposeResult:
        yield JumpInput(placeholder="Jump to a model, challenge, answer, file or transcript, or a command (theme, quit…)",
                    id="jump-input", select_on_focus=False)
        yield JumpList(id="jump-list")

    @property
    def is_open(self) -> bool:
        return self.has_class("-open")

    def open(self) -> None:
        """Show the palette over the screen, the input focused and emptied, the
        list at its first targets. The index is the app's (rebuilt if a scan has
        run since); a store that cannot be read leaves it empty, with a notice."""
        app = self.app
        self._stop_cover_timer()
        try:
            self.index = palette_index(app)
        except Exception as exc:  # a broken store must not break the palette
            self.index = PaletteIndex([])
            app.notify(f"palette: {exc}", severity="error")
        if not self.is_open:
            focused = self.screen.focused
            self._return_focus = None if self._inside(focused) else focused
            if self._return_focus is not None and hasattr(focused, "held_focus"):
                focused.held_focus = True  # it keeps its focused look under the palette (MatrixTable)
            # read before the input takes the focus: "Maximize" is about the widget underneath
            self.commands = list(app.get_system_commands(self.screen))
        entry = self.query_one(JumpInput)
        entry.value = ""  # (not open yet: no search)
        self.show("")
        self.add_class("-open")
        entry.focus(scroll_visible=False)

    def _stop_cover_timer(self) -> None:
        if self._cover_timer is not None:
            self._cover_timer.stop()
            self._cover_timer = None

    def close(self, restore_focus: bool = True) -> None:
        self._stop_cover_timer()
        if not self.is_open:
            return
        back, self._return_focus = self._return_focus, None
        if restore_focus and back is not None and back.is_attached and back.focusable:
            self.screen.set_focus(back, scroll_visible=False)  # (Widget.focus would repaint it whole first)
            if hasattr(back, "release_focus"):
                self.call_after_refresh(lambda: back.has_focus or back.release_focus())
        else:
            if hasattr(back, "release_focus"):
                back.release_focus()
            if self._inside(self.screen.focused):
                self.screen.set_focus(None)
        self.remove_class("-open")

    def show(self, query: str) -> None:
        self.hits = search(self.app, self.index, query, self.screen, self.commands)
        listing = self.query_one(JumpList)
        listing.clear_options()
        listing.add_options([Option(Content.assemble(h.prompt, "\n", (h.help, "dim"))) for h in self.hits])
        if self.hits:
            listing.highlighted = 0
        else:
            listing.add_option(Option("nothing matches", disabled=True))
        self.call_after_refresh(self._blink_from_now)

    def _blink_from_now(self) -> None:
        # The input's cursor blinks 0.5 s after a key or after it takes the focus;
        # with the palette or the list drawn after that, the blink came ~0.4 s
        # after the redraw. The cursor stays on for 0.5 s from the redraw instead.
        entry = self.query_one(JumpInput)
        restart_blink = getattr(entry, "_restart_blink", None)
        if restart_blink is not None and entry.has_focus:
            restart_blink()

    @on(Input.Changed, "#jump-input")
    def _changed(self, event: Input.Changed) -> None:
        event.stop()  # searched already (JumpInput.watch_value)

    @on(Input.Submitted, "#jump-input")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.run_hit(self.query_one(JumpList).highlighted)

    @on(OptionList.OptionSelected, "#jump-list")
    def _clicked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.run_hit(event.option_index)

    @on(OptionList.OptionHighlighted, "#jump-list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()

    def run_hit(self, position: int | None) -> None:
        """Close, then run the hit at ``position`` (nothing if none is there)."""
        if position is None or not 0 <= position < len(self.hits):
            return
        hit = self.hits[position]
        if hit.covers:
            # The palette stays until the new screen covers it (its screen closes it on
            # suspend): closed first, the whole matrix under it was drawn again (~30 ms
            # at 50 x 200) for a frame the answer replaced at once. Not covered within
            # COVER_WAIT_S (the answer could not be opened: a notice says why), it closes.
            self._cover_timer = self.set_timer(self.COVER_WAIT_S, self.close)
        else:
            self.close()
        self.app.call_later(hit.run)

    def action_close(self) -> None:
        self.close()

    def action_move(self, how: str) -> None:
        getattr(self.query_one(JumpList), f"action_{how}")()

    def on_descendant_blur(self, event: events.DescendantBlur) -> None:
        # a click elsewhere, tab: the palette goes (the focus stays where it went)
        self.call_after_refresh(self._close_if_left)

    def _close_if_left(self) -> None:
        focused = self.screen.focused if self.is_attached else None
        if self.is_open and not self._inside(focused):
            self.close(restore_focus=False)

    def _inside(self, widget: Widget | None) -> bool:
        return widget is not None and (widget is self or self in widget.ancestors)

