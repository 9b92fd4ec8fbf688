"""What a rescan sees of an answer folder without reading a file: each regular
file's name and stat, as the parts of its stat digest (scan.stat_signature).

Listing a folder costs more than stat-ing its files (at 10,000 answers the
10,000 listings were about half of the walk's CPU), so the listing is kept
with the answer (``answers.stat_walk``): each folder's inode and ctime as it
was listed, and the regular files it held. A folder whose inode and ctime are
unchanged holds the same names (adding, removing or renaming an entry moves
its ctime, which nothing can set back), so a rescan stats the stored names
relative to the model's folder and lists only the folders that moved.

A listing is kept only when every folder's ctime is older than RACY_NS at
the time it was taken: the clock's grain is coarse, and an entry added in the
same tick as the folder's last change would leave its ctime as it was (git's
"racily clean" index entries, the same care).
"""
from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable

RACY_NS = 2_000_000_000
# stat relative to an open folder (fstatat): POSIX systems; elsewhere each answer is listed
DIR_FD = os.stat in os.supports_dir_fd and hasattr(os, "O_DIRECTORY")
# A listing: one record a line; a folder's is "/inode:ctime_ns/" and its relative
# prefix ("" or "sub/"), the others are file relpaths (which never start with "/")
_FOLDER = "/"
_IFMT, _IFREG = 0o170000, stat.S_IFREG
_SKIPPED = frozenset({"__pycache__", ".git"})


def parts_from_listing(dir_fd: int, folder: str, listing: str, kinds: dict[str, str], kind_of: Callable[[str], str],
                       status_of: Callable[[str], str | None] | None) -> list[str] | None:
    """stat parts of the answer folder ``folder`` (a name under ``dir_fd``) by its
    stored ``listing``; None when a folder moved or a name is no longer a
    regular file (the caller lists it again). ``kinds``: each relpath's
    kind_of, as far as known (the loop runs 60,000 times at bench/scale.py's
    size: a dict lookup, not a call)."""
    parts: list[str] = []
    append = parts.append
    base = folder + "/"
    st_ = os.stat
    try:
        for item in listing.split("\n"):
            if item[0] == _FOLDER:
                key, _, prefix = item[1:].partition(_FOLDER)
                # the answer folder itself without a trailing slash, which would follow a link
                st = st_(base + prefix if prefix else folder, dir_fd=dir_fd, follow_symlinks=False)
                if f"{st.st_ino}:{st.st_ctime_ns}" != key or not stat.S_ISDIR(st.st_mode):
                    return None
                continue
            st = st_(base + item, dir_fd=dir_fd, follow_symlinks=False)
            if st.st_mode & _IFMT != _IFREG:
                return None
            # stat_part's text, inline
            append(f"{item}\0{st.st_size}\0{st.st_mtime_ns}\0{(status_of(item) or '') if status_of else ''}"
                   f"\0{kinds.get(item) or kind_of(item)}")
    except (OSError, ValueError, IndexError):
        return None
    return parts


def walk_parts(directory: str, kind_of: Callable[[str], str],
               status_of: Callable[[str], str | None] | None) -> tuple[list[str] | None, str | None]:
    """(stat parts, listing to keep) of the answer folder at ``directory``,
    listed: parts None when only the full walk can tell (a link, something
    that cannot be read); listing None when it cannot be kept (a folder
    changed within RACY_NS, a linked folder, a name the format cannot hold).
    Each folder is stat'ed before it is listed: a change after that moves
    its ctime past the one kept."""
    parts: list[str] = []
    append = parts.append
    records: list[str] = []
    keep = True
    newest = 0
    stack = [("", directory)]
    try:
        while stack:
            prefix, path = stack.pop()
            dst = os.stat(path, follow_symlinks=False)
            if not stat.S_ISDIR(dst.st_mode):
                keep = False  # a linked answer folder: listed each time
            newest = max(newest, dst.st_ctime_ns)
            records.append(f"{_FOLDER}{dst.st_ino}:{dst.st_ctime_ns}{_FOLDER}{prefix}")
            if "\n" in prefix:
                keep = False  # a name the format cannot hold
            with os.scandir(path) as it:
                for entry in it:
                    if entry.is_file(follow_symlinks=False):  # a regular file (from the listing's d_type)
                        rel = prefix + entry.name
                        st = entry.stat(follow_symlinks=False)
                        append(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\0{(status_of(rel) or '') if status_of else ''}"
                               f"\0{kind_of(rel)}")
                        records.append(rel)
                        if "\n" in rel:
                            keep = False  # a name the format cannot hold
                    elif entry.is_dir(follow_symlinks=False):
                        name = entry.name
                        if name not in _SKIPPED and not name.startswith("."):
                            stack.append((prefix + name + "/", entry.path))
                    elif entry.is_symlink():
                        return None, None  # a link's facts are its target's: the full walk
                    # fifos, sockets: never indexed
    except OSError:
        return None, None  # the full walk names what cannot be read
    if not keep or newest >= time.time_ns() - RACY_NS:
        return parts, None
    return parts, "\n".join(records)
