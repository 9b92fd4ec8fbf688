"""Command names follow one pattern (a noun, then what to do with it); the older
spellings still work but the help lists only the new ones; every --json says what
it does; bad usage exits 2 in every command."""
from __future__ import annotations

import argparse

import pytest
from benchtui.cli import build_parser, main


def subcommands(parser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return action.choices


def listed(parser) -> set[str]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {a.dest for a in action._choices_actions}


def test_help_lists_the_consistent_names_and_the_old_ones_still_parse():
    parser = build_parser()
    names = listed(parser)
    assert {"grades", "model", "challenge", "audit"} <= names
    assert not {"grade", "audit-mark", "new-model"} & names
    assert "mark" in listed(subcommands(parser)["audit"])
    assert "new" in listed(subcommands(parser)["model"])
    assert {"set", "note", "history", "invalidate", "import", "list", "alias"} <= listed(subcommands(parser)["grades"])
    pairs = [(["grade", "set", "m", "c", "A"], ["grades", "set", "m", "c", "A"]),
             (["grade", "note", "m", "c", "hi"], ["grades", "note", "m", "c", "hi"]),
             (["audit-mark", "m", "c", "abc"], ["audit", "mark", "m", "c", "abc"]),
             (["new-model", "x"], ["model", "new", "x"])]
    for old, new in pairs:
        a, b = parser.parse_args(old), parser.parse_args(new)
        assert a.func is b.func, (old, new)
        # the same values reach the same handler (the new spelling's parser may hold more)
        assert all(vars(b)[k] == v for k, v in vars(a).items() if k not in ("command", "grades_command")), (old, new)
    # audit without an action still audits
    assert parser.parse_args(["audit", "-c", "kv", "--show"]).func.__name__ == "cmd_audit"


def test_every_json_option_has_help():
    def walk(parser, path):
        for action in parser._actions:
            if "--json" in action.option_strings:
                assert action.help, f"{' '.join(path)} --json has no help"
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield from walk(sub, [*path, name])
        yield path

    seen = list(walk(build_parser(), ["benchtui"]))
    assert len(seen) > 30


@pytest.mark.parametrize("args", [
    ["backup", "{root}/no/such/folder/x.db"],
    ["salvage", "{root}/store.db"],
    ["export", "csv", "-o", "{root}/no/such/folder/x.csv"],
    ["grades", "list", "--dimension", "nope"],
    ["grade", "set", "nobody", "kv", "A"],
    ["audit", "mark", "nobody", "kv", "abc"],
    ["model", "new", "../x"],
    ["results", "--bogus"],
])
def test_bad_usage_exits_2(demo_workbench, args, capsys):
    assert main(["--workbench", str(demo_workbench), "scan"]) == 0
    capsys.readouterr()
    code = main(["--workbench", str(demo_workbench), *(a.format(root=demo_workbench) for a in args)]) \
        if args[-1] != "--bogus" else pytest.raises(SystemExit, main, ["--workbench", str(demo_workbench), *args]).value.code
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("benchtui: error: ") and err.count("\n") == 1, err
