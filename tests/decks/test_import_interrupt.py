"""Ctrl-C during ``benchtui import``: whichever step it lands in (files being
moved into place, the store being made, its rows being written), the workbench's
files and its store are left exactly as they were, and the command says so."""
from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from benchtui.decks import importer, kernelbench_hard
from benchtui.decks.importer import import_deck
from benchtui.store.database import Store

REPO = Path(__file__).resolve().parents[2]


def snapshot(root: Path) -> tuple[dict, list[str] | None]:
    """Every file's bytes under ``root`` (the store aside), and the store's rows as SQL."""
    files = {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
             if p.is_file() and not p.name.startswith("store.db")} if root.exists() else {}
    dirs = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_dir()) if root.exists() else []
    store = root / "store.db"
    if not store.exists():
        return {"files": files, "dirs": dirs}, None
    with sqlite3.connect(store) as conn:
        dump = list(conn.iterdump())
    return {"files": files, "dirs": dirs}, dump


def own_workbench(root: Path) -> None:
    """A workbench with work of its own: an answer, and a store holding a note."""
    (root / "models" / "mine" / "kv").mkdir(parents=True)
    (root / "models" / "mine" / "kv" / "kv_cache.py").write_text("x = 1\n")
    with Store(root / "store.db") as store:
        store.conn.execute("insert into notes (model, challenge, relpath, line, author, text, created_at) "
                           "values ('mine', 'kv', 'kv_cache.py', 1, 'me', 'keep me', '2026-01-01T00:00:00Z')")
        store.conn.commit()


@pytest.mark.parametrize("existing", [False, True], ids=["new-workbench", "own-workbench"])
@pytest.mark.parametrize("step", ["moving-files", "making-store", "writing-rows"])
def test_keyboard_interrupt_mid_import_leaves_everything_as_it_was(any_kbh_deck, tmp_path, monkeypatch, step, existing):
    root = tmp_path / "wb"
    if existing:
        own_workbench(root)
    before = snapshot(root)
    deck = kernelbench_hard.read_deck(any_kbh_deck, "h100")
    if step == "moving-files":  # some files already moved into place when Ctrl-C lands
        moved = []
        real = os.replace

        def replace(src, dst):
            moved.append(dst)
            if len(moved) == 10:
                raise KeyboardInterrupt
            return real(src, dst)

        monkeypatch.setattr(importer.os, "replace", replace)
    elif step == "making-store":  # the store file exists, its tables do not yet
        def store(path, **kwargs):
            sqlite3.connect(path).close()
            raise KeyboardInterrupt

        monkeypatch.setattr(importer, "Store", store)
    else:
        def write_store(store, *args):
            store.conn.execute("BEGIN IMMEDIATE")
            store.conn.execute("insert into deck_imports (deck, title, path, deck_commit, gpu, imported_at, challenges, "
                               "answers, results, annotations, problems, notes) values "
                               "('d', 't', 'p', 'c', 'g', 'now', 0, 0, 0, 0, '[]', '[]')")
            raise KeyboardInterrupt

        monkeypatch.setattr(importer, "write_store", write_store)
    with pytest.raises(KeyboardInterrupt):
        import_deck(deck, root)
    monkeypatch.undo()
    after = snapshot(root)
    if existing:
        assert after == before
    else:  # nothing left but the empty folder import_deck was given
        assert after == ({"files": {}, "dirs": []}, None)
        assert list(root.iterdir()) == []


def _import_in_child(deck: Path, root: Path, slow: str) -> subprocess.Popen:
    """``benchtui import`` in a child process that says "ready" on stdout and waits at
    ``slow`` (the store's rows, or the store being made) long enough to be interrupted there."""
    # Python leaves SIGINT alone when it starts ignored (a suite run under nohup or as a
    # background job): the child takes Ctrl-C's default, as a terminal gives it
    code = f"""
import signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)
from benchtui.decks import importer
from benchtui.store import database

def wait(real):
    def slow(*args, **kwargs):
        print("ready", flush=True)
        time.sleep(60)
        return real(*args, **kwargs)
    return slow

if {slow!r} == "write_store":
    importer.write_store = wait(importer.write_store)
else:
    database.Store.migrate = wait(database.Store.migrate)
from benchtui.cli import main
raise SystemExit(main(["--workbench", {str(root)!r}, "import", {str(deck)!r}]))
"""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, cwd=REPO)


@pytest.mark.parametrize("slow", ["write_store", "migrate"])
def test_sigint_to_an_import_leaves_no_trace(kbh_deck, tmp_path, slow):
    root = tmp_path / "new" / "wb"
    child = _import_in_child(kbh_deck, root, slow)
    try:
        assert child.stdout.readline().strip() == "ready"
        if slow == "write_store":  # the files are in place by now: the interrupt must take them back
            assert len(list((root / "models").glob("*/*/solution.py"))) == 79
        else:  # the store exists, without its tables
            assert (root / "store.db").exists()
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=60)
    finally:
        child.kill()
    assert child.returncode == 130, err
    assert err.strip() == "benchtui: interrupted: nothing was imported; the workbench is as it was"
    assert not root.exists() and not root.parent.exists()  # the folders the import made went too


def test_sigint_to_an_import_into_a_workbench_keeps_its_store(kbh_deck, tmp_path):
    root = tmp_path / "wb"
    own_workbench(root)
    before = snapshot(root)
    child = _import_in_child(kbh_deck, root, "write_store")
    try:
        assert child.stdout.readline().strip() == "ready"
        time.sleep(0.1)
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=60)
    finally:
        child.kill()
    assert child.returncode == 130, err
    assert snapshot(root) == before


def test_import_shows_its_progress_on_a_terminal_and_nothing_under_json(kbh_deck, tmp_path):
    from terminal_run import on_a_terminal

    code, out, term = on_a_terminal(["--workbench", str(tmp_path / "wb"), "import", str(kbh_deck)])
    assert code == 0, term
    assert "importing: reading the deck kbh" in term and "importing: scanning" in term, term[-300:]
    assert out.startswith("imported KernelBench-Hard") and "importing" not in out
    code, out, term = on_a_terminal(["--workbench", str(tmp_path / "wb2"), "import", str(kbh_deck), "--json"])
    assert code == 0 and term == "", term
    assert json.loads(out)["answers"] == 79


def test_list_tells_the_deck_models_apart(kbh_imported, capsys):
    from benchtui.cli import main

    root, _, _ = kbh_imported
    assert main(["--workbench", str(root), "list"]) == 0
    header = capsys.readouterr().out.splitlines()[0].split()
    assert len(header) == len(set(header)) == 22  # a plain cut read "claude_claude-" for three models
    assert "claude…fable-5" in header
