"""Prompt versions: which prompt an answer was written to.

A challenge's ``challenge.toml`` declares the prompt versions it knows::

    [prompts.benchtui]                 # our own PROMPT.md
    sha256 = ["<hash of the whitespace-normalised text>"]
    checks = ["second_root_path"]      # checks only this version asks for

    [prompts.published]                # the published benchmark's prompt
    sha256 = ["..."]
    checks = []
    thresholds = {tol = 2e-3}          # optional: what this prompt allows

An answer's version is the one whose hashes hold the hash of its own
``PROMPT.md`` after whitespace normalisation (runs of whitespace become one
space, ends stripped), so a trailing newline or re-wrapped lines never make a
new version. A folder without a PROMPT.md gets the version of one of its
session transcript's first user messages, when that is a known version's
prompt. Checks not listed under any version are universal. A check listed
under other versions than the answer's (or any version, when the answer's
prompt is unknown or missing) is recorded as ``info`` with the verdict it
would have had: never a fail for doing what one's own prompt said.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from benchtui.challenges.definition import Challenge

PROMPT_FILE = "PROMPT.md"


def normalise_prompt(text: str) -> str:
    """Whitespace-normalised prompt text: what versions are recognised by."""
    return " ".join(text.split())


def prompt_sha256(text: str) -> str:
    return hashlib.sha256(normalise_prompt(text).encode("utf-8")).hexdigest()


def file_prompt_sha256(path: Path) -> str | None:
    try:
        return prompt_sha256(Path(path).read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return None


def prompt_versions(challenge: Challenge) -> dict[str, dict[str, list[str]]]:
    """``{version: {"sha256": [...], "checks": [...]}}`` from challenge.toml."""
    raw = getattr(challenge, "raw", None) or {}
    out = {}
    for name, spec in (raw.get("prompts") or {}).items():
        if isinstance(spec, dict):
            out[str(name)] = {"sha256": [str(h) for h in spec.get("sha256", [])],
                              "checks": [str(c) for c in spec.get("checks", [])]}
    return out


def version_thresholds(challenge: Challenge, version: str | None) -> dict[str, Any]:
    """Threshold overrides a prompt version declares (``thresholds = {tol = 2e-3}``
    under ``[prompts.<version>]``): a universal check judged at the precision that
    prompt allows. None (unknown or missing prompt): no overrides."""
    raw = getattr(challenge, "raw", None) or {}
    spec = (raw.get("prompts") or {}).get(version) if version else None
    return dict(spec.get("thresholds") or {}) if isinstance(spec, dict) else {}


def version_checks(challenge: Challenge) -> dict[str, list[str]]:
    """Check name -> the prompt versions that ask for it (universal checks absent)."""
    out: dict[str, list[str]] = {}
    for version, spec in prompt_versions(challenge).items():
        for check in spec["checks"]:
            out.setdefault(check, []).append(version)
    return out


def version_for_sha(challenge: Challenge, sha: str | None) -> str | None:
    if not sha:
        return None
    for version, spec in prompt_versions(challenge).items():
        if sha in spec["sha256"]:
            return version
    return None


def answer_prompt(challenge: Challenge, answer_dir: Path) -> tuple[str | None, str | None]:
    """(version, sha256 of the normalised PROMPT.md) for an answer folder;
    version None when the prompt is unknown or missing, sha None when missing."""
    path = Path(answer_dir) / PROMPT_FILE
    sha = file_prompt_sha256(path) if path.is_file() else None
    return version_for_sha(challenge, sha), sha


def version_of_texts(challenge: Challenge, texts: Iterable[tuple[str, str]]) -> tuple[str, str, str] | None:
    """The first ``(label, text)`` whose text is a known version's prompt, as
    (version, sha256, label); None when none is. An answer folder without a
    PROMPT.md often keeps its prompt as its session's first user message: only
    a known version is taken from there, never a guess."""
    for label, text in texts:
        sha = prompt_sha256(text)
        version = version_for_sha(challenge, sha)
        if version:
            return version, sha, label
    return None


def prompt_source(checks: Iterable[dict[str, Any]] | None) -> str | None:
    """Where a run's prompt version came from when not from PROMPT.md: the
    ``source`` of its ``prompt`` check (details as stored, JSON text or parsed)."""
    said = next((c for c in checks or () if c.get("name") == "prompt"), None)
    details = (said or {}).get("details")
    if isinstance(details, str):
        try:
            details = json.loads(details)
        except ValueError:
            return None
    return details.get("source") if isinstance(details, dict) else None


def run_prompt_line(version: str | None, source: str | None) -> str:
    """What a run was judged against, and where that came from when not from
    PROMPT.md, for ``show`` and the answer screen."""
    if not version:
        return "unknown or missing prompt (universal checks only)"
    return f"{version} (from {source}; no PROMPT.md)" if source else version


def describe(version: str | None, sha: str | None) -> str:
    """One line for screens and logs."""
    if version:
        return version
    if sha:
        return f"unknown prompt (sha256 {sha[:12]}): universal checks only"
    return "no PROMPT.md: universal checks only"
