"""The export of a deck workbench carries the deck's published results beside
benchtui's verdicts (JSON, Markdown and CSV); a workbench without a deck has none."""
from __future__ import annotations

import json

import deck_kit
from benchtui.cli import main
from benchtui.decks import kernelbench_hard
from benchtui.decks.importer import import_deck


def test_a_deck_workbench_exports_the_decks_published_results(tmp_path, capsys):
    root = tmp_path / "wb"
    import_deck(kernelbench_hard.read_deck(deck_kit.hard_deck(tmp_path / "kbh"), "h100"), root)
    assert main(["--workbench", str(root), "export", "json"]) == 0
    data = json.loads(capsys.readouterr().out)["published"]
    assert data["overall"]["published"] == 6 and len(data["answers"]) == 6
    row = next(a for a in data["answers"] if a["model"] == "codex_gpt-9" and a["challenge"] == "kbh_02_tiny_triple")
    assert (row["deck_verdict"], row["verdict"]) == ("FAIL", None)
    assert main(["--workbench", str(root), "export", "markdown"]) == 0
    md = capsys.readouterr().out
    assert "## The deck's published results beside benchtui's" in md and "| kbh_01_tiny_double |" in md


def test_a_workbench_without_a_deck_exports_no_published_section(demo_workbench, capsys):
    assert main(["--workbench", str(demo_workbench), "export", "json"]) == 0
    assert "published" not in json.loads(capsys.readouterr().out)


def test_the_csv_export_of_a_deck_workbench_carries_its_published_results(tmp_path, capsys):
    import csv
    import io

    root = tmp_path / "wb"
    import_deck(kernelbench_hard.read_deck(deck_kit.hard_deck(tmp_path / "kbh"), "h100"), root)
    assert main(["--workbench", str(root), "export", "csv"]) == 0
    rows = [r for r in csv.DictReader(io.StringIO(capsys.readouterr().out)) if r["kind"] == "published"]
    assert len(rows) == 6
    row = next(r for r in rows if r["model"] == "codex_gpt-9" and r["challenge"] == "kbh_02_tiny_triple")
    assert (row["deck_verdict"], row["verdict"], row["deck"], row["run_id"]) == ("FAIL", "", "kernelbench-hard", "20260101_000000_codex_gpt-9_02_tiny_triple")
