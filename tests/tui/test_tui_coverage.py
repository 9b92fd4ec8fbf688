"""The answer screen's run summary shows what the verdict covers."""
from __future__ import annotations

import json

from benchtui.tui.glyphs import verdict_text
from benchtui.tui.screens.answer import coverage_note


def test_run_summary_lists_requirements_not_passed_with_their_reason():
    cov = [{"id": "a", "words": "does A", "status": "pass", "reason": "", "checkable": True},
           {"id": "b", "words": "batching with variable sequence lengths", "status": "not_exercised",
            "reason": "the adapter loops over the sequences", "checkable": True}]
    text = coverage_note({"coverage": json.dumps(cov)}).plain
    assert "covers 1 of 2 requirements met" in text
    assert "not exercised: batching with variable sequence lengths (the adapter loops over the sequences)" in text
    assert "does A" not in text
    assert coverage_note({"coverage": None}).plain == ""  # runs from before coverage


def test_partial_has_its_own_glyph():
    assert verdict_text("partial").plain == "◐ partial"
