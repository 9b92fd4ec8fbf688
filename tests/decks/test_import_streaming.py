"""A KernelBench deck imported a run folder at a time, so its memory does not grow
with the deck: each folder's answers are written before the next folder is read;
the files and rows are the deck's read whole (row ids included) and what the
importer wrote when it held the whole deck (kit_import.json, taken from it); an
interrupt or a failed write mid-stream leaves the workbench as it was, its undo
log spilled to disk included; a re-import writes nothing."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import deck_kit as K
import pytest
from benchtui.decks import importer, kernelbench, kernelbench_hard
from benchtui.decks.importer import FileTransaction, import_deck
from benchtui.decks.model import DeckError
from import_dump import dump
from test_import_interrupt import own_workbench, snapshot

GOLDEN = Path(__file__).with_name("kit_import.json")


def three_folders(tmp_path: Path) -> Path:
    """The kit's KernelBench deck with its run folder ``demo`` twice more: three batches of three answers."""
    deck = K.kernelbench_deck(tmp_path / "deck")
    for name in ("demo2", "demo3"):
        shutil.copytree(deck / "runs" / "demo", deck / "runs" / name)
    return deck


def read(deck: Path, *, stream: bool = True):
    return kernelbench.read_deck(deck, commit=K.KB_COMMIT, stream=stream)


def answers_on_disk(root: Path) -> int:
    return len(list((root / "models").glob("*/*/solution.py")))


def test_each_run_folder_is_written_before_the_next_is_read(tmp_path, monkeypatch):
    deck, root = three_folders(tmp_path), tmp_path / "wb"
    seen, real = [], kernelbench.read_run

    def read_run(*args):
        seen.append(answers_on_disk(root) if root.exists() else 0)
        return real(*args)

    monkeypatch.setattr(kernelbench, "read_run", read_run)
    result = import_deck(read(deck), root)
    assert seen == [0, 3, 6] and result.answers == answers_on_disk(root) == 9


def test_streamed_files_and_rows_are_the_whole_decks_and_a_reimport_writes_nothing(tmp_path, monkeypatch):
    deck = three_folders(tmp_path)
    import_deck(read(deck, stream=False), tmp_path / "whole")
    monkeypatch.setattr(FileTransaction, "SPILL", 2)  # the undo log goes to disk batch by batch
    first = import_deck(read(deck), tmp_path / "wb")
    assert dump(tmp_path / "wb", deck) == dump(tmp_path / "whole", deck)
    written = dump(tmp_path / "wb", deck, times=True)
    again = import_deck(read(deck), tmp_path / "wb")
    assert (again.files_written, again.results_written, again.answers) == (0, 0, first.answers) == (0, 0, 9)
    after = dump(tmp_path / "wb", deck, times=True)
    assert len(after["tables"]["deck_imports"]) == 2  # the re-import's own record, nothing else
    after["tables"]["deck_imports"].pop()
    assert after == written


def test_rows_and_files_are_those_of_the_importer_that_held_the_whole_deck(tmp_path):
    """kit_import.json: what the importer that read every run before writing any wrote for
    the kit's two decks (tests/decks/import_dump.py's dump; regenerate it only for a change
    to what an import writes)."""
    kb, kbh = K.kernelbench_deck(tmp_path / "kb"), K.hard_deck(tmp_path / "kbh")
    import_deck(read(kb), tmp_path / "wb-kb")
    import_deck(kernelbench_hard.read_deck(kbh, "h100", commit=K.HARD_COMMIT), tmp_path / "wb-kbh")
    got = {"kernelbench": dump(tmp_path / "wb-kb", kb), "kernelbench-hard": dump(tmp_path / "wb-kbh", kbh)}
    assert got == json.loads(GOLDEN.read_text(encoding="utf-8"))


@pytest.mark.parametrize("existing", [False, True], ids=["new-workbench", "own-workbench"])
@pytest.mark.parametrize("how", ["ctrl-c-reading", "disk-full-writing"])
def test_a_failure_mid_stream_leaves_the_workbench_as_it_was(tmp_path, monkeypatch, how, existing):
    deck, root = three_folders(tmp_path), tmp_path / "wb"
    if existing:
        own_workbench(root)
    before = snapshot(root)
    monkeypatch.setattr(FileTransaction, "SPILL", 2)
    if how == "ctrl-c-reading":  # the third folder's read, after six answers were written
        calls, real = [], kernelbench.read_run

        def read_run(*args):
            calls.append(1)
            if len(calls) == 3:
                raise KeyboardInterrupt
            return real(*args)

        monkeypatch.setattr(kernelbench, "read_run", read_run)
        expected = KeyboardInterrupt
    else:  # the seventh answer's file cut short
        writes, real_write = [], os.write

        def write(fd, data):
            writes.append(1)
            if len(writes) == 7:
                real_write(fd, bytes(data[:10]))
                raise OSError(28, "No space left on device")
            return real_write(fd, data)

        monkeypatch.setattr(importer.os, "write", write)
        expected = OSError
    with pytest.raises(expected):
        import_deck(read(deck), root)
    monkeypatch.undo()
    if existing:
        assert snapshot(root) == before
    else:
        assert snapshot(root) == ({"files": {}, "dirs": []}, None) and list(root.iterdir()) == []


def test_a_streamed_deck_is_imported_once(tmp_path):
    deck = read(K.kernelbench_deck(tmp_path / "deck"))
    assert deck.runs == []  # nothing read before the import asks
    assert import_deck(deck, tmp_path / "wb").answers == 3
    with pytest.raises(DeckError, match="read the deck again"):
        import_deck(deck, tmp_path / "wb2")
