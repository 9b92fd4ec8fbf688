"""What git knows about the workbench: the commit and each file's state.

One `ls-files` and one `status` call per scan (gitpython), not one per file.
"""
from __future__ import annotations

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


    def status_in(self, folder: Path):
        """``status`` for files named relative to ``folder``, resolving the
        folder once (a rescan asks for every file of every answer)."""
        if self.top is None:
            return lambda rel: None
        try:
            base = folder.resolve().relative_to(self.top).as_posix()
        except (ValueError, OSError):
            return lambda rel: self.status(folder / rel)
        prefix = "" if base == "." else base + "/"

        def status(rel: str) -> str | None:
            if (folder / rel).is_symlink():
                return self.status(folder / rel)  # resolves elsewhere
            key = prefix + rel
            if key in self.modified:
                return "modified"
            if key in self.untracked:
                return "untracked"
            return "committed" if key in self.tracked else "ignored"
        return status


def _split_z(text: str) -> list[str]:
    return [p for p in text.split("\0") if p]


def read_git(root: Path) -> GitInfo:
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
