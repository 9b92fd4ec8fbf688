"""A rescan (the dashboard's, at every start and ctrl+r) loads every
challenge definition again: an unchanged challenge.toml is not parsed again,
a changed one is, and each load hands out its own copy."""
from __future__ import annotations

import os
import tomllib

from benchtui.challenges import definition


def _write(folder, title: str) -> None:
    folder.mkdir(exist_ok=True)
    (folder / "challenge.toml").write_text(f'id = "c"\ntitle = "{title}"\n[thresholds]\natol = 1e-3\n',
                                           encoding="utf-8")


def test_unchanged_toml_is_not_parsed_again_and_a_changed_one_is(tmp_path, monkeypatch):
    calls = []
    real = tomllib.loads
    monkeypatch.setattr(definition.tomllib, "loads", lambda text: calls.append(1) or real(text))
    folder = tmp_path / "c"
    _write(folder, "First")
    a = definition.load_challenge(folder)
    b = definition.load_challenge(folder)
    assert (a.title, b.title) == ("First", "First")
    assert len(calls) == 1, "an unchanged challenge.toml was parsed again"
    a.raw["thresholds"]["atol"] = 1.0  # one load's dict is its own
    assert definition.load_challenge(folder).raw["thresholds"]["atol"] == 1e-3

    _write(folder, "Second title")  # another size
    st = (folder / "challenge.toml").stat()
    os.utime(folder / "challenge.toml", ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert definition.load_challenge(folder).title == "Second title"
    assert len(calls) == 2
