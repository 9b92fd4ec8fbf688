"""A verdict is on the files its run hashed (``runs.files``, ``runs.answer_sha256``): once the
answer's files no longer hash the same, every place that shows it says it is stale."""
from __future__ import annotations

import json
from pathlib import Path

from benchtui.cli import main
from benchtui.runner.orchestrate import tree_digest
from benchtui.store.database import Store
from benchtui.store.queries import load_matrix
from benchtui.workbench.layout import find_workbench
from benchtui.workbench.scan import scan_workbench


def _record_run(root: Path, model: str, challenge: str, verdict: str) -> int:
    """A finished run as the runner records it: the files it judged and their digest."""
    wb = find_workbench(str(root), None, Path.cwd())
    digest, files = tree_digest(root / "models" / model / challenge)
    with Store(wb.store_path) as store:
        scan_workbench(wb, store, index_transcripts=False)
        run_id = store.db["runs"].insert({"model": model, "challenge": challenge, "status": "done", "verdict": verdict,
                                          "backend": "cpu", "answer_sha256": digest, "files": json.dumps(files),
                                          "message": "conformance: SyntaxError"}).last_pk
        store.db["checks"].insert({"run_id": run_id, "position": 0, "name": "conformance", "verdict": verdict,
                                   "message": "SyntaxError"})
    return run_id


def test_a_verdict_on_files_since_changed_is_marked_stale_everywhere(demo_workbench, capsys):
    root = demo_workbench
    answer = root / "models" / "demo-careful" / "kv" / "kv_cache.py"
    whole = answer.read_text()
    answer.write_text(whole[:300])  # cut short: the run says error
    run_id = _record_run(root, "demo-careful", "kv", "error")
    _record_run(root, "demo-hasty", "kv", "fail")  # untouched: never stale
    answer.write_text(whole)  # put back; the verdict is on the cut file
    assert main(["--workbench", str(root), "scan"]) == 0
    capsys.readouterr()

    assert main(["--workbench", str(root), "results"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if "demo-careful/kv" in x)
    assert "STALE: kv_cache.py changed since this run" in line
    assert "STALE" not in next(x for x in out.splitlines() if "demo-hasty/kv" in x)
    assert main(["--workbench", str(root), "results", "--json"]) == 0
    got = {(r["model"], r["challenge"]): r for r in json.loads(capsys.readouterr().out)["results"]}
    assert got[("demo-careful", "kv")]["stale"] == "kv_cache.py changed" and got[("demo-hasty", "kv")]["stale"] == ""

    assert main(["--workbench", str(root), "show", "demo-careful", "kv"]) == 0
    assert f"latest run #{run_id}: error" in (out := capsys.readouterr().out) and "STALE: kv_cache.py changed" in out

    with Store(root / "store.db") as store:
        matrix = load_matrix(store)
    assert matrix.cell("demo-careful", "kv").stale == "kv_cache.py changed"
    assert matrix.cell("demo-hasty", "kv").stale == ""
    from benchtui.tui.screens.matrix import cell_text

    assert cell_text(matrix.cell("demo-careful", "kv")).plain.startswith("!≠")
    assert cell_text(matrix.cell("demo-hasty", "kv")).plain.startswith("✗ ")

    assert main(["--workbench", str(root), "export", "markdown"]) == 0
    md = capsys.readouterr().out
    assert "| KV-Cache | error (stale) | fail |" in md and "demo-careful on KV-Cache (kv_cache.py changed)" in md
    assert main(["--workbench", str(root), "export", "csv"]) == 0
    rows = [r for r in capsys.readouterr().out.splitlines() if r.startswith("verdict,") and ",kv," in r]
    assert any("demo-careful" in r and r.endswith("kv_cache.py changed") for r in rows)

    # judged again on the files as they are: no longer stale
    _record_run(root, "demo-careful", "kv", "pass")
    assert main(["--workbench", str(root), "results"]) == 0
    assert "STALE" not in capsys.readouterr().out
