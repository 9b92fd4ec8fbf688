"""The branch picker never prints Python's None for an id a format does not give."""
from __future__ import annotations

from benchtui.transcripts.model import Branch
from benchtui.tui.screens.transcript import branch_label


def test_a_branch_without_ids_reads_without_none():
    assert branch_label(0, Branch(leaf_id=None, active=True, fork_id=None, entries=[])) == "● active branch 1 (0 entries)"
    assert branch_label(1, Branch(leaf_id="u7", active=False, fork_id="u3", entries=[])) == \
        "○ branch 2: leaf u7 (0 entries, forks at u3)"
