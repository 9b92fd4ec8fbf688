"""Challenge definitions: one folder per challenge under ``challenges/``.

A challenge folder holds ``challenge.toml`` (metadata, limits, thresholds),
``PROMPT.md``, ``reference.py``, ``conformance.py``, optional ``data/`` files
handed to answers, and optional ``adapters/<model>.py|.cu``.
"""
from __future__ import annotations

import pickle
import re
import tomllib
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


# challenge.toml's parsed content by (path, size, mtime, inode): a rescan (the
# dashboard's, every start and ctrl+r) reads a few hundred of them and tomllib,
# pure Python, was a third of a rescan with nothing changed. A file whose stat
# differs is parsed again.
_PARSED: dict[str, tuple[tuple[int, int, int], bytes]] = {}


def _read_toml(toml_path: Path) -> dict[str, Any]:
    st = toml_path.stat()
    stamp = (st.st_size, st.st_mtime_ns, st.st_ino)
    key = str(toml_path)
    hit = _PARSED.get(key)
    if hit is not None and hit[0] == stamp:
        copied: dict[str, Any] = pickle.loads(hit[1])  # the caller's own copy (Challenge.raw is a dict); deepcopy took as long as parsing
        return copied
    data = tomllib.loads(toml_path.read_text(encoding="utf-8"))
    _PARSED[key] = (stamp, pickle.dumps(data))
    return data


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
