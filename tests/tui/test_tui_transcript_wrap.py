"""Transcript rows wrap at word boundaries: a word is never cut in two unless it
is longer than the line ("infere / nce" read as two words)."""
from __future__ import annotations

from benchtui.tui.transcript_rows import wrap
from hypothesis import given, settings
from hypothesis import strategies as st

words = st.text(alphabet="abcdefghijklmnopqrstuvwxyz.,()", min_size=1, max_size=15)


@settings(max_examples=200, deadline=None)
@given(st.lists(words, min_size=1, max_size=60), st.integers(min_value=20, max_value=120))
def test_prose_keeps_its_words_whole(ws, width):
    text = " ".join(ws)
    lines = wrap(text, width)
    assert all(len(line) <= width for line in lines)
    assert " ".join(" ".join(lines).split()) == text  # same words, none split


def test_wrap_breaks_between_words():
    text = "Run the inference on the fixed case so that the logits stay finite after the update."
    lines = wrap(text, 40)
    assert lines == ["Run the inference on the fixed case so", "  that the logits stay finite after the",
                     "  update."]


def test_a_word_longer_than_the_line_is_cut_at_the_width():
    lines = wrap("see " + "x" * 50 + " end", 20)
    assert all(len(line) <= 20 for line in lines)
    assert "".join(line.replace(" ", "") for line in lines) == "see" + "x" * 50 + "end"
    assert lines[0] == "see"  # the long word starts a line of its own


def test_leading_indent_is_kept_and_not_taken_for_a_break():
    lines = wrap("        " + "y" * 30, 20)
    assert lines[0] == "        " + "y" * 12 and all(len(line) <= 20 for line in lines)
