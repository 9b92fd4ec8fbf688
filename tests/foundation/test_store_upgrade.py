"""A store written by the previous release (0.1.0) opens and migrates.

data/store-0.1.0.db.gz was made by benchtui 0.1.0 from a copy of the demo
workbench: `scan`, a grade and a note on demo-careful/backwards, and a
sandboxed `run -m demo-careful -c backwards` (pass). That release recorded
its migrations under their old names (m004_grades ... m010_run_node)."""
from __future__ import annotations

import gzip
import shutil
from pathlib import Path

from benchtui.store.database import RENAMED_MIGRATIONS, Store, discover_migrations

FIXTURE = Path(__file__).parent / "data" / "store-0.1.0.db.gz"
OLD_NAMES = ["m001_foundation", "m002_transcripts", "m004_grades", "m005_run_prompt_version",
             "m006_issue19_scan", "m006_run_coverage", "m008_audit", "m009_scale_indexes", "m010_run_node"]


def old_store(tmp_path: Path) -> Path:
    path = tmp_path / "store.db"
    with gzip.open(FIXTURE) as src, path.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    return path


def test_the_fixture_is_a_store_of_the_previous_release(tmp_path):
    store = Store(old_store(tmp_path), migrate=False)
    assert store.applied_migrations() == OLD_NAMES
    store.close()


def test_a_store_of_the_previous_release_opens_migrates_and_keeps_its_rows(tmp_path):
    path = old_store(tmp_path)
    store = Store(path, check=True)
    current = [m.name for m in discover_migrations()]
    renamed = [RENAMED_MIGRATIONS.get(n, n) for n in OLD_NAMES]
    applied = store.applied_migrations()
    # the old ones under their new names, then those added since, each once
    assert applied[:len(renamed)] == renamed and sorted(applied) == current
    assert store.migrate() == []  # nothing ran twice, nothing is pending
    run = store.query("select model, challenge, verdict, coverage, node from runs")[0]
    assert (run["model"], run["challenge"], run["verdict"]) == ("demo-careful", "backwards", "pass")
    assert run["coverage"] and not run["node"]  # a run on this machine
    assert store.query("select count(*) as n from checks")[0]["n"] == 10
    assert store.query("select letter from grades where model = 'demo-careful'")[0]["letter"] == "B"
    assert store.query("select text from notes")[0]["text"] == "kept across the upgrade"
    assert store.query("select count(*) as n from answers")[0]["n"] == 23
    store.close()
    store = Store(path)
    assert store.migrate() == []
    store.close()


def test_the_dashboard_and_the_commands_read_an_upgraded_store(tmp_path, capsys):
    from benchtui.cli import main as cli

    workbench = tmp_path / "wb"
    (workbench / "models").mkdir(parents=True)
    shutil.move(old_store(tmp_path), workbench / "store.db")
    assert cli(["--workbench", str(workbench), "--store", str(workbench / "store.db"),
                "show", "demo-careful", "backwards", "--json"]) == 0
    out = capsys.readouterr().out
    assert '"verdict": "pass"' in out and "kept across the upgrade" in out
