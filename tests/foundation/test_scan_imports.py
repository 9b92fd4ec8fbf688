"""A rescan in a fresh process (the dashboard's at every start, `benchtui scan`)
imports neither sqlite-utils (numpy comes with it) nor gitpython for a
workbench outside git: together about a second of a process's first rescan."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from benchtui.store.database import Store
from benchtui.workbench.gitinfo import read_git
from benchtui.workbench.layout import find_workbench
from benchtui.workbench.scan import scan_workbench

SCAN = """
import json, sys
from pathlib import Path
from benchtui.store.database import Store
from benchtui.workbench.layout import find_workbench
from benchtui.workbench.scan import scan_workbench
root = Path(sys.argv[1])
wb = find_workbench(str(root), None, root)
with Store(wb.store_path) as store:
    r = scan_workbench(wb, store)
print(json.dumps({"loaded": sorted(m for m in ("sqlite_utils", "git", "numpy") if m in sys.modules),
                  "answers": r.answers, "unchanged": r.unchanged, "git": r.git_commit}))
"""


def test_a_fresh_process_rescans_without_sqlite_utils_or_gitpython(tmp_path):
    folder = tmp_path / "models" / "m" / "kv"
    folder.mkdir(parents=True)
    (folder / "kv.py").write_text("x = 1\n")
    wb = find_workbench(str(tmp_path), None, tmp_path)
    with Store(wb.store_path) as store:  # the store made (and migrated) beforehand, as a rescan finds it
        scan_workbench(wb, store)
    out = subprocess.run([sys.executable, "-c", SCAN, str(tmp_path)], capture_output=True, text=True, check=True)
    got = json.loads(out.stdout)
    assert got == {"loaded": [], "answers": 1, "unchanged": 1, "git": None}
    rows = Store(wb.store_path).query("select finished_at, answers from scans order by id")
    assert len(rows) == 2 and all(r["finished_at"] and r["answers"] == 1 for r in rows)


def test_git_is_found_from_a_sub_folder_and_not_where_there_is_none(tmp_path):
    assert read_git(tmp_path).problem == "not a git repository"
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    inner = tmp_path / "a" / "b"
    inner.mkdir(parents=True)
    info = read_git(inner)
    assert info.problem is None and info.top == Path(tmp_path).resolve()
