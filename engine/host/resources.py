"""Where benchtui's own files are, in a clone and in an installed wheel.

benchtui is one import package, ``benchtui``. In a clone its code is the
repository's ``engine/`` (with ``tui/`` as ``benchtui.tui``), and the bundled
challenges and the demo workbench are the top-level ``challenges/`` and
``models/``. A wheel carries them inside the package as
``benchtui/bundled/challenges`` and ``benchtui/bundled/demo`` (pyproject maps
every folder), so an installed benchtui never looks for a clone. Nothing is
written under either: stores go to the workbench, or to the user data
directory when the workbench cannot take one.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import benchtui

# The package's own folder: the clone's engine/, or site-packages/benchtui once installed.
ENGINE_DIR = Path(benchtui.__file__).resolve().parent
DATA_PACKAGE = "benchtui.bundled"
DATA_DIR_NAME = "bundled"


def installed_data() -> Path | None:
    """``site-packages/benchtui/bundled`` when benchtui runs from a wheel, else None."""
    data = ENGINE_DIR / DATA_DIR_NAME
    return data if (data / "challenges").is_dir() else None


def is_installed() -> bool:
    return installed_data() is not None


# What holds all of benchtui's files: the package folder once installed, the clone's root otherwise.
PACKAGE_ROOT = ENGINE_DIR if is_installed() else ENGINE_DIR.parent


def bundled_challenges() -> Path:
    """The challenges benchtui ships (the one place this is computed)."""
    data = installed_data()
    return data / "challenges" if data else ENGINE_DIR.parent / "challenges"


def bundled_demo_models() -> Path:
    """The demo workbench's model folders (``models/`` in a clone)."""
    data = installed_data()
    return data / "demo" if data else ENGINE_DIR.parent / "models"


def install_folders() -> list[Path]:
    """benchtui's own folders other than its engine code: nothing is written
    there, and an answer's process must not see them (suites, references,
    adapters, the demo's answers, the dashboard). In a clone that is the whole
    checkout; installed, the package's ``bundled`` and ``tui`` folders, never
    site-packages itself (it holds NumPy and the rest of what answers import)."""
    data = installed_data()
    if data is None:
        return [ENGINE_DIR.parent]
    return [data, ENGINE_DIR / "tui"]


def inside_install(path: Path) -> bool:
    """True for a path inside benchtui's installed files (never written to)."""
    if not is_installed():
        return False
    path = Path(path).resolve()
    return any(path == f or f in path.parents for f in [*install_folders(), ENGINE_DIR])


def user_data_dir() -> Path:
    """``$BENCHTUI_DATA_DIR``, else the platform's per-user data folder."""
    if os.environ.get("BENCHTUI_DATA_DIR"):
        return Path(os.path.expanduser(os.environ["BENCHTUI_DATA_DIR"]))
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "benchtui"
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(Path.home(), ".local", "share")
    return Path(base) / "benchtui"


def _writable(folder: Path) -> bool:
    return os.access(folder, os.W_OK | os.X_OK)


def default_store_path(root: Path) -> Path:
    """``ROOT/store.db``; for a workbench that cannot take it (read-only, or
    inside benchtui's installed files) a store of its own in the user data
    directory, named after the workbench's path so each keeps its own."""
    root = Path(root).resolve()
    if _writable(root) and not inside_install(root):
        return root / "store.db"
    import hashlib  # here: the dashboard's start-up needs it only for such a workbench (~2.5 ms)

    digest = hashlib.sha256(str(root).encode()).hexdigest()[:12]
    return user_data_dir() / "stores" / f"{root.name or 'root'}-{digest}" / "store.db"


def refuse_install_write(path: Path) -> str | None:
    """The message refusing a write into benchtui's installed files, or None."""
    if inside_install(path):
        return (f"{path} is inside benchtui's installed files, which are never written to; "
                "`benchtui demo DIR` makes a copy of the demo you can change")
    return None
