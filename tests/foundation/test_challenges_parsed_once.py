"""A fresh process does not parse every challenge.toml again: what the last one
parsed is kept beside the store, and counts only while its file's stat is the same."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

from benchtui.challenges import definition
from benchtui.workbench.layout import find_workbench

REPO = Path(__file__).resolve().parents[2]


def parses(monkeypatch) -> list[str]:
    """The challenge.toml texts tomllib parses (a fresh process: nothing parsed in memory)."""
    monkeypatch.setattr(definition, "_PARSED", {})
    monkeypatch.setattr(definition, "_used", set())
    seen: list[str] = []
    real = definition.tomllib.loads
    monkeypatch.setattr(definition.tomllib, "loads", lambda text: seen.append(text) or real(text))
    return seen


def test_a_second_process_parses_only_the_changed_challenge(tmp_path, monkeypatch):
    root = tmp_path / "wb"
    shutil.copytree(REPO / "challenges", root / "challenges")
    (root / "models").mkdir()
    (root / "store.db").write_bytes(b"")  # a store's folder: the parsed files are kept beside it
    seen = parses(monkeypatch)
    first = find_workbench(str(root), None, root).challenges
    assert len(seen) >= len(first) > 3
    kept = find_workbench(str(root), None, root).parsed_challenges_path
    assert kept.is_file()

    seen = parses(monkeypatch)  # the next process
    again = find_workbench(str(root), None, root).challenges
    assert seen == [] and {c: again[c].raw for c in again} == {c: first[c].raw for c in first}

    # an edit of the same size with its mtime set back still moves the ctime: parsed again
    toml = root / "challenges" / "kv" / "challenge.toml"
    st = toml.stat()
    text = toml.read_text(encoding="utf-8")
    toml.write_text(text.replace("title = \"KV", "title = \"Kv", 1), encoding="utf-8")
    os.utime(toml, ns=(st.st_atime_ns, st.st_mtime_ns))
    seen = parses(monkeypatch)
    changed = find_workbench(str(root), None, root).challenges
    assert len(seen) == 1 and changed["kv"].title.startswith("Kv") and first["kv"].title.startswith("KV")
