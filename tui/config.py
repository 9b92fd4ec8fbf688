"""User key config: ``~/.config/benchtui/keys.toml`` or ``$BENCHTUI_CONFIG``.

The file maps Binding ids to keys, e.g.::

    [keys]
    "matrix.open" = "enter,o"
    "app.quit" = "ctrl+q"

Unknown ids, key names Textual does not know and unreadable files are reported
(one line each, as notifications), never fatal.
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


# Every Binding id the dashboard has (tests/tui/test_tui_key_config.py holds it to the
# screens' BINDINGS): kept here so that checking a keys file imports no screen.
BINDING_IDS = frozenset({
    "answer.adapter", "answer.back", "answer.compare", "answer.grade", "answer.published", "answer.run",
    "answer.tab1", "answer.tab2", "answer.tab3", "answer.tab4", "answer.tab5", "answer.transcript", "app.help",
    "app.interrupt", "app.palette", "app.quit", "audit.back", "audit.cancel", "audit.equivalent",
    "audit.not_equivalent", "audit.refresh", "audit.start", "compare.back", "compare.focus", "compare.model",
    "compare.next", "compare.prev", "compare.unified", "confirm.no", "confirm.yes", "grades.a", "grades.b",
    "grades.back", "grades.blind", "grades.c", "grades.d", "grades.f", "grades.minus", "grades.next",
    "grades.note", "grades.plus", "help.close", "leaderboard.back", "leaderboard.refresh", "matrix.audit",
    "matrix.compare", "matrix.empty", "matrix.filter", "matrix.grade", "matrix.judge", "matrix.leaderboard",
    "matrix.open", "matrix.published", "matrix.refresh", "matrix.runs", "matrix.sort", "matrix.transcript",
    "published.back", "published.detail_less", "published.detail_more", "published.refresh", "runs.back",
    "runs.cancel", "runs.refresh", "runs.start", "transcript.back", "transcript.branches", "transcript.expand",
    "transcript.filter", "transcript.fold", "transcript.next_hit", "transcript.next_turn", "transcript.prev_hit",
    "transcript.prev_turn", "transcript.search"
})
MODIFIERS = frozenset({"ctrl", "shift", "alt", "meta", "super", "hyper"})

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


def unknown_key(keys: str) -> str | None:
    """The first key of ``keys`` ("enter,o") that Textual has no name for, else None.
    Textual binds any string and never says so: "entr" would silently do nothing."""
    from textual.keys import KEY_ALIASES, KEY_DISPLAY_ALIASES, KEY_NAME_REPLACEMENTS, Keys, key_to_character

    names = {k.value for k in Keys} | set(KEY_ALIASES) | set(KEY_DISPLAY_ALIASES) | set(KEY_NAME_REPLACEMENTS.values())
    for key in keys.split(","):
        *modifiers, base = key.split("+")
        if len(base) == 1 and all(m in MODIFIERS for m in modifiers):
            continue
        if not base or any(m not in MODIFIERS for m in modifiers) or (
                base not in names and key_to_character(base) is None):
            return key
    return None


def did_you_mean(word: str, choices) -> str:
    import difflib

    close = difflib.get_close_matches(word, sorted(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def load_key_config(path: Path | None = None, known_ids: frozenset[str] | None = BINDING_IDS) -> KeyConfig:
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
        keys = keys.replace(" ", "")
        if known_ids is not None and binding_id not in known_ids and binding_id not in GROUPS:
            hint = did_you_mean(binding_id, known_ids | set(GROUPS)) or " (`?` on a screen lists its ids)"
            config.problems.append(f"key config {path}: unknown binding id {binding_id!r}{hint}; ignored")
            continue
        if (bad := unknown_key(keys)) is not None:
            config.problems.append(f"key config {path}: {binding_id!r} = {keys!r}: {bad!r} is not a key name "
                                   "(e.g. enter, ctrl+o, f5, question_mark); ignored")
            continue
        if expand_group(binding_id, keys, config):
            continue
        config.keymap[binding_id] = keys
    return config
