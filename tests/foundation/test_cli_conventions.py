"""The command-line conventions of the tools people know (git, pytest, uv): a
did-you-mean for every unknown name (commands, options, models, challenges, a
misspelt answer folder), `help COMMAND`, hidden older spellings never listed,
`-Z` an unknown option, and `run --stale/--failed/--not-run`."""
from __future__ import annotations

from benchtui.cli import main
from benchtui.commands.run_cmds import rerun_only
from benchtui.store.database import Store


def _err(capsys) -> str:
    return capsys.readouterr().err


def test_every_unknown_name_gets_a_did_you_mean(demo_workbench, capsys):
    wb = ["--workbench", str(demo_workbench)]
    for argv, said in [
        (["runn"], "unknown command 'runn'; did you mean 'run'?"),
        (["grades", "sett"], "unknown command 'sett'; did you mean 'set'?"),
        (["run", "--jbos", "2"], "unknown option --jbos: did you mean --jobs"),
        (["run", "--backend", "cdua"], "unknown choice 'cdua'; did you mean 'cuda'?"),
        (["show", "demo-carefull", "kv"], "unknown model 'demo-carefull'; did you mean 'demo-careful'?"),
        (["show", "demo-careful", "flash_atention"], "unknown challenge 'flash_atention'; did you mean 'flash_attention'"),
        (["run", "-m", "demo-hastyy"], "did you mean 'demo-hasty'?"),
        (["grades", "set", "demo-careful", "kvv", "A"], "did you mean 'kv'?"),
    ]:
        assert exit_code([*wb, *argv]) == 2
        assert said in _err(capsys), argv
    # hidden older spellings (new-model, audit-mark) still work but are never offered
    assert exit_code(["new-modle"]) == 2
    assert "new-model" not in _err(capsys)
    # `-Z` is an unknown option, not "an invalid choice" of command
    assert exit_code(["-Z"]) == 2
    err = _err(capsys)
    assert "unknown option -Z" in err and "choice" not in err


def test_a_misspelt_answer_folder_is_named_as_one(demo_workbench, capsys):
    (demo_workbench / "models/demo-careful/flash_atention").mkdir()
    (demo_workbench / "models/demo-careful/flash_atention/kernel.py").write_text("x = 1\n")
    assert main(["--workbench", str(demo_workbench), "scan"]) == 0
    assert "flash_atention/ is not a challenge: did you mean 'flash_attention'?" in capsys.readouterr().out


def test_help_command_prints_that_commands_help(capsys):
    assert main(["help", "run"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: benchtui run") and "--not-run" in out
    assert main(["help", "grades", "set"]) == 0
    assert capsys.readouterr().out.startswith("usage: benchtui grades set")
    assert main(["help", "rnu"]) == 2
    assert "did you mean 'run'?" in _err(capsys)


def test_run_reruns_only_the_stale_the_failed_or_the_never_run(demo_workbench, capsys):
    assert main(["--workbench", str(demo_workbench), "scan"]) == 0
    pairs = [("demo-careful", "kv"), ("demo-hasty", "kv"), ("demo-careful", "fuse")]
    with Store(demo_workbench / "store.db") as store:
        store.execute("insert into runs (model, challenge, status, verdict) values ('demo-careful', 'kv', 'done', 'pass')")
        store.execute("insert into runs (model, challenge, status, verdict) values ('demo-hasty', 'kv', 'done', 'fail')")
        store.conn.commit()
        assert rerun_only(store, pairs, False, False, False) == pairs
        assert rerun_only(store, pairs, False, True, False) == [("demo-hasty", "kv")]
        assert rerun_only(store, pairs, False, False, True) == [("demo-careful", "fuse")]
        assert rerun_only(store, pairs, False, True, True) == [("demo-hasty", "kv"), ("demo-careful", "fuse")]
        assert rerun_only(store, pairs, True, False, False) == []  # nothing changed since those runs
    # nothing left to run is said, and is no error
    assert main(["--workbench", str(demo_workbench), "run", "-m", "demo-careful", "-c", "kv", "--failed"]) == 0
    assert "nothing to run: no answer selected is failed" in _err(capsys)


def exit_code(argv: list[str]) -> int:
    """main's exit code, whether it returns it or argparse exits with it."""
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)


def test_the_global_options_work_after_the_command_too(demo_workbench, tmp_path, capsys):
    # `benchtui import DECK --workbench DIR` read "unknown option --workbench: did you mean --workbench?"
    assert main(["list", "--workbench", str(demo_workbench), "--json"]) == 0
    assert "demo-careful" in capsys.readouterr().out
    # given both before and after, the one after the command stands, as each command's own options do
    assert main(["--workbench", str(tmp_path), "scan", "--workbench", str(demo_workbench),
                 "--store", str(tmp_path / "s.db")]) == 0
    assert (tmp_path / "s.db").is_file() and not (demo_workbench / "s.db").exists()
