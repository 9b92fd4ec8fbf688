"""`?`: every key of the screen underneath, read from its live bindings (so remaps show)."""
from __future__ import annotations

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

# Below the screen's own keys: what holds everywhere (not another screen's keys: `?` on the
# answer screen used to open on the matrix's).
GENERAL = ("Everywhere: ctrl+p jump to a model, challenge, answer, file or transcript, or run a command (theme, keys, "
           "screenshot, quit): words in any order, ↑↓ pgup pgdn pick, enter go, esc close · ? help · q quit · esc back\n")


def keys_file_words() -> str:
    """Where the key config is read from on this machine, and which variable chose it."""
    import os
    from pathlib import Path

    from benchtui.host.config import config_path

    path, home = str(config_path()), str(Path.home())
    shown = "~" + path[len(home):] if path.startswith(home + os.sep) else path
    why = ("$BENCHTUI_CONFIG" if os.environ.get("BENCHTUI_CONFIG") else
           "$XDG_CONFIG_HOME/benchtui/keys.toml; $BENCHTUI_CONFIG names another file" if os.environ.get("XDG_CONFIG_HOME")
           else "$BENCHTUI_CONFIG names another file")
    return f"Keys are remappable by Binding id in {shown} ({why})."


class HelpScreen(ModalScreen):
    BINDINGS = [Binding("escape,question_mark,q", "app.pop_screen", "Close", id="help.close")]

    def __init__(self, under: Screen) -> None:
        super().__init__()
        self.under = under

    def compose(self) -> ComposeResult:
        table = Table(title=f"Keys: {type(self.under).__name__.replace('Screen', '')}", expand=True)
        table.add_column("key", no_wrap=True)
        table.add_column("action")
        table.add_column("binding id", style="dim")
        keymap = self.app._keymap  # remapped keys, to show what the user really presses
        seen = set()
        for source in (self.under, self.app):
            for binding in source.BINDINGS:
                if not isinstance(binding, Binding) or binding.id in seen:
                    continue
                seen.add(binding.id)
                keys = keymap.get(binding.id, binding.key) if binding.id else binding.key
                table.add_row(self.app.get_key_display(Binding(keys.split(",")[0], "")) if keys else "",
                              binding.description or binding.action, binding.id or "")
        with VerticalScroll(id="help-box") as box:
            # on the box's border, always in view: a box cut at the bottom of a small terminal says it scrolls
            box.border_subtitle = "↑↓ pgup pgdn scroll · esc close"
            yield Static(table)
            yield Static(GENERAL + keys_file_words())
