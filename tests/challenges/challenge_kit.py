"""Helpers the challenge tests share: a copy of a challenge with lighter
sizes, answers written from source, and mutants of a reference."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

from benchtui.challenges.definition import BUNDLED_CHALLENGES


def fast_copy(cid: str, dest: Path, overrides: dict[str, str]) -> Path:
    """``dest/challenges/<cid>`` with some ``[thresholds]`` sizes replaced
    (tolerances stay as shipped); returns the challenges folder. Idempotent."""
    folder = dest / "challenges" / cid
    if not folder.exists():
        shutil.copytree(BUNDLED_CHALLENGES / cid, folder)
        toml = folder / "challenge.toml"
        text = toml.read_text()
        for key, value in overrides.items():
            text, n = re.subn(rf"(?m)^{key} = .*$", f"{key} = {value}", text)
            assert n == 1, f"{cid}/challenge.toml has no single `{key} = ...` line"
        toml.write_text(text)
    return dest / "challenges"


def write_answer(tmp_path: Path, filename: str, source: str) -> Path:
    """An answer folder holding one file."""
    folder = tmp_path / "answer"
    folder.mkdir()
    (folder / filename).write_text(source)
    return folder


def mutate_source(source: str, *edits: tuple[str, str], count: int = -1) -> str:
    """Apply text edits; an anchor that vanished fails loudly (a mutant that
    silently equals the reference would prove nothing)."""
    for old, new in edits:
        assert old in source, f"mutation anchor missing from the reference: {old!r}"
        source = source.replace(old, new, count)
    return source


def checks_by_name(result: dict) -> dict:
    return {c["name"]: c for c in result["checks"]}
