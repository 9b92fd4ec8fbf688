"""Challenge definitions: one folder per challenge under ``challenges/``.

A challenge folder holds ``challenge.toml`` (metadata, limits, thresholds),
``PROMPT.md``, ``reference.py``, ``conformance.py``, optional ``data/`` files
handed to answers, and optional ``adapters/<model>.py|.cu``.
"""
from __future__ import annotations

import json
import os
import pickle
import re
import tomllib
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchtui.host.resources import bundled_challenges

BUNDLED_CHALLENGES = bundled_challenges()  # in a clone challenges/, installed benchtui_data/challenges

# The ids every workbench knows, in the order published READMEs list them.
CHALLENGE_IDS = (
    "backwards", "fuse", "kv", "beam_search", "flash_attention",
    "flash_attention_bwd", "dflash_verify", "ternary_training",
)


class ChallengeError(Exception):
    """A challenge folder whose definition cannot be read."""


@dataclass(frozen=True)
class RunLimits:
    """A run's limits, challenge.toml's [limits] table field for field: the one type from the
    file to the sandbox. The orchestrator may shorten ``timeout_s`` (``--timeout``, an audit's
    mutant); engine/runner/bundle.py's ``process_limits`` turns it into each sandboxed
    process's own limits, the one conversion."""
    timeout_s: float = 300.0  # the checker's wall-clock limit: the run's time limit
    memory_mb: int = 4096
    cpu_s: int = 600
    self_check_timeout_s: float = 60.0
    # the largest file a run may write: the wire's shared-memory payloads count too,
    # so a challenge moving tensors of several GB (an imported kernel deck) raises it
    file_size_mb: int = 256


@dataclass(frozen=True)
class Challenge:
    id: str
    title: str
    difficulty: str
    language: str
    position: int
    path: Path
    backends: tuple[str, ...] = ("cpu",)
    display_names: tuple[str, ...] = ()
    forbidden_imports: tuple[str, ...] = ()
    data_files: tuple[str, ...] = ()
    limits: RunLimits = field(default_factory=RunLimits)
    thresholds: dict[str, Any] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False, hash=False)

    @property
    def prompt_path(self) -> Path:
        return self.path / "PROMPT.md"

    @property
    def reference_path(self) -> Path:
        return self.path / "reference.py"

    def adapter_path(self, model: str) -> Path | None:
        for suffix in (".py", ".cu"):
            candidate = self.path / "adapters" / f"{model}{suffix}"
            if candidate.is_file():
                return candidate
        return None

    @property
    def display_name(self) -> str:
        return self.display_names[0] if self.display_names else self.title


# challenge.toml's parsed content by (path, size, mtime, inode, ctime): a rescan
# (the dashboard's, every start and ctrl+r) reads a few hundred of them and
# tomllib, pure Python, was a third of a rescan with nothing changed. A file
# whose stat differs is parsed again. Content JSON can hold exactly is kept as
# JSON text, which keep_parsed writes beside the store for the next process
# (0.16 s of CPU for bench/scale.py's 209 challenges in each fresh process);
# the rest (TOML dates) as a pickle, in this process only.
_PARSED: dict[str, tuple[tuple[int, ...], bytes | str]] = {}
_used: set[str] = set()  # the keys read in this process: what keep_parsed writes
_fresh = False  # something was parsed since the last keep_parsed


def _read_toml(toml_path: Path) -> dict[str, Any]:
    global _fresh
    st = toml_path.stat()
    stamp = (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)
    key = str(toml_path)
    _used.add(key)
    hit = _PARSED.get(key)
    if hit is not None and hit[0] == stamp:
        # the caller's own copy (Challenge.raw is a dict); deepcopy took as long as parsing
        copied: dict[str, Any] = json.loads(hit[1]) if isinstance(hit[1], str) else pickle.loads(hit[1])
        return copied
    data = tomllib.loads(toml_path.read_text(encoding="utf-8"))
    try:
        text = json.dumps(data)
        blob: bytes | str = text if json.loads(text) == data else pickle.dumps(data)
    except (TypeError, ValueError):
        blob = pickle.dumps(data)  # a TOML date: JSON cannot hold it
    _PARSED[key] = (stamp, blob)
    _fresh = True
    return data


def remember_parsed(kept: Path) -> None:
    """Take in what keep_parsed wrote to ``kept`` (an entry counts only while
    its file's stat is the one kept with it)."""
    try:
        entries = json.loads(kept.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if not isinstance(entries, dict):
        return
    for key, entry in entries.items():
        if (key not in _PARSED and isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], list)
                and isinstance(entry[1], str)):
            _PARSED[key] = (tuple(entry[0]), entry[1])


def keep_parsed(kept: Path) -> None:
    """Write the challenge.toml files read in this process, as parsed, to
    ``kept`` when any was parsed here (whole: a temporary file renamed into place)."""
    global _fresh
    if not _fresh:
        return
    entries = {key: [list(stamp), blob] for key, (stamp, blob) in _PARSED.items()
               if key in _used and isinstance(blob, str)}
    tmp = kept.with_name(f"{kept.name}.{os.getpid()}")
    try:
        tmp.write_text(json.dumps(entries), encoding="utf-8")
        os.replace(tmp, kept)
        _fresh = False
    except OSError:
        with suppress(OSError):
            tmp.unlink()


def load_challenge(folder: Path) -> Challenge:
    toml_path = folder / "challenge.toml"
    try:
        data = _read_toml(toml_path)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ChallengeError(f"{toml_path}: {exc}") from exc
    try:
        limits = RunLimits(**data.get("limits", {}))
        return Challenge(
            id=data.get("id", folder.name),
            title=data["title"],
            difficulty=data.get("difficulty", ""),
            language=data.get("language", "python"),
            position=int(data.get("order", 99)),
            path=folder,
            backends=tuple(data.get("backends", ["cpu"])),
            display_names=tuple(data.get("display_names", [])),
            forbidden_imports=tuple(data.get("forbidden_imports", [])),
            data_files=tuple(data.get("data_files", [])),
            limits=limits,
            thresholds=dict(data.get("thresholds", {})),
            raw=data,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ChallengeError(f"{toml_path}: bad or missing field: {exc}") from exc


def load_challenges(root: Path) -> dict[str, Challenge]:
    """Every ``root/<id>/challenge.toml``, ordered by ``order`` then id."""
    found = [load_challenge(d) for d in sorted(root.iterdir()) if (d / "challenge.toml").is_file()] if root.is_dir() else []
    return {c.id: c for c in sorted(found, key=lambda c: (c.position, c.id))}


def normalise_name(name: str) -> str:
    """'Fused Softmax+TopK' -> 'fusedsoftmaxtopk'; for matching display names."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def challenge_for_name(name: str, challenges: dict[str, Challenge]) -> Challenge | None:
    """Find a challenge by id, title or any of its published display names."""
    key = normalise_name(name)
    for challenge in challenges.values():
        names = (challenge.id, challenge.title, *challenge.display_names)
        if key in {normalise_name(n) for n in names}:
            return challenge
    return None
