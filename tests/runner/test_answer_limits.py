"""Limits the machine can honour: the answer's process has no address-space limit
above the machine's memory, and it is the kernel's OOM killer's first choice
(its oom_score_adj), so an answer that exhausts memory is stopped before the
checker, the dashboard or another job."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from benchtui.runner.bundle import machine_memory_mb
from benchtui.runner.orchestrate import Runner, RunOptions
from benchtui.store.database import Store
from benchtui.workbench.layout import find_workbench
from benchtui.workbench.scan import scan_workbench

REPO = Path(__file__).resolve().parents[2]
PEEK = '''import resource

print("oom_score_adj", open("/proc/self/oom_score_adj").read().strip(), flush=True)
print("address space", resource.getrlimit(resource.RLIMIT_AS)[0], flush=True)


def forward(x):
    return x
'''


@pytest.mark.sandbox
def test_the_answer_is_the_oom_killers_first_choice_and_its_memory_limit_fits_the_machine(tmp_path):
    machine = machine_memory_mb()
    if machine is None:
        pytest.skip("this machine does not say how much memory it has (/proc/meminfo)")
    root = tmp_path / "wb"
    shutil.copytree(REPO / "challenges" / "backwards", root / "challenges" / "backwards")
    toml = root / "challenges" / "backwards" / "challenge.toml"
    # a limit past any machine's memory, as the decks set 32 GiB
    toml.write_text(re.sub(r"(?m)^memory_mb = \d+$", f"memory_mb = {machine * 64}", toml.read_text()))
    folder = root / "models" / "m" / "backwards"
    folder.mkdir(parents=True)
    (folder / "ln.py").write_text(PEEK)
    wb = find_workbench(str(root), None, Path.cwd())
    with Store(wb.store_path) as store:
        scan_workbench(wb, store, index_transcripts=False)
    Runner(wb, RunOptions(backend="cpu", self_check=False)).run_all([("m", "backwards")])
    with Store(wb.store_path) as store:
        (stdout,) = [r["stdout"] or "" for r in store.query("select stdout from runs where model = 'm'")]
    assert "oom_score_adj 1000" in stdout, stdout
    limit = int(re.search(r"address space (-?\d+)", stdout).group(1))
    assert 0 < limit <= machine * 1024 * 1024, (limit, machine)
    assert Path("/proc/self/oom_score_adj").read_text().strip() != "1000"  # the driver's own is left alone


def test_doctor_shows_the_memory_limit_in_force(capsys):
    import json

    from benchtui.cli import main

    assert main(["doctor", "--json"]) == 0
    memory = json.loads(capsys.readouterr().out)["memory"]
    machine = machine_memory_mb()
    assert memory["machine_mb"] == machine and memory["oom_score_adj"] == 1000
    assert memory["deck_limit_in_force_mb"] == min(memory["deck_limit_mb"], machine or memory["deck_limit_mb"])
    assert main(["doctor"]) == 0
    assert f"{memory['deck_limit_in_force_mb']} MiB in force" in capsys.readouterr().out
