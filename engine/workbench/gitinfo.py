"""What git knows about the workbench: the commit and each file's state.

One `ls-files` and one `status` call per scan (gitpython), not one per file.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class GitInfo:
    commit: str | None = None
    dirty: bool = False
    top: Path | None = None
    tracked: set[str] = field(default_factory=set)
    modified: set[str] = field(default_factory=set)
    untracked: set[str] = field(default_factory=set)
    problem: str | None = None
    _real_parents: dict[str, str] = field(default_factory=dict, repr=False)  # status_in's cache

    def status(self, path: Path) -> str | None:
        """'committed', 'modified', 'untracked', 'ignored', or None without git."""
        if self.top is None:
            return None
        try:
            rel = path.resolve().relative_to(self.top).as_posix()
        except ValueError:
            return None
        if rel in self.modified:
            return "modified"
        if rel in self.untracked:
            return "untracked"
        if rel in self.tracked:
            return "committed"
        return "ignored"


    def status_in(self, folder: Path, links: set[str] | frozenset[str] = frozenset()):
        """``status`` for files named relative to ``folder``; ``links``: the names that
        are symbolic links (the walk knows them), whose status is their target's.
        The folder is resolved through a cache of its parent's real path (a rescan
        asks for every file of 10,000 answers; a full resolve of each took ~0.4 s)."""
        if self.top is None:
            return lambda rel: None
        try:
            real = self._real_folder(folder)
        except OSError:
            return lambda rel: self.status(folder / rel)
        top = os.fspath(self.top)
        if real == top:
            prefix = ""
        elif real.startswith(top.rstrip("/") + "/"):  # strings, not Path.relative_to: 10,000 calls
            prefix = real[len(top.rstrip("/")) + 1:] + "/"
        else:
            return lambda rel: self.status(folder / rel)  # outside the repository

        def status(rel: str) -> str | None:
            if rel in links:
                return self.status(folder / rel)  # resolves elsewhere
            key = prefix + rel
            if key in self.modified:
                return "modified"
            if key in self.untracked:
                return "untracked"
            return "committed" if key in self.tracked else "ignored"
        return status

    def _real_folder(self, folder: Path) -> str:
        """os.path.realpath(folder), its parent's looked up once per scan."""
        if os.path.islink(folder):
            return os.path.realpath(folder)
        parent = os.fspath(folder.parent)
        real_parent = self._real_parents.get(parent)
        if real_parent is None:
            real_parent = self._real_parents[parent] = os.path.realpath(parent)
        return os.path.join(real_parent, folder.name)


def _split_z(text: str) -> list[str]:
    return [p for p in text.split("\0") if p]


def _no_repository_above(root: Path) -> bool:
    """True when no folder from ``root`` up holds a ``.git`` or is a bare
    repository, and git is not pointed elsewhere by its environment: what
    gitpython's search would find, told without importing it (~0.5 s of a
    fresh process's first rescan, for a workbench outside git)."""
    if any(k in os.environ for k in ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR")):
        return False
    try:
        here = root.resolve()
    except OSError:
        return False
    for folder in (here, *here.parents):
        if os.path.lexists(folder / ".git") or (
                os.path.isfile(folder / "HEAD") and os.path.isdir(folder / "objects")
                and os.path.isdir(folder / "refs")):
            return False
    return True


def read_git(root: Path) -> GitInfo:
    if _no_repository_above(root):
        return GitInfo(problem="not a git repository")
    try:
        import git  # gitpython; imported here so a missing git binary is one message
    except ImportError as exc:  # raised when the git executable is absent
        return GitInfo(problem=f"git unavailable: {exc}")
    try:
        repo = git.Repo(root, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return GitInfo(problem="not a git repository")
    except git.GitError as exc:
        return GitInfo(problem=f"git error: {exc}")
    top = Path(repo.working_tree_dir).resolve()
    info = GitInfo(top=top)
    try:
        info.commit = repo.head.commit.hexsha
    except ValueError:  # a repository with no commits yet
        info.commit = None
    try:
        scope = root.resolve().relative_to(top).as_posix() or "."
        info.tracked = set(_split_z(repo.git.ls_files("-z", "--", scope)))
        for item in _split_z(repo.git.status("--porcelain=v1", "-z", "--untracked-files=all", "--", scope)):
            code, path = item[:2], item[3:]
            if not path:
                continue  # the second half of a rename record
            (info.untracked if code == "??" else info.modified).add(path)
        info.dirty = bool(info.modified or info.untracked)
    except git.GitCommandError as exc:
        info.problem = f"git status failed: {exc.stderr.strip() if exc.stderr else exc}"
    return info
