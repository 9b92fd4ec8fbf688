"""A --workbench that is not there says so; one that is a file says that."""
from __future__ import annotations

from benchtui.cli import main


def test_a_missing_workbench_does_not_exist_and_a_file_is_not_a_folder(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("BENCHTUI_WORKBENCH", raising=False)
    missing = tmp_path / "nope"
    assert main(["--workbench", str(missing), "list"]) == 2
    err = capsys.readouterr().err
    assert f"workbench from --workbench does not exist: {missing}" in err and "not a folder" not in err
    afile = tmp_path / "afile"
    afile.write_text("x")
    assert main(["--workbench", str(afile), "list"]) == 2
    assert f"workbench from --workbench is not a folder: {afile}" in capsys.readouterr().err
    monkeypatch.setenv("BENCHTUI_WORKBENCH", str(missing))
    assert main(["list"]) == 2
    assert "workbench from BENCHTUI_WORKBENCH does not exist" in capsys.readouterr().err
