"""benchtui's Textual dashboard (engine/ holds everything that is not the screen)."""
import os

# How long a lone ESC byte waits for the rest of an escape sequence before it
# counts as the escape key. Textual's default is 100 ms, which every `esc back`
# paid before anything moved (and its input thread's own wait added up to
# 100 ms more: tui/input_driver.py); a terminal writes a key's whole sequence
# at once, so 25 ms (what many terminal editors use) is plenty locally and
# over ssh. A user's own ESCDELAY (ncurses' name, which Textual reads) wins.
# Set here, before anything in this package imports Textual.
os.environ.setdefault("ESCDELAY", "25")
