"""keys.toml: every id and key name it gives is one the dashboard knows, or a one-line problem says which."""
from __future__ import annotations

import importlib
import inspect
import pkgutil

from benchtui.tui.config import BINDING_IDS, load_key_config, unknown_key


def test_the_known_ids_are_the_screens_binding_ids_and_their_keys_are_key_names():
    import benchtui.tui.screens as screens
    import benchtui.tui.widgets as widgets
    from benchtui.tui.app import BenchApp
    from textual.binding import Binding

    modules = [importlib.import_module(f"{p.__name__}.{m.name}") for p in (screens, widgets)
               for m in pkgutil.iter_modules(p.__path__)]
    classes = [BenchApp] + [c for m in modules for _, c in inspect.getmembers(m, inspect.isclass) if c.__module__ == m.__name__]
    bindings = [b for c in classes for b in c.__dict__.get("BINDINGS", []) if isinstance(b, Binding)]
    assert {b.id for b in bindings if b.id} == BINDING_IDS
    assert [b.key for b in bindings if unknown_key(b.key.replace(" ", ""))] == []


def test_a_misspelled_id_or_key_name_is_one_line_each_and_the_rest_still_binds(tmp_path):
    cfg = tmp_path / "keys.toml"
    cfg.write_text('[keys]\n"matrix.opne" = "o"\n"matrix.sort" = "entr"\n"matrix.leaderboard" = "L"\n'
                   '"grades.note" = "ctrl+shift+n"\n"transcript.search" = "questionmark,slash"\n"nope.x" = "z"\n')
    config = load_key_config(cfg)
    assert config.keymap == {"matrix.leaderboard": "L", "grades.note": "ctrl+shift+n"}
    assert len(config.problems) == 4 and all("\n" not in p and str(cfg) in p for p in config.problems)
    opne, entr, question, nope = config.problems
    assert "unknown binding id 'matrix.opne' (did you mean 'matrix.open'?)" in opne
    assert "'entr' is not a key name" in entr and "'matrix.sort'" in entr
    assert "'questionmark' is not a key name" in question
    assert "unknown binding id 'nope.x'" in nope
