"""`python -m benchtui` runs the command; importing benchtui.__main__ starts nothing."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_importing_benchtui_main_starts_nothing(tmp_path):
    # Arguments that would make the CLI fail loudly (exit 2) if it ran.
    probe = ("import sys; sys.argv = ['benchtui', '--workbench', {!r}]\n"
             "import benchtui.__main__\n"
             "print('imported', 'benchtui.cli' in sys.modules, 'benchtui.tui.app' in sys.modules, 'textual' in sys.modules)".format(str(tmp_path / "no-such-workbench")))
    out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                         stdin=subprocess.DEVNULL)
    assert (out.returncode, out.stdout.strip(), out.stderr) == (0, "imported False False False", "")


def test_python_m_benchtui_still_runs_the_command(tmp_path):
    out = subprocess.run([sys.executable, "-m", "benchtui", "--workbench", str(tmp_path / "nowhere"), "list"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert out.returncode == 2 and out.stderr.startswith("benchtui: error:"), (out.returncode, out.stderr)
    out = subprocess.run([sys.executable, "-m", "benchtui", "--help"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "benchtui" in out.stdout


def test_ctrl_c_while_the_arguments_are_read_is_one_line(monkeypatch, capsys):
    """Reading the arguments imports every command's module (a few hundred ms): an
    interrupt there is exit 130 and one line, as anywhere else, never a traceback."""
    from benchtui import cli

    def interrupted(argv):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "parse_args", interrupted)
    assert cli.main(["list"]) == 130
    assert capsys.readouterr().err == "benchtui: interrupted\n"
