"""Where a workbench's models, challenges and store live.

Two layouts:
- ``models``: ``ROOT/models/<model>/<challenge>/`` (this project's own);
- ``published``: ``ROOT/<model>/<challenge>/`` as benchmark repositories are
  published, with analysis folders and files beside the models. A top-level
  folder is a model when it holds at least one challenge folder. The layout
  needs evidence beyond folder names: a challenge's PROMPT.md in an answer
  folder, an existing store, or challenges of the workbench's own.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from benchtui.host.resources import bundled_challenges, default_store_path, user_data_dir

if TYPE_CHECKING:
    from benchtui.challenges.catalog import ChallengeSet
    from benchtui.challenges.definition import Challenge

# engine.challenges.definition (and tomllib) load on first use: the dashboard's first
# frame reads the store and needs neither. The same path as
# engine.challenges.definition.BUNDLED_CHALLENGES: both come from engine.host.resources.
BUNDLED_CHALLENGES = bundled_challenges()

SKIP_DIRS = {".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv", "venv",
             "challenges", "tests", "bench", "tui", "engine", ".ci"}


class WorkbenchError(Exception):
    """A path that is not a usable workbench; the message is for the user."""


@dataclass
class Workbench:
    root: Path
    layout: str  # "models" or "published"
    store_path: Path
    challenges_dir: Path  # the workbench's own challenges/, else the bundled folder
    _challenges: dict[str, Challenge] | None = field(default=None, repr=False)
    _challenge_set: ChallengeSet | None = field(default=None, repr=False)

    @property
    def models_dir(self) -> Path:
        return self.root / "models" if self.layout == "models" else self.root

    @property
    def own_challenges_dir(self) -> Path:
        """Where this workbench's own challenges live (engine/challenges/catalog.py)."""
        return self.root / "challenges"

    @property
    def challenge_set(self) -> ChallengeSet:
        """The bundled challenges with the workbench's own over them, and what
        replaced what (the scan reports it)."""
        if self._challenge_set is None:
            from benchtui.challenges.catalog import load_challenge_set
            from benchtui.challenges.definition import keep_parsed, remember_parsed

            kept = self.parsed_challenges_path
            remember_parsed(kept)
            self._challenge_set = load_challenge_set(self.own_challenges_dir, BUNDLED_CHALLENGES)
            if kept.parent.is_dir():  # beside a store, never a folder made for it
                keep_parsed(kept)
        return self._challenge_set

    @property
    def parsed_challenges_path(self) -> Path:
        """Where the challenges' parsed challenge.toml files are kept between processes
        (engine/challenges/definition.py: parsing them was 0.16 s of every fresh process's rescan)."""
        return self.store_path.with_name(self.store_path.name + "-challenges.json")

    @property
    def challenges(self) -> dict[str, Challenge]:
        if self._challenges is None:
            self._challenges = self.challenge_set.challenges
        return self._challenges

    def model_dirs(self) -> dict[str, Path]:
        """Model name -> folder. Symlinks leaving the workbench are ignored."""
        base = self.models_dir
        if not base.is_dir():
            return {}
        ids = set(self.challenges)
        models = {}
        for entry in sorted(base.iterdir(), key=lambda p: p.name):
            if not entry.is_dir() or entry.name.startswith(".") or not self.contains(entry):
                continue
            if self.layout == "published":  # noqa: SIM102 - two conditions, each with its own comment
                if entry.name in SKIP_DIRS or not any((entry / cid).is_dir() for cid in ids):
                    continue  # an analysis folder, not a model
            models[entry.name] = entry
        return models

    def answer_dirs(self, model_dir: Path) -> dict[str, Path]:
        """Challenge id -> answer folder, for the known challenges present."""
        return {cid: model_dir / cid for cid in self.answer_paths(model_dir)}

    def answer_paths(self, model_dir: Path) -> dict[str, str]:
        """answer_dirs as strings (a rescan walks 10,000 folders: a Path each
        was a tenth of its time)."""
        # One listing per model, not a stat and a resolve() per challenge: a
        # plain sub-folder of a model folder is inside the workbench; only a
        # link needs the symlink guard.
        try:
            with os.scandir(model_dir) as it:
                entries = {e.name: e for e in it}
        except OSError:
            return {}
        out = {}
        for cid in self.challenges:
            entry = entries.get(cid)
            if entry is None:
                continue
            try:
                linked = entry.is_symlink()
                if ((os.path.isdir(entry.path) and self.contains(Path(entry.path))) if linked
                        else entry.is_dir(follow_symlinks=False)):
                    out[cid] = entry.path
            except OSError:
                continue
        return out

    def contains(self, path: Path) -> bool:
        """True when ``path`` resolves inside the workbench (symlink guard)."""
        try:
            path.resolve().relative_to(self.root.resolve())
            return True
        except (ValueError, OSError):
            return False


def challenge_folder_names(challenges_dir: Path) -> set[str]:
    try:
        return {d.name for d in challenges_dir.iterdir() if (d / "challenge.toml").is_file()}
    except OSError:
        return set()


def detect_layout(root: Path, challenge_ids: set[str], *, known: bool = False) -> str | None:
    """``models`` for a ``models/`` folder; ``published`` for top-level folders holding
    challenge folders, but only on evidence that this is a benchmark and not any folder
    whose sub-folders happen to be named ``kv`` or ``fuse``: an answer folder holding the
    challenge's PROMPT.md, or ``known`` (a store exists for it, or it has its own
    challenges). ``None`` otherwise."""
    if (root / "models").is_dir():
        return "models"
    return "published" if published_candidates(root, challenge_ids, known=known)[0] else None


def published_candidates(root: Path, challenge_ids: set[str], *, known: bool = False) -> tuple[bool, list[str]]:
    """(whether the published layout stands, the ``model/challenge`` folders that look like
    answers). It stands when ``known`` or when one such folder holds a PROMPT.md."""
    seen: list[str] = []
    try:
        entries = sorted(root.iterdir(), key=lambda p: p.name)
    except OSError:
        return False, seen
    for entry in entries:
        if not entry.is_dir() or entry.name in SKIP_DIRS or entry.name.startswith("."):
            continue
        for cid in sorted(challenge_ids):
            folder = entry / cid
            if folder.is_dir():
                if known or (folder / "PROMPT.md").is_file():
                    return True, seen
                seen.append(f"{entry.name}/{cid}")
    return False, seen


def demo_hint(root: Path) -> str:
    """Where the demo workbench is (`benchtui demo` puts it in the user data folder, not here),
    or how to get one."""
    demo = user_data_dir() / "demo"
    try:
        if (demo / "models").is_dir() and demo.resolve() != root:
            return f", or use the demo workbench at {demo}: `cd {demo}` or `benchtui --workbench {demo} ...`"
    except OSError:
        pass
    return ", or `benchtui demo` for a worked example"


def find_workbench(arg: str | None, env: str | None, cwd: Path, *, store: str | None = None) -> Workbench:
    """Resolve the workbench: ``--workbench``, then ``$BENCHTUI_WORKBENCH``, then cwd."""
    source, raw = ("--workbench", arg) if arg else ("BENCHTUI_WORKBENCH", env) if env else ("current directory", str(cwd))
    root = Path(os.path.expanduser(raw)).resolve()
    if not root.is_dir():
        said = "is not a folder" if root.exists() else "does not exist"
        raise WorkbenchError(f"workbench from {source} {said}: {raw}")
    if source == "current directory" and root.name == "models" and _is_workbench(root.parent):
        root = root.parent  # a workbench's models/ reads like a published layout of its own: the one above is meant
    challenges_dir = root / "challenges" if (root / "challenges").is_dir() else BUNDLED_CHALLENGES
    # Challenge folders are named by their ids, so the names find the layout
    # without reading any challenge.toml (start-up); only when they do not is
    # each challenge's own id read.
    # The workbench's own challenges come on top of the bundled ones
    # (engine/challenges/catalog.py): either's folder names may name a model's folders.
    store_path = Path(os.path.expanduser(store)).resolve() if store else default_store_path(root)
    # A store already made for it, or challenges of its own, say it is a workbench; a folder
    # whose sub-folders are merely named like challenges does not (no store is made there).
    known = store_path.is_file() or bool(challenge_folder_names(root / "challenges"))
    ids = challenge_folder_names(root / "challenges") | challenge_folder_names(BUNDLED_CHALLENGES)
    layout = detect_layout(root, ids, known=known)
    if layout is None and (root / "challenges").is_dir():
        from benchtui.challenges.catalog import load_challenge_set

        ids = set(load_challenge_set(root / "challenges", BUNDLED_CHALLENGES).challenges)
        layout = detect_layout(root, ids, known=known)
    if layout is None:
        # as git finds its repository: from inside a workbench's sub-folder (a model's folder,
        # an answer), the workbench above; from the folder above one, the one below is named
        above = next((p for p in root.parents if _is_workbench(p)), None)
        if above is not None and above.name == "models" and _is_workbench(above.parent):
            above = above.parent  # models/ of a workbench reads like a published layout of its own
        if above is not None and source == "current directory":
            return find_workbench(str(above), None, above, store=store)
        if above is not None:
            raise WorkbenchError(f"{root} (from {source}) is inside the workbench {above}, not one itself: "
                                 f"--workbench {above}")
        below = _workbenches_below(root)
        if below:
            names = ", ".join(str(p.relative_to(root)) for p in below[:3]) + (" ..." if len(below) > 3 else "")
            raise WorkbenchError(f"{root} (from {source}) is not a workbench, but {names} below it "
                                 f"{'is one' if len(below) == 1 else 'are'}: `cd {below[0].relative_to(root)}` "
                                 f"or --workbench {below[0]}")
        seen = published_candidates(root, ids)[1]
        looked = (f"{', '.join(seen[:3])}{' ...' if len(seen) > 3 else ''} "
                  + ("is named like an answer folder but holds" if len(seen) == 1 else
                     "are named like answer folders but hold") + " no PROMPT.md, and there is no store for it") if seen else \
            "no models/ folder and no model folders holding challenge folders"
        raise WorkbenchError(
            f"{root} (from {source}) is not a workbench: {looked}; nothing was written there. "
            f"Run `benchtui model new NAME` there to start one{demo_hint(root)}"
        )
    return Workbench(root=root, layout=layout, store_path=store_path, challenges_dir=challenges_dir)


def _is_workbench(folder: Path) -> bool:
    """Whether ``folder`` is a workbench, found as find_workbench finds one (nothing is written)."""
    try:
        return _detect_only(folder)
    except OSError:
        return False


def _detect_only(folder: Path) -> bool:
    if not folder.is_dir() or folder == Path(folder.anchor):
        return False
    known = default_store_path(folder).is_file() or bool(challenge_folder_names(folder / "challenges"))
    if not known and not (folder / "models").is_dir():
        return False  # the cheap test first: most folders above hold neither
    ids = challenge_folder_names(folder / "challenges") | challenge_folder_names(BUNDLED_CHALLENGES)
    return detect_layout(folder, ids, known=known) is not None


def _workbenches_below(root: Path, most: int = 200) -> list[Path]:
    """The workbenches among ``root``'s sub-folders (at most ``most`` looked at)."""
    try:
        subs = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))[:most]
    except OSError:
        return []
    return [p for p in subs if _is_workbench(p)]
