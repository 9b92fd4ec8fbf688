"""User key config: ``~/.config/benchtui/keys.toml`` or ``$BENCHTUI_CONFIG``.

The file maps Binding ids to keys, e.g.::

    [keys]
    "matrix.open" = "enter,o"
    "app.quit" = "ctrl+q"

Unknown ids and unreadable files are reported (as notifications), never fatal.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path


def config_path() -> Path:
    env = os.environ.get("BENCHTUI_CONFIG")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or "~/.config"
    return Path(base).expanduser() / "benchtui" / "keys.toml"


@dataclass
class KeyConfig:
    keymap: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    path: Path | None = None


def load_key_config(path: Path | None = None, known_prefixes: tuple[str, ...] | None = None) -> KeyConfig:
    path = path or config_path()
    config = KeyConfig(path=path)
    if not path.is_file():
        return config
    import tomllib  # here, not at the top: most start-ups have no file to read

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        config.problems.append(f"key config {path}: {exc}")
        return config
    table = data.get("keys", data)
    if not isinstance(table, dict):
        config.problems.append(f"key config {path}: [keys] must be a table")
        return config
    for binding_id, keys in table.items():
        if isinstance(keys, list):
            keys = ",".join(str(k) for k in keys)
        if not isinstance(keys, str) or not keys.strip():
            config.problems.append(f"key config: {binding_id!r} needs a key string")
            continue
        if known_prefixes is not None and binding_id.split(".", 1)[0] not in known_prefixes:
            config.problems.append(f"key config: unknown binding id {binding_id!r}")
            continue
        config.keymap[binding_id] = keys.replace(" ", "")
    return config
