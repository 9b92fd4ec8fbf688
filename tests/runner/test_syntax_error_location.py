"""An answer file that does not parse is named, with its line, before the
(bundled) adapter whose import read it; on this side and across the wire."""
from __future__ import annotations

import importlib
import sys

import pytest
from benchtui.cli import main
from benchtui.verify import wire
from benchtui.verify.suite import describe_exception


def _import_broken(tmp_path, monkeypatch) -> SyntaxError:
    (tmp_path / "kv_cache.py").write_text("x = 1\n\n\ndef f(:\n    pass\n")
    (tmp_path / "the_adapter.py").write_text('"""binds it"""\nfrom kv_cache import f\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("kv_cache", "the_adapter"):
        sys.modules.pop(name, None)
    with pytest.raises(SyntaxError) as caught:
        importlib.import_module("the_adapter")
    return caught.value


def test_the_file_that_does_not_parse_comes_first(tmp_path, monkeypatch):
    exc = _import_broken(tmp_path, monkeypatch)
    said = describe_exception(exc)
    assert said.startswith("SyntaxError at kv_cache.py:4 (imported at the_adapter.py:2): "), said
    assert "(kv_cache.py, line 4)" not in said  # the place is said once


def test_across_the_wire_too(tmp_path, monkeypatch):
    exc = _import_broken(tmp_path, monkeypatch)
    rebuilt = wire.rebuild_exception(wire.describe_raise(1, exc))
    said = describe_exception(rebuilt)
    assert said.startswith("SyntaxError at kv_cache.py:4 (imported at the_adapter.py:2): "), said


def test_other_errors_keep_their_last_frame():
    try:
        {}["missing"]
    except KeyError as exc:
        assert describe_exception(exc).startswith("KeyError at test_syntax_error_location.py:")


def test_a_run_names_the_answers_file(demo_workbench, capsys):
    answer = demo_workbench / "models" / "demo-careful" / "kv" / "kv_cache.py"
    lines = answer.read_text().splitlines()
    lines[34] += " )("
    answer.write_text("\n".join(lines) + "\n")
    assert main(["--workbench", str(demo_workbench), "run", "-m", "demo-careful", "-c", "kv"]) in (0, 1)
    out = " ".join(capsys.readouterr().out.split())  # the report wraps to the terminal's width
    assert "SyntaxError at kv_cache.py:35 (imported at demo-careful.py:2)" in out, out
