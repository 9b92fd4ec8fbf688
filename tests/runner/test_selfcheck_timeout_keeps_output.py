"""A self-check its budget stops keeps what it printed: the answer's Python writes
unbuffered into the self-check's log, so the kill loses nothing already printed."""
from __future__ import annotations

import sys

import pytest
from benchtui.host import resources
from benchtui.runner import sandbox
from benchtui.runner.bundle import self_check_env


@pytest.mark.sandbox
def test_a_timed_out_self_check_keeps_its_output(tmp_path):
    (tmp_path / "demo_slow.py").write_text("import time\nprint('step 1 of 9 done')\ntime.sleep(60)\n")
    log = tmp_path / "self.log"
    layer = sandbox.choose_layer()
    res = sandbox.run_sandboxed([sys.executable, "demo_slow.py"], workdir=tmp_path,
                                limits=sandbox.Limits(wall_s=3), layer=layer, env=self_check_env(False),
                                ro_paths=[resources.ENGINE_DIR], stdout_path=log, stderr_path=log)
    assert res.timed_out
    assert "step 1 of 9 done" in log.read_text()
