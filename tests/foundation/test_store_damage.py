"""A damaged store.db gets one clear message with the backup hint,
never a traceback, and nothing is written into it."""
from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest
from benchtui.cli import main

REPO = Path(__file__).resolve().parents[2]
COMMANDS = (["list"], ["results"], ["grades", "list"], ["transcript", "search", "cache"], ["show", "demo-careful", "kv"],
            ["scan"], ["grade", "set", "demo-careful", "kv", "B"])


@pytest.fixture(scope="module")
def sound(tmp_path_factory) -> Path:
    """A scanned copy of the demo workbench (transcripts indexed, so the store has many pages)."""
    root = tmp_path_factory.mktemp("sound") / "wb"
    shutil.copytree(REPO / "models", root / "models")
    shutil.copytree(REPO / "challenges", root / "challenges")
    assert main(["--workbench", str(root), "scan"]) == 0
    assert main(["--workbench", str(root), "grade", "set", "demo-careful", "kv", "A"]) == 0
    return root


def damaged_copy(sound: Path, tmp_path: Path, how: str) -> Path:
    root = tmp_path / how
    shutil.copytree(sound, root)
    store = root / "store.db"
    size = store.stat().st_size
    assert size > 64 * 1024
    if how == "garbage":  # 16 KiB of noise in the middle, on page boundaries
        with open(store, "r+b") as fh:
            fh.seek((size // 2) // 4096 * 4096)
            fh.write(os.urandom(16 * 1024))
    else:  # a copy cut short while another process had it open
        with open(store, "r+b") as fh:
            fh.truncate(size // 2)
    return root


@pytest.mark.parametrize("how", ["garbage", "truncated"])
def test_every_command_refuses_a_damaged_store(sound, tmp_path, capsys, how):
    root = damaged_copy(sound, tmp_path, how)
    store = root / "store.db"
    before = hashlib.sha256(store.read_bytes()).hexdigest()
    for argv in (*COMMANDS, []):  # [] : the dashboard, refused before it opens
        code = main(["--workbench", str(root), *argv])
        captured = capsys.readouterr()
        assert code == 1, (argv, captured)
        lines = captured.err.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in captured.err, (argv, captured.err)
        assert f"the store {store} is damaged" in lines[0] and "benchtui backup" in lines[0], (argv, lines)
    assert hashlib.sha256(store.read_bytes()).hexdigest() == before  # nothing written into it
    assert not Path(f"{store}-wal").exists() or Path(f"{store}-wal").stat().st_size == 0


def test_a_sound_store_still_opens(sound, capsys):
    assert main(["--workbench", str(sound), "list"]) == 0


def test_a_store_found_sound_is_not_read_again(sound, tmp_path, monkeypatch, capsys):
    """quick_check reads every page (1.8 s of CPU at 1.5 GB): a store left as a
    process that found it sound left it is not checked again by the next command."""
    from benchtui.store.database import Store

    root = tmp_path / "wb"
    shutil.copytree(sound, root)  # a copy: new inode and ctime, so checked once
    checks = []
    real = Store.damage
    monkeypatch.setattr(Store, "damage", lambda self: checks.append(1) or real(self))
    assert main(["--workbench", str(root), "list"]) == 0
    assert main(["--workbench", str(root), "results"]) == 0
    capsys.readouterr()
    assert len(checks) == 1


def test_a_store_changed_behind_its_mark_is_checked_again(sound, tmp_path, capsys):
    """Noise written over a store found sound, its mtime set back: the ctime moved, so the full check runs."""
    root = tmp_path / "wb"
    shutil.copytree(sound, root)
    assert main(["--workbench", str(root), "list"]) == 0
    store = root / "store.db"
    assert Path(f"{store}-sound").is_file()
    st = store.stat()
    with open(store, "r+b") as fh:
        fh.seek((st.st_size // 2) // 4096 * 4096)
        fh.write(os.urandom(16 * 1024))
    os.utime(store, ns=(st.st_atime_ns, st.st_mtime_ns))
    capsys.readouterr()
    assert main(["--workbench", str(root), "list"]) == 1
    assert f"the store {store} is damaged" in capsys.readouterr().err
