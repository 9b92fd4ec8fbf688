"""A run in flight is shown as in flight beside the last finished verdict, never
in its place: one sweep over every place a verdict is shown (the matrix and its
cell, `show`, `results`, `published` and its screen's text, the exports)."""
from __future__ import annotations

import json
import os

import deck_kit
from benchtui.cli import main
from benchtui.decks import kernelbench_hard
from benchtui.decks.compare import compare
from benchtui.decks.importer import import_deck
from benchtui.grading.exports import csv_text, json_data, markdown
from benchtui.store.database import Store
from benchtui.store.queries import load_matrix

MODEL, CHALLENGE = "claude_opus-9", "kbh_01_tiny_double"


def test_a_run_in_flight_stands_beside_the_finished_verdict(tmp_path, capsys):
    root = tmp_path / "wb"
    import_deck(kernelbench_hard.read_deck(deck_kit.hard_deck(tmp_path / "kbh"), "h100"), root)
    assert main(["--workbench", str(root), "scan"]) == 0
    with Store(root / "store.db") as store:
        store.execute("insert into runs (model, challenge, status, verdict, backend, started_at) "
                      "values (?, ?, 'done', 'pass', 'cpu', '2026-01-01T10:00:00')", (MODEL, CHALLENGE))
        # this process stands in for the runner: its pid is alive, so nothing calls the run interrupted
        flying = store.execute("insert into runs (model, challenge, status, backend, started_at, pid) "
                               "values (?, ?, 'running', 'cpu', '2026-01-01T10:05:00', ?)",
                               (MODEL, CHALLENGE, os.getpid())).lastrowid
        store.conn.commit()
        said = f"run #{flying} in flight since 10:05"

        cell = load_matrix(store).cell(MODEL, CHALLENGE)
        assert (cell.verdict, cell.in_flight) == ("pass", flying)
        from benchtui.tui.glyphs import verdict_glyph
        from benchtui.tui.screens.matrix import cell_text
        from benchtui.tui.screens.published import detail_text, summary_text

        assert cell_text(cell).plain.startswith(verdict_glyph("pass").plain + "◌")

        published = compare(store)
        row = next(a for a in published["answers"] if (a["model"], a["challenge"]) == (MODEL, CHALLENGE))
        assert (row["verdict"], row["in_flight"]) == ("pass", said)
        assert "1 in flight" in summary_text(published).plain
        assert said in detail_text(row, []).plain

        exported = json_data(store)["verdicts"]
        assert {"model": MODEL, "challenge": CHALLENGE, "verdict": "pass", "in_flight": said}.items() <= \
            next(v for v in exported if v["model"] == MODEL and v["challenge"] == CHALLENGE).items()
        assert said in csv_text(store) and "pass (run in flight)" in markdown(store)

    assert main(["--workbench", str(root), "show", MODEL, CHALLENGE]) == 0
    out = capsys.readouterr().out
    assert f"{said}; the last finished verdict is below" in out and "latest run #1: pass" in out
    assert main(["--workbench", str(root), "results"]) == 0
    assert f"pass           {MODEL}/{CHALLENGE}  run #1 on cpu  ({said})" in capsys.readouterr().out
    assert main(["--workbench", str(root), "results", "--json"]) == 0
    got = next(r for r in json.loads(capsys.readouterr().out)["results"] if r["model"] == MODEL and r["challenge"] == CHALLENGE)
    assert (got["verdict"], got["in_flight"]) == ("pass", said)
    assert main(["--workbench", str(root), "published"]) == 0
    assert "1 run here, 1 in flight;" in capsys.readouterr().out
    assert main(["--workbench", str(root), "published", "-m", MODEL]) == 0
    assert f"; {said}" in capsys.readouterr().out
