"""The challenges a workbench knows: the bundled ones, and its own.

A workbench may bring challenges of its own in ``WORKBENCH/challenges/<id>/``
(the same plugin format as the bundled ones). They are added to the bundled
set; one whose id is a bundled id replaces that bundled challenge, and the
scan says so (``challenge_override``; a verbatim copy of the bundled folder
is not reported: it changes nothing). A folder whose ``challenge.toml``
cannot be read is left out and reported (``bad_challenge``), never fatal.

A bundled-folder challenge with ``bundled = false`` in its ``challenge.toml``
belongs to the workbench that holds that folder (the demo workbench's worked
example, ``top_p``): it is offered to that workbench only, not to every
workbench that falls back on the bundled set.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from benchtui.challenges.definition import Challenge, ChallengeError, load_challenge


@dataclass(frozen=True)
class Override:
    id: str
    own: Path
    bundled: Path

    def describe(self) -> str:
        return f"the workbench's own challenges/{self.own.name} replaces the bundled {self.id} ({self.bundled})"


@dataclass
class ChallengeSet:
    challenges: dict[str, Challenge] = field(default_factory=dict)
    overrides: list[Override] = field(default_factory=list)
    problems: list[tuple[Path, str]] = field(default_factory=list)  # (folder, one-line message)


def _folders(root: Path | None) -> list[Path]:
    if root is None or not root.is_dir():
        return []
    try:
        return [d for d in sorted(root.iterdir()) if (d / "challenge.toml").is_file()]
    except OSError:
        return []


def _load_all(root: Path | None, problems: list[tuple[Path, str]]) -> dict[str, Challenge]:
    out: dict[str, Challenge] = {}
    for folder in _folders(root):
        try:
            c = load_challenge(folder)
        except ChallengeError as exc:
            problems.append((folder, str(exc)))
            continue
        out[c.id] = c
    return out


def same_folder(a: Path | None, b: Path | None) -> bool:
    try:
        return a is not None and b is not None and a.resolve() == b.resolve()
    except OSError:
        return False


def _files(folder: Path) -> dict[str, Path]:
    return {f.relative_to(folder).as_posix(): f for f in folder.rglob("*")
            if f.is_file() and "__pycache__" not in f.parts}


def same_content(a: Path, b: Path) -> bool:
    """Two challenge folders with the same files, byte for byte (a workbench
    holding a verbatim copy of a bundled challenge overrides nothing)."""
    try:
        fa, fb = _files(a), _files(b)
        if fa.keys() != fb.keys() or any(fa[k].stat().st_size != fb[k].stat().st_size for k in fa):
            return False
        return all(fa[k].read_bytes() == fb[k].read_bytes() for k in fa)
    except OSError:
        return False


def load_challenge_set(own: Path | None, bundled: Path) -> ChallengeSet:
    """The bundled challenges, then the workbench's own over them (by id).

    ``own`` is ``WORKBENCH/challenges`` (None or absent: the bundled set).
    When it is the bundled folder itself (this repository is the demo
    workbench), every challenge there is the workbench's own."""
    result = ChallengeSet()
    if same_folder(own, bundled):
        merged = _load_all(own, result.problems)
    else:
        merged = {cid: c for cid, c in _load_all(bundled, result.problems).items()
                  if c.raw.get("bundled", True) is not False}
        for cid, c in _load_all(own, result.problems).items():
            if cid in merged:
                result.overrides.append(Override(cid, c.path, merged[cid].path))
            merged[cid] = c
    result.challenges = {c.id: c for c in sorted(merged.values(), key=lambda c: (c.position, c.id))}
    return result
