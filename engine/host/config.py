"""The user's config file, the one the dashboard reads its keys from:
``$BENCHTUI_CONFIG``, else ``$XDG_CONFIG_HOME/benchtui/keys.toml``
(``~/.config/benchtui/keys.toml``). The engine reads its own tables there;
today one: ``[cluster] address``, the default of ``--cluster``::

    [cluster]
    address = "local"          # or "10.0.0.5:6379", or "ray://head:10001"

``$BENCHTUI_CLUSTER`` outranks the file; ``--cluster`` / ``--no-cluster``
outrank both.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

CLUSTER_ENV = "BENCHTUI_CLUSTER"


def config_path() -> Path:
    env = os.environ.get("BENCHTUI_CONFIG")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or "~/.config"
    return Path(base).expanduser() / "benchtui" / "keys.toml"


def read_table(name: str, path: Path | None = None) -> dict[str, Any]:
    """One top-level table of the config file ({} when absent or unreadable:
    the dashboard reports a broken file, commands carry on without it)."""
    path = path or config_path()
    if not path.is_file():
        return {}
    import tomllib

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}
    table = data.get(name)
    return table if isinstance(table, dict) else {}


def default_cluster() -> str | None:
    """The cluster address runs go to when ``--cluster`` is not given: ``$BENCHTUI_CLUSTER``,
    else the config file's ``[cluster] address``; None (this machine) when neither is set."""
    env = os.environ.get(CLUSTER_ENV, "").strip()
    if env:
        return None if env.lower() in ("none", "off", "no") else env
    address = read_table("cluster").get("address")
    return address.strip() if isinstance(address, str) and address.strip() else None
