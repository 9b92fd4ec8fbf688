"""Where benchtui's own files are, in a clone and in an installed wheel.

From a clone the bundled challenges and the demo workbench are the
repository's top-level ``challenges/`` and ``models/``. A wheel carries the
same folders as ``benchtui_data/challenges`` and ``benchtui_data/demo``
beside ``engine`` in site-packages (pyproject maps them there), so an
installed benchtui never looks for a clone. Nothing is written under either:
stores go to the workbench, or to the user data directory when the
workbench cannot take one.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import engine

ENGINE_DIR = Path(engine.__file__).resolve().parent
# What holds ``engine``: the repository root in a clone, site-packages once installed.
PACKAGE_ROOT = ENGINE_DIR.parent
DATA_PACKAGE = "benchtui_data"


def installed_data() -> Path | None:
    """``site-packages/benchtui_data`` when benchtui runs from a wheel, else None."""
    data = PACKAGE_ROOT / DATA_PACKAGE
    return data if (data / "challenges").is_dir() else None


def is_installed() -> bool:
    return installed_data() is not None


def bundled_challenges() -> Path:
    """The challenges benchtui ships (the one place this is computed)."""
    data = installed_data()
    return data / "challenges" if data else PACKAGE_ROOT / "challenges"


def bundled_demo_models() -> Path:
    """The demo workbench's model folders (``models/`` in a clone)."""
    data = installed_data()
    return data / "demo" if data else PACKAGE_ROOT / "models"


def install_folders() -> list[Path]:
    """benchtui's own folders other than ``engine``: nothing is written there,
    and an answer's process must not see them (suites, references, adapters,
    the demo's answers, the dashboard). In a clone that is the whole checkout;
    installed, only benchtui's folders in site-packages, never site-packages
    itself (it holds NumPy and the rest of what answers import)."""
    data = installed_data()
    if data is None:
        return [PACKAGE_ROOT]
    return [data, PACKAGE_ROOT / "tui"]


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
