"""User key config: ``~/.config/benchtui/keys.toml`` or ``$BENCHTUI_CONFIG``.

The file maps Binding ids to keys, e.g.::

    [keys]
    "matrix.open" = "enter,o"
    "app.quit" = "ctrl+q"

Unknown ids and unreadable files are reported (as notifications), never fatal.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from benchtui.host.config import config_path  # one file: the engine's tables and the keys


@dataclass
class KeyConfig:
    keymap: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    path: Path | None = None


# An id that names several bindings, one key each, in order.
GROUPS = {"answer.tab": tuple(f"answer.tab{i}" for i in range(1, 6))}


def expand_group(binding_id: str, keys: str, config: KeyConfig) -> bool:
    """``"answer.tab" = "f1,f2,f3,f4,f5"`` -> answer.tab1 = f1, ...; True when ``binding_id`` is a group."""
    members = GROUPS.get(binding_id)
    if members is None:
        return False
    parts = [k for k in keys.split(",") if k]
    if len(parts) != len(members):
        config.problems.append(f"key config: {binding_id!r} needs {len(members)} keys, one per tab, in order")
        return True
    config.keymap.update(zip(members, parts))
    return True


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
    # [keys], or the whole file when it has no [keys]; other tables ([cluster]) are the engine's (engine/host/config.py)
    table = data.get("keys", {k: v for k, v in data.items() if not isinstance(v, dict)})
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
        if expand_group(binding_id, keys.replace(" ", ""), config):
            continue
        config.keymap[binding_id] = keys.replace(" ", "")
    return config
