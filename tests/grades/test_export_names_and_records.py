"""The Markdown export on a scanned workbench: the display names the grade
import read from the judge's models table, and a head-to-head with nothing
graded for both said in words, as the dashboard says it."""
from __future__ import annotations

from pathlib import Path

from benchtui.grading.aggregates import leaderboard
from benchtui.grading.exports import markdown
from benchtui.grading.grades import set_grade
from benchtui.grading.judge_import import import_markdown, import_text
from benchtui.store.database import Store
from benchtui.workbench.layout import find_workbench
from benchtui.workbench.scan import scan_workbench


def scanned(root: Path) -> Store:
    wb = find_workbench(str(root), None, root)
    store = Store(wb.store_path)
    scan_workbench(wb, store)
    return store


def test_models_tested_shows_the_names_the_import_read(demo_workbench):
    store = scanned(demo_workbench)
    try:
        import_markdown(store, demo_workbench / "models" / "JUDGES.md")
        text = markdown(store)
        assert "| `demo-careful/` | Careful-1 |" in text and "| `demo-quitter/` | Quitter-3 |" in text
        assert "| Careful-1 | Hasty-2 |" in text  # the head-to-head too
        # a rescan keeps them; a dry run and a file without a models table change nothing
        scan_workbench(find_workbench(str(demo_workbench), None, demo_workbench), store)
        import_text(store, "Judge: J\n\n## Models tested\n\n| Folder | Model |\n|---|---|\n| `demo-careful/` | X |\n",
                    dry_run=True)
        import_text(store, "Judge: J\n\n| Challenge | Careful-1 |\n|---|---|\n| KV-Cache | B |\n")
        assert "| `demo-careful/` | Careful-1 |" in markdown(store)
    finally:
        store.close()


def test_a_pair_with_nothing_graded_for_both_is_counted_not_listed(demo_workbench):
    """No empty head-to-head rows (a deck's export had 231 of 308): the pairs with no
    challenge graded for both are counted below the table."""
    store = scanned(demo_workbench)
    try:
        set_grade(store, "demo-careful", "kv", "A", grader="J", grader_kind="judge")
        set_grade(store, "demo-hasty", "fuse", "B", grader="J", grader_kind="judge")
        h = next(h for h in leaderboard(store).head_to_head if {h.model_a, h.model_b} == {"demo-careful", "demo-hasty"})
        assert h.challenges == [] and h.text == "no challenge graded for both"
        text = markdown(store)
        assert "0-0-0" not in text and "| no challenge graded for both | 0 |" not in text
        assert "of models with no challenge graded for both left out" in text
    finally:
        store.close()
