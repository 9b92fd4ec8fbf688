"""A rescan stats an answer's files by the folder listing it kept (answers.stat_walk)
and still sees every change a fresh listing would."""
from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from benchtui.store.database import Store
from benchtui.workbench import answer_stat
from benchtui.workbench import scan as scan_mod
from benchtui.workbench.layout import find_workbench
from benchtui.workbench.scan import scan_workbench

PROMPT = "# Task\nImplement it.\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def workbench(root: Path):
    for m in ("a", "b", "c"):
        write(root / "models" / m / "kv" / "PROMPT.md", PROMPT)
        write(root / "models" / m / "kv" / "kv.py", f"# {m}\n")
        write(root / "models" / m / "kv" / "sub" / "util.py", f"u = '{m}'\n")
    write(root / "models" / "c" / "kv" / "PROMPT.md", PROMPT + "Use PyTorch.\n")  # drifts
    wb = find_workbench(str(root), None, root)
    return wb, Store(wb.store_path)


def files_of(store: Store, model: str) -> list[str]:
    return sorted(r["relpath"] for r in store.query(
        "select f.relpath from files f join answers a on a.id = f.answer_id where a.model = ? and a.challenge = 'kv'",
        [model]))


def later() -> None:
    """Past the clock's grain (a few ms): a change now moves a folder's ctime."""
    time.sleep(0.03)


def test_a_kept_listing_is_used_and_every_change_is_still_seen(tmp_path, monkeypatch):
    monkeypatch.setattr(answer_stat, "RACY_NS", -10**18)  # keep every listing, however fresh
    wb, store = workbench(tmp_path)
    scan_workbench(wb, store)  # no stat digest stored yet: every answer examined
    scan_workbench(wb, store)  # each answer listed once more, its listing kept
    assert store.query("select count(*) as n from answers where stat_walk is null")[0]["n"] == 0
    listed: list[str] = []
    walk_parts = scan_mod.walk_parts

    def counted(directory, *rest):
        listed.append(directory)
        return walk_parts(directory, *rest)

    monkeypatch.setattr(scan_mod, "walk_parts", counted)
    assert scan_workbench(wb, store).unchanged == 3
    assert listed == []  # by the kept listings alone

    later()
    kv = tmp_path / "models" / "a" / "kv" / "kv.py"
    before = kv.stat()
    kv.write_text("# A\n", encoding="utf-8")  # the same size, in place: no folder moves
    os.utime(kv, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000))
    r = scan_workbench(wb, store)
    assert (r.unchanged, r.hashed, listed) == (2, 1, [])

    later()
    write(tmp_path / "models" / "b" / "kv" / "sub" / "more.py", "x = 1\n")  # only sub/ moves
    r = scan_workbench(wb, store)
    assert (r.unchanged, r.hashed) == (2, 1)
    assert files_of(store, "b") == ["PROMPT.md", "kv.py", "sub/more.py", "sub/util.py"]

    later()
    (tmp_path / "models" / "b" / "kv" / "kv.py").unlink()
    (tmp_path / "models" / "c" / "kv" / "sub" / "util.py").rename(tmp_path / "models" / "c" / "kv" / "sub" / "u2.py")
    r = scan_workbench(wb, store)
    assert r.unchanged == 1
    assert files_of(store, "b") == ["PROMPT.md", "sub/more.py", "sub/util.py"]
    assert files_of(store, "c") == ["PROMPT.md", "kv.py", "sub/u2.py"]

    later()
    # answer folders swapped by renames: each folder's inode is another's now
    models = tmp_path / "models"
    (models / "a" / "kv").rename(tmp_path / "swap")
    (models / "c" / "kv").rename(models / "a" / "kv")
    (tmp_path / "swap").rename(models / "c" / "kv")
    r = scan_workbench(wb, store)
    assert r.unchanged == 1
    assert {w.path for w in r.warnings if w.kind == "prompt_drift"} == {"a/kv/PROMPT.md"}
    assert files_of(store, "a") == ["PROMPT.md", "kv.py", "sub/u2.py"]

    # a commit changes each file's git state, by the kept listings too
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    scan_workbench(wb, store)  # the swapped folders' listings kept
    listed.clear()
    for argv in (["init", "-q"], ["add", "models"], ["commit", "-qm", "x"]):
        subprocess.run(["git", *argv], cwd=tmp_path, check=True, capture_output=True, env=env)
    assert scan_workbench(find_workbench(str(tmp_path), None, tmp_path), store).unchanged == 0
    assert listed == []
    assert {x["git_status"] for x in store.query("select git_status from files")} == {"committed"}


def test_a_listing_taken_within_the_clock_grain_of_a_change_is_not_kept(tmp_path):
    wb, store = workbench(tmp_path)
    scan_workbench(wb, store)
    scan_workbench(wb, store)  # the folders changed a moment ago: an entry added now could keep their ctime
    assert store.query("select count(*) as n from answers where stat_walk is not null")[0]["n"] == 0
    assert scan_workbench(wb, store).unchanged == 3


def test_without_stat_relative_to_a_folder_each_answer_is_listed(tmp_path, monkeypatch):
    monkeypatch.setattr(answer_stat, "RACY_NS", -10**18)
    monkeypatch.setattr(scan_mod, "DIR_FD", False)  # a system without fstatat
    wb, store = workbench(tmp_path)
    scan_workbench(wb, store)
    assert scan_workbench(wb, store).unchanged == 3
    later()
    write(tmp_path / "models" / "a" / "kv" / "sub" / "more.py", "x = 1\n")
    r = scan_workbench(wb, store)
    assert (r.unchanged, r.hashed) == (2, 1)
