"""benchtui's verdicts beside a deck's published ones: agreement counts, the
rank correlation of the passes, every disagreement with both reasons."""
from __future__ import annotations

import json

import pytest
from benchtui.decks import kernelbench_hard
from benchtui.decks.compare import compare, spearman
from benchtui.decks.importer import import_deck
from benchtui.store.database import Store
from deck_kit import scanned_workbench


def test_spearman():
    assert spearman([(1, 10), (2, 20), (3, 30)]) == pytest.approx(1.0)
    assert spearman([(1, 30), (2, 20), (3, 10)]) == pytest.approx(-1.0)
    assert spearman([(1, 1), (2, 3), (3, 2), (4, 4)]) == pytest.approx(0.8)
    assert spearman([(1, 5), (2, 5), (3, 5)]) is None  # no spread
    assert spearman([(1, 2), (2, 3)]) is None  # too few
    assert spearman([(1, 1), (1, 2), (2, 3)]) == pytest.approx(0.866, abs=1e-3)  # ties share their rank


def _run(store: Store, model: str, challenge: str, verdict: str, checks: list[tuple]) -> None:
    cur = store.execute("insert into runs (model, challenge, status, verdict) values (?, ?, 'done', ?)",
                        (model, challenge, verdict))
    for i, (name, v, value, message) in enumerate(checks):
        store.execute("insert into checks (run_id, position, name, verdict, value, message) values (?, ?, ?, ?, ?, ?)",
                      (cur.lastrowid, i, name, v, json.dumps(value), message))
    store.conn.commit()


def test_published_beside_benchtuis_verdicts(kbh_deck, tmp_path, capsys):
    root = tmp_path / "wb"
    import_deck(kernelbench_hard.read_deck(kbh_deck, "h100"), root)
    fp8 = "kbh_01_fp8_gemm"
    with Store(root / "store.db") as store:
        # three passes on both sides, ranked alike by the deck's and benchtui's peak_fraction
        _run(store, "codex_gpt-5.5", fp8, "pass", [("correct", "pass", None, ""), ("peak_fraction", "info", 0.30, "")])
        _run(store, "claude_claude-fable-5", fp8, "pass", [("peak_fraction", "info", 0.35, "")])
        _run(store, "cursor_composer-2.5-fast", fp8, "pass", [("peak_fraction", "info", 0.20, "")])
        # the deck passed it; benchtui did not
        _run(store, "gemini_gemini-3.5-flash", fp8, "fail",
             [("correct", "pass", None, ""), ("memoised", "fail", None, "shape 0 seed 7: the output did not follow the input")])
        # an older run of the same answer is not its verdict
        _run(store, "hy3_hy3", fp8, "pass", [])
        _run(store, "hy3_hy3", fp8, "skipped", [("module_harness", "skipped", None, "no GPU here")])
        failed = store.query("select model, challenge from deck_results where correct = 0 and has_answer = 1 "
                             "order by run_id limit 1")[0]
        _run(store, failed["model"], failed["challenge"], "error", [("build", "error", None, "nvcc failed")])
        data = compare(store)
        only = compare(store, challenge=fp8)
    o = data["overall"]
    assert (o["judged_both"], o["both_pass"], o["both_fail"], o["deck_pass_here_fail"], o["deck_fail_here_pass"]) == (5, 3, 1, 1, 0)
    assert o["agreement"] == pytest.approx(4 / 5)
    assert o["run_here"] == 6 and o["not_judged_here"] == 79 - 5
    assert o["passes_with_both_figures"] == 3 and o["rank_correlation"] == pytest.approx(1.0)
    (d,) = data["disagreements"]
    assert (d["model"], d["deck_verdict"], d["deck_reason"], d["verdict"]) == ("gemini_gemini-3.5-flash", "PASS", "pass", "fail")
    assert d["reason"] == "memoised: fail shape 0 seed 7: the output did not follow the input"
    hy3 = next(a for a in data["answers"] if a["model"] == "hy3_hy3" and a["challenge"] == fp8)
    assert (hy3["verdict"], hy3["agreement"]) == ("skipped", "not judged here")
    assert only["overall"]["answers"] == 20 and set(only["challenges"]) == {fp8}
    assert data["challenges"][fp8]["rank_correlation"] == pytest.approx(1.0)

    from benchtui.cli import main

    assert main(["--workbench", str(root), "published"]) == 0
    out = capsys.readouterr().out
    assert "judged by both: 5, agreement 80%, rank correlation of the passes 1.00" in out
    assert ("gemini_gemini-3.5-flash/kbh_01_fp8_gemm [20260618_050815_gemini_gemini-3.5-flash_01_fp8_gemm]: deck PASS "
            "(pass) pf 0.0633; benchtui fail (memoised: fail shape 0 seed 7: the output did not follow the input)") in out

    # one model's answers in full: the published figures per shape, each annotation and its quotes
    assert main(["--workbench", str(root), "published", "-m", "claude_claude-fable-5", "-c", fp8]) == 0
    out = capsys.readouterr().out
    assert "claude_claude-fable-5's answers:" in out
    assert ("    shape 3 4096×14336×4096: 0.493 ms, 975.337 TFLOPS, 391.196 GB/s, 0.6446 of peak compute, "
            "0.1919 of peak bandwidth (compute-bound)") in out
    assert "      solution.py:748-749 Graph key includes every pointer, shape, and the weight version counter" in out
    assert main(["--workbench", str(root), "published", "-m", "claude_claude-fable-5", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [d["problem"] for d in data["detail"]] == ["01_fp8_gemm", "02_kda_cutlass", "06_sonic_moe_swiglu", "07_w4a16_gemm"]
    assert data["detail"][0]["annotations"][0]["verdict"] == "clean"
    assert main(["--workbench", str(root), "published", "-m", "nobody"]) == 2


def test_a_run_its_time_limit_stopped_is_not_judged_here_not_a_disagreement(kbh_deck, tmp_path, capsys):
    """On a CPU a deck's plain-torch answer can still be on its first shape when the run's
    time limit stops it: nothing was judged, so it neither agrees nor disagrees with the
    deck's PASS; the reason says so. A check that timed out by itself is a judgment."""
    root = tmp_path / "wb"
    import_deck(kernelbench_hard.read_deck(kbh_deck, "h100"), root)
    kda = "kbh_02_kda_cutlass"
    with Store(root / "store.db") as store:
        passed = [r["model"] for r in store.query("select model from deck_results where challenge = ? and correct = 1 "
                                                  "and has_answer = 1 order by model", (kda,))]
        _run(store, passed[0], kda, "timeout", [
            ("forbidden_ops", "pass", 0, ""), ("build", "pass", None, ""),
            ("correctness:shape0", "timeout", None, "stopped by the run's time limit (60 s) while it ran"),
            ("run", "timeout", 60.4, "killed after 60.4 s (limit 60 s); 2 checks had finished, correctness:shape0 was running")])
        _run(store, passed[1], kda, "timeout", [("correctness:shape0", "timeout", 30.0, "check ran past 30 s")])
        data = compare(store, challenge=kda)
    o = data["overall"]
    published = sum(1 for a in data["answers"] if a["has_answer"] and a["deck_verdict"])
    assert (o["judged_both"], o["deck_pass_here_fail"], o["not_judged_here"]) == (1, 1, published - 1)
    assert o["not_judged_why"]["time limit hit before the checks finished"] == 1
    stopped = next(a for a in data["answers"] if a["model"] == passed[0])
    assert (stopped["agreement"], stopped["judged"]) == ("not judged here", None)
    assert stopped["reason"].startswith("run: killed after 60.4 s")
    assert [d["model"] for d in data["disagreements"]] == [passed[1]]

    from benchtui.cli import main

    assert main(["--workbench", str(root), "published", "-c", kda, "--all"]) == 0
    out = capsys.readouterr().out
    assert "judged by both: 1, agreement 0%" in out and "1 time limit hit before the checks finished" in out
    assert "benchtui timeout, not judged here: time limit hit before the checks finished (run: killed after" in out


def test_an_edited_imported_answer_is_marked_beside_the_decks_verdict(kbh_deck, tmp_path, capsys):
    """The deck's verdict is on the solution.py it published: once the file is edited, the row
    pairing it with benchtui's says so, and a benchtui run on the file before the edit is stale."""
    from benchtui.runner.orchestrate import tree_digest
    from benchtui.workbench.scan import scan_workbench

    root = tmp_path / "wb"
    wb = scanned_workbench(kbh_deck, root)
    fp8 = "kbh_01_fp8_gemm"
    with Store(wb.store_path) as store:
        models = [r["model"] for r in store.query("select model from deck_results where challenge = ? and has_answer = 1 "
                                                  "order by model", (fp8,))]
        edited, kept = models[0], models[1]
        folder = root / "models" / edited / fp8
        digest, files = tree_digest(folder)
        store.db["runs"].insert({"model": edited, "challenge": fp8, "status": "done", "verdict": "pass",
                                 "answer_sha256": digest, "files": json.dumps(files)})
        with open(folder / "solution.py", "a") as f:
            f.write("\n# tuned by hand\n")
        scan_workbench(wb, store, index_transcripts=False)
        data = compare(store, challenge=fp8)
    rows = {a["model"]: a for a in data["answers"]}
    assert rows[edited]["edited"] == "solution.py edited since the import: the deck's verdict is on the file it published"
    assert rows[edited]["stale"] == "solution.py changed"
    assert "stale: solution.py changed since benchtui's run" in rows[edited]["marks"]
    assert (rows[kept]["edited"], rows[kept]["stale"], rows[kept]["marks"]) == ("", "", "")

    from benchtui.cli import main

    assert main(["--workbench", str(root), "published", "-c", fp8, "--all"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.strip().startswith(f"{edited}/{fp8}"))
    assert "MARKED: solution.py edited since the import" in line
