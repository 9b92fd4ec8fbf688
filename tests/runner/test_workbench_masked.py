"""The driver's workbench is masked in the answer's sandbox even where it lies
inside a folder the sandbox binds (here the interpreter's prefix, which every
run binds): the answer cannot read other answers or the store."""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest
from benchtui.runner.orchestrate import Runner, RunOptions
from benchtui.store.database import Store
from benchtui.workbench.layout import find_workbench
from benchtui.workbench.scan import scan_workbench

REPO = Path(__file__).resolve().parents[2]
PEEK = '''import os

SECRET = {secret!r}
print("answer sees the workbench:", os.path.exists(SECRET), flush=True)


def forward(x):
    return x
'''


@pytest.mark.sandbox
def test_a_workbench_inside_a_bound_folder_is_hidden_from_the_answer():
    prefix = Path(sys.prefix)
    if not os.access(prefix, os.W_OK):
        pytest.skip("the interpreter's prefix is read-only here: no workbench can be made inside it")
    root = Path(tempfile.mkdtemp(prefix="benchtui-test-wb-", dir=prefix))
    root.chmod(0o755)  # as a workbench is: the sandbox's uid reads the challenge through it
    try:
        shutil.copytree(REPO / "challenges" / "backwards", root / "challenges" / "backwards")
        secret = root / "models" / "other" / "backwards" / "ln.py"
        secret.parent.mkdir(parents=True)
        secret.write_text("def forward(x):\n    return x  # another model's answer\n")
        folder = root / "models" / "m" / "backwards"
        folder.mkdir(parents=True)
        (folder / "ln.py").write_text(PEEK.format(secret=str(secret)))
        wb = find_workbench(str(root), None, Path.cwd())
        with Store(wb.store_path) as store:
            scan_workbench(wb, store, index_transcripts=False)
        Runner(wb, RunOptions(backend="cpu", self_check=False)).run_all([("m", "backwards")])
        with Store(wb.store_path) as store:
            (stdout,) = [r["stdout"] for r in store.query("select stdout from runs where model = 'm'")]
        assert "answer sees the workbench: False" in (stdout or ""), store_dump(wb)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def store_dump(wb):
    with Store(wb.store_path) as store:
        return store.query("select verdict, stdout, stderr, message from runs"), store.query("select name, verdict, message from checks")
