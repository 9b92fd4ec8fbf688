"""The store follows the folders: the runs, grades and judge grades of a model
folder that is gone are kept and marked everywhere they are shown (results,
show, the exports, the leaderboard and its screen), the scan names them,
`model move` moves them to the new name; and a read-only command never makes
a store at a path that is not there."""
from __future__ import annotations

import json

from benchtui.cli import main
from benchtui.grading.aggregates import leaderboard
from benchtui.grading.exports import json_data, markdown
from benchtui.grading.grades import set_grade
from benchtui.store.database import Store


def test_a_renamed_model_folder_is_marked_everywhere_and_moved_by_one_command(demo_workbench, capsys):
    wb = ["--workbench", str(demo_workbench)]
    assert main([*wb, "scan"]) == 0
    with Store(demo_workbench / "store.db") as store:
        store.execute("insert into runs (model, challenge, status, verdict, backend) "
                      "values ('demo-careful', 'kv', 'done', 'pass', 'cpu')")
        store.conn.commit()
        set_grade(store, "demo-careful", "kv", "A", grader="me")
        set_grade(store, "demo-careful", "kv", "B", grader="J", grader_kind="judge")
        set_grade(store, "demo-hasty", "kv", "C", grader="J", grader_kind="judge")
    (demo_workbench / "models/demo-careful").rename(demo_workbench / "models/demo-careful-v2")
    capsys.readouterr()

    # the scan names it, with what is kept and the command that moves it
    assert main([*wb, "scan"]) == 0
    said = ("folder gone: demo-careful: the store keeps its 1 run, 1 grade, 1 judge grade; if it was renamed, "
            "`benchtui model move demo-careful NEW` moves them")
    assert said in capsys.readouterr().out
    # results marks the verdict, and names the folder too
    assert main([*wb, "results"]) == 0
    out = capsys.readouterr().out
    assert "demo-careful/kv  run #1 on cpu  (no answer: its folder is gone)" in out and said in out
    assert main([*wb, "results", "--json"]) == 0
    row = next(r for r in json.loads(capsys.readouterr().out)["results"] if r["model"] == "demo-careful")
    assert row["no_answer"] is True
    # show says what is kept rather than "unknown model"
    assert main([*wb, "show", "demo-careful", "kv"]) == 2
    err = capsys.readouterr().err
    assert "models/demo-careful is gone from the workbench; the store keeps its 1 run" in err
    # the exports, the leaderboard and its screen
    with Store(demo_workbench / "store.db") as store:
        data = json_data(store)
        assert next(v for v in data["verdicts"] if v["model"] == "demo-careful")["no_answer"] is True
        assert all(g["no_answer"] for g in data["grades"] if g["model"] == "demo-careful")
        assert data["leaderboard"]["gone"] == ["demo-careful"]
        assert "(folder gone): no longer in the workbench" in markdown(store)
        lb = leaderboard(store)
        assert lb.gone == {"demo-careful"} and ("demo-careful", "kv") in lb.no_answer
        from benchtui.tui.screens.leaderboard import h2h_rows, rankings_table
        from rich.console import Console

        console = Console(width=120, record=True)
        console.print(rankings_table(lb, 120))
        assert "demo-careful (folder gone)" in console.export_text()
        assert any("(folder gone)" in str(r[0]) + str(r[1]) for r in h2h_rows(lb))

    # one command moves them to the new folder name; then nothing is gone
    assert main([*wb, "model", "move", "demo-careful", "demo-careful-v9"]) == 2
    assert "did you mean 'demo-careful-v2'?" in capsys.readouterr().err
    assert main([*wb, "model", "move", "demo-careful", "demo-careful-v2"]) == 0
    assert "moved 1 run, 1 grade, 1 judge grade of demo-careful to demo-careful-v2" in capsys.readouterr().out
    assert main([*wb, "scan"]) == 0
    assert "folder gone" not in capsys.readouterr().out
    assert main([*wb, "results"]) == 0
    out = capsys.readouterr().out
    assert "demo-careful-v2/kv  run #1 on cpu" in out and "no answer" not in out
    with Store(demo_workbench / "store.db") as store:
        assert leaderboard(store).gone == set()


def test_a_read_only_command_never_makes_a_store_where_there_is_none(demo_workbench, tmp_path, capsys):
    wb = ["--workbench", str(demo_workbench)]
    missing = tmp_path / "typo" / "deeper" / "store.db"
    assert main([*wb, "--store", str(missing), "results"]) == 2
    assert "its folder" in capsys.readouterr().err and not (tmp_path / "typo").exists()
    beside = tmp_path / "stor.db"
    assert main([*wb, "--store", str(beside), "results"]) == 2
    assert "`benchtui scan --store" in capsys.readouterr().err and not beside.exists()
    # a text file is no store: said so, never called damaged nor sent to salvage
    text = tmp_path / "notes.txt"
    text.write_text("my notes\n")
    assert main([*wb, "--store", str(text), "results"]) == 1
    err = capsys.readouterr().err
    assert "is not a benchtui store (a text file)" in err and "salvage" not in err and "damaged" not in err
    assert text.read_text() == "my notes\n"
