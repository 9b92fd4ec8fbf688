"""`benchtui [--workbench PATH] [--store FILE]` is read without argparse
(start-up); it must mean exactly what argparse makes of it, and anything else
goes to argparse."""
from __future__ import annotations

import pytest
from benchtui.cli import add_global_options, dashboard_args, parse_args, parser_class


def argparse_view(argv: list[str]) -> dict:
    parser = parser_class()(prog="benchtui", add_help=False)
    add_global_options(parser)
    known, rest = parser.parse_known_args(argv)
    assert rest == []
    return {**vars(known), "command": None}


@pytest.mark.parametrize("argv", [
    [], ["--workbench", "/tmp/wb"], ["--workbench=/tmp/wb"], ["--store", "s.db"], ["--store=", "--workbench", "x"],
    ["--workbench", "a", "--workbench", "b"], ["--store", "x.db", "--workbench=/a=b"], ["--workbench", "with space"],
])
def test_dashboard_args_match_argparse(argv):
    fast = dashboard_args(argv)
    assert fast is not None and vars(fast) == argparse_view(argv)
    assert vars(parse_args(argv)) == argparse_view(argv)


@pytest.mark.parametrize("argv", [
    ["scan"], ["--help"], ["-h"], ["--workbench"], ["--workbench", "--store", "x"], ["--work", "x"],
    ["--workbench", "x", "list", "--json"], ["--store", "-"], ["--verbose"],
])
def test_anything_else_goes_to_argparse(argv):
    assert dashboard_args(argv) is None


def test_subcommands_and_errors_still_parse(capsys):
    args = parse_args(["--workbench", "/tmp", "list", "--json"])
    assert (args.command, args.workbench, args.json) == ("list", "/tmp", True)
    with pytest.raises(SystemExit) as exc:
        parse_args(["--workbench"])
    assert exc.value.code == 2 and "expected one argument" in capsys.readouterr().err
