"""`benchtui audit`: operators on a small file, and a planted
challenge whose weak suite is reported weak and strong suite strong, with
equivalence detection, the cache and an adapter that follows its mutants."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from benchtui.audit.core import REFERENCE, AuditOptions, Auditor
from benchtui.audit.mutate import mutants_of
from benchtui.audit.report import challenge_reports, mark
from benchtui.cli import main
from benchtui.runner.orchestrate import run_answers
from benchtui.store.database import Store
from benchtui.workbench.layout import find_workbench
from benchtui.workbench.scan import scan_workbench

SMALL = '''"""Docstring: 1 < 2 stays."""


def total(xs, k):
    # a comment: 3 > 4 stays
    s = 0
    for x in xs:
        if x > k and x != 99:
            s += x * 2
    print("debug", 1 + 1)
    return s


def test_total():
    assert total([5], 1) == 10


if __name__ == "__main__":
    total([1, 2, 3], 0)
'''


def test_operators_produce_the_expected_mutants():
    got = {(m.line, m.operator, m.description) for m in mutants_of(SMALL, "small.py")}
    assert got == {
        (6, "statement", "remove the statement"), (6, "constant", "0 -> 1"),
        (8, "boolean", "and -> or"), (8, "comparison", "> -> >="), (8, "comparison", "!= -> =="),
        (8, "constant", "99 -> 100"), (8, "constant", "99 -> 98"),
        (9, "statement", "remove the statement"), (9, "arithmetic", "+= -> -="), (9, "arithmetic", "* -> /"),
        (9, "constant", "2 -> 3"), (9, "constant", "2 -> 1"),
        (11, "return", "return None instead"),
        # k pinned to the values the file's own calls pass it (the test's 1, the main guard's 0)
        (8, "parameter_constant", "k -> 1"), (8, "parameter_constant", "k -> 0"),
    }  # nothing in the docstring, comment, print, test function or main guard


def test_each_mutant_changes_one_line_and_compiles():
    for m in mutants_of(SMALL, "small.py"):
        compile(m.source, "small.py", "exec")
        changed = [ln for ln in m.diff.splitlines() if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]
        assert len(changed) == 2 and changed[0].startswith("-") and changed[1].startswith("+"), m.diff
        assert SMALL.splitlines()[m.line - 1] == changed[0][1:]


def test_other_operators_range_slices_arguments_and_reached_lines():
    src = "import numpy as np\n\ndef f(a, n):\n    for i in range(n):\n        a = np.sum(a[1:n], axis=0)\n    return np.clip(a, 0, n)\n"
    got = {(m.line, m.description) for m in mutants_of(src, "f.py")}
    assert {(4, "range stop + 1"), (4, "range stop - 1"), (5, "slice upper bound + 1"), (5, "slice upper bound - 1"),
            (5, "drop argument axis="), (5, "0 -> 1"),
            (6, "drop the last argument"), (6, "swap the first two arguments")} <= got
    assert {m.line for m in mutants_of(src, "f.py", lines={6})} == {6}  # only the lines the checks reached


# -- a planted challenge, run for real in the sandbox ---------------------------------------

ANSWER = '''def total(xs, k):
    s = 0
    for x in xs:
        if x > k:
            s += x
    return s
'''

CONFORMANCE = '''import numpy as np


def run(suite):
    ad = suite.adapter()
    fn = ad.total if ad is not None else suite.bind("total")
    {checks}
'''

STRONG = '''for case in range(4):
        with suite.check(f"random_{case}") as c:
            rng = suite.rng(str(case))
            xs = [int(v) for v in rng.integers(-5, 6, size=12)]
            k = int(rng.integers(-2, 3))
            xs.append(k)
            want = sum(x for x in xs if x > k)
            got = suite.call(fn, xs, k)
            c.expect(got == want, f"total({xs}, {k}) = {got!r}, want {want}")'''

WEAK = '''with suite.check("returns_an_int") as c:
        got = suite.call(fn, [1, 5, 9], 4)
        c.expect(isinstance(got, int), "not an int")'''

TOML = '''id = "toy"
title = "Toy total"
language = "python"
backends = ["cpu"]
[limits]
timeout_s = 60
'''


@pytest.fixture
def toy(tmp_path):

    def make(checks: str, answers: dict[str, dict[str, str]] | None = None, adapter: str | None = None,
             name: str = "wb") -> Path:
        root = tmp_path / name
        ch = root / "challenges" / "toy"
        ch.mkdir(parents=True)
        (ch / "challenge.toml").write_text(TOML)
        (ch / "PROMPT.md").write_text("Write total(xs, k): the sum of the xs above k.\n")
        (ch / "reference.py").write_text(ANSWER)
        (ch / "conformance.py").write_text(CONFORMANCE.format(checks=checks))
        (root / "models").mkdir()
        if adapter:
            (ch / "adapters").mkdir()
            (ch / "adapters" / "keyed.py").write_text(adapter)
        for model, files in (answers or {}).items():
            folder = root / "models" / model / "toy"
            folder.mkdir(parents=True)
            for name, text in files.items():
                (folder / name).write_text(text)
        return root
    return make


def audit(root: Path, **kw):
    wb = find_workbench(str(root), None, Path.cwd())
    events = []
    auditor = Auditor(wb, AuditOptions(jobs=2, **{"challenges": ["toy"], **kw}), on_event=events.append)
    auditor.run()
    with Store(wb.store_path) as store:
        return {c["challenge"]: c for c in challenge_reports(store)}, events, auditor


def statuses(report) -> dict[str, str]:
    out = {}
    for a in report["answers"]:
        out.update({s["description"]: "survived" for s in a["survivors"]})
        out.update({s["description"]: "equivalent" for s in a["likely_equivalent"]})
    return out


pytestmark = pytest.mark.sandbox


def test_strong_suite_is_reported_strong_and_weak_suite_weak(toy):
    strong, _, _ = audit(toy(STRONG))
    assert strong["toy"]["score"] == 1.0 and strong["toy"]["killed"] >= 6, strong["toy"]
    weak, _, _ = audit(toy(WEAK, name="weak"))
    assert weak["toy"]["score"] is not None and weak["toy"]["score"] < 0.5, weak["toy"]
    # The weak suite's one input [1, 5, 9], k=4 has no element equal to k: `>` -> `>=` returns the
    # same values there (likely equivalent, not counted); `+=` -> `-=` returns another value and survives.
    got = statuses(weak["toy"])
    assert got["> -> >="] == "equivalent"
    assert got["+= -> -="] == "survived"
    survivor = next(s for a in weak["toy"]["answers"] for s in a["survivors"] if s["description"] == "+= -> -=")
    assert survivor["checks"] == ["returns_an_int"] and "-            s += x" in survivor["diff"]


def test_unchanged_suite_reruns_nothing_and_a_changed_suite_reruns_its_mutants(toy):
    root = toy(WEAK)
    first, _, a1 = audit(root)
    _, events, a2 = audit(root)
    mutants = [e for e in events if e.kind == "mutant"]
    assert mutants and all(e.cached for e in mutants) and a2.reused == a2.total == a1.total
    assert all(e.cached for e in events if e.kind == "baseline")
    conformance = root / "challenges" / "toy" / "conformance.py"
    conformance.write_text(conformance.read_text() + "# changed\n")
    _, events, a3 = audit(root)
    assert a3.reused == 0 and not any(e.cached for e in events if e.kind == "mutant")
    _, events, a4 = audit(root, fresh=True)
    assert a4.reused == 0


def test_a_mark_is_kept_and_counts(toy):
    root = toy(WEAK)
    report, _, _ = audit(root)
    before = report["toy"]
    sha = next(s["mutant_sha256"] for a in before["answers"] for s in a["survivors"] if s["description"] == "+= -> -=")
    wb = find_workbench(str(root), None, Path.cwd())
    with Store(wb.store_path) as store:
        mark(store, REFERENCE, "toy", sha[:10], True, "tester")
    again, _, _ = audit(root)  # a new audit keeps the person's mark
    assert again["toy"]["survived"] == before["survived"] - 1
    assert again["toy"]["equivalent"] == before["equivalent"] + 1
    assert statuses(again["toy"])["+= -> -="] == "equivalent"


def test_adapter_follows_the_mutants_of_a_keyed_answer(toy):
    import hashlib

    mine = ANSWER.replace("def total(xs, k)", "def my_total(values, threshold)").replace("xs", "values").replace(
        " k:", " threshold:")
    key = {"mine.py": hashlib.sha256(mine.encode()).hexdigest()}
    adapter = f"ANSWER_SHA256 = {json.dumps(key)}\nfrom mine import my_total\n\n\ndef total(xs, k):\n    return my_total(xs, k)\n"
    root = toy(STRONG, {"keyed": {"mine.py": mine}}, adapter=adapter)
    wb = find_workbench(str(root), None, Path.cwd())
    with Store(wb.store_path) as store:
        scan_workbench(wb, store, index_transcripts=False)
    [event] = run_answers(wb, [("keyed", "toy")], self_check=False)
    assert event.verdict == "pass"
    report, _, _ = audit(root, models=["keyed"])
    [answer] = report["toy"]["answers"]
    assert answer["status"] == "audited" and answer["mutants"] >= 6 and answer["score"] == 1.0
    with Store(wb.store_path) as store:
        rows = store.query("select file, killed_by, checks from audit_mutants where model = 'keyed'")
    assert rows and {r["file"] for r in rows} == {"mine.py"}
    # killed by the suite's checks through the adapter, never by an unbound or stale adapter
    assert all(r["killed_by"].startswith("random_") for r in rows), rows
    assert not any(c["name"] == "adapter" and c["verdict"] != "info" for r in rows for c in json.loads(r["checks"]))


def test_cli_json_and_export(toy, capsys):
    root = toy(WEAK)
    assert main(["--workbench", str(root), "audit", "-c", "toy", "--jobs", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    [toy_report] = out["challenges"]
    assert toy_report["challenge"] == "toy" and toy_report["score"] < 0.5
    assert main(["--workbench", str(root), "export", "json"]) == 0
    exported = json.loads(capsys.readouterr().out)
    assert exported["audit"][0]["survived"] == toy_report["survived"]
    assert main(["--workbench", str(root), "audit-mark", REFERENCE, "toy", "nope"]) == 2


def test_an_interrupted_audit_resumes_from_its_cache(toy):
    import threading

    root = toy(WEAK)
    wb = find_workbench(str(root), None, Path.cwd())
    cancel = threading.Event()

    def stop_after_two(e):
        if e.kind == "mutant" and e.done >= 2:
            cancel.set()

    first = Auditor(wb, AuditOptions(jobs=1, challenges=["toy"]), on_event=stop_after_two, cancel=cancel)
    first.run()
    assert first.done == 2 < first.total
    with Store(wb.store_path) as store:
        assert store.query("select status from audits order by id desc limit 1")[0]["status"] == "cancelled"
        # the export says how far each answer got: a cancelled audit is never "audited"
        from benchtui.grading.exports import json_data

        answers = [a for c in json_data(store)["audit"] for a in c["answers"]]
        assert answers and all(a["status"] == "interrupted" for a in answers)
        assert any(f"interrupted: 2 of {first.total} mutants run, their outcomes kept" in a["message"] for a in answers)
    events = []
    second = Auditor(wb, AuditOptions(jobs=1, challenges=["toy"]), on_event=events.append)
    second.run()
    cached = [e for e in events if e.kind == "mutant" and e.cached]
    assert second.reused == len(cached) == 2 and second.done == second.total == first.total


def test_values_that_vary_between_two_runs_of_the_original_never_decide_equivalence():
    from benchtui.audit.equivalence import same_values, unstable_positions

    first, second = ["a", "r1", "c"], ["a", "r2", "c"]
    unstable = unstable_positions(first, second)
    assert unstable == [1]
    assert same_values(["a", "r9", "c"], first, unstable)  # differs only where the original varies
    assert not same_values(["a", "r1", "X"], first, unstable)
    assert not same_values(["a", "r1"], first, unstable)
    assert unstable_positions(first, ["a"]) is None and not same_values(first, first, None)


PROBED = '''with suite.probing():  # shapes what the suite injects: not a check
        suite.call(suite.bind("probe_me"), 3)
    ''' + STRONG


def test_lines_reached_only_while_the_harness_probes_get_no_mutants(toy):
    """``Suite.probing``: beam search probes the answer's own model class, then
    replaces it; a mutant there could never be killed, so none is made."""
    probe = "\n\ndef probe_me(n):\n    width = n * 4\n    return width + 1\n"
    root = toy(PROBED, answers={"m": {"total.py": ANSWER + probe}})
    wb = find_workbench(str(root), None, Path.cwd())
    with Store(wb.store_path) as store:
        scan_workbench(wb, store, index_transcripts=False)
    run_answers(wb, [("m", "toy")], jobs=1, self_check=False, seed=3)
    reports, _, _ = audit(root, models=["m"], references=False)
    answer = next(a for a in reports["toy"]["answers"] if a["model"] == "m")
    assert answer["killed"] >= 6 and answer["score"] == 1.0, answer
    with Store(wb.store_path) as store:
        lines = {r["line"] for r in store.query("select line from audit_mutants where model = 'm'")}
    assert lines and max(lines) <= 6, lines  # total() is lines 1-6; probe_me's body (10-11) is not mutated


def test_an_answer_left_out_says_why_and_the_default_is_sixty_mutants(toy, capsys):
    """`audit -m M -c C` on an answer that does not pass used to print "0 answers, 0 mutants",
    exit 0; and the default --mutants was every site (hours on the published benchmark)."""
    from benchtui.cli import parse_args
    from benchtui.store.database import now_iso

    assert parse_args(["audit"]).mutants == 60 and parse_args(["audit", "--mutants", "all"]).mutants is None
    root = toy(WEAK, answers={"hasty": {"total.py": "def total(xs, k):\n    return 0\n"}})
    wb = find_workbench(str(root), None, Path.cwd())
    scan_workbench(wb, Store(wb.store_path))
    with Store(wb.store_path) as store:
        store.db["runs"].insert({"model": "hasty", "challenge": "toy", "status": "done", "verdict": "fail",
                                 "started_at": now_iso()})
    assert main(["--workbench", str(root), "audit", "-m", "hasty", "-c", "toy", "--mutants", "3"]) == 1
    err = capsys.readouterr().err
    assert "not audited: hasty/toy: its latest verdict is fail; only passing answers are audited" in err


def test_the_audit_shows_a_bar_on_a_terminal_and_nothing_under_json(toy):
    from terminal_run import on_a_terminal

    root = toy(WEAK)
    code, out, term = on_a_terminal(["--workbench", str(root), "audit", "-c", "toy", "--jobs", "2", "--fresh"])
    assert code == 0, term
    assert "auditing: (reference)/toy" in term and "6/6" in term, term[-300:]  # what it does, how far
    assert "auditing" not in out and out.startswith("toy: ")
    code, out, term = on_a_terminal(["--workbench", str(root), "audit", "-c", "toy", "--jobs", "2", "--fresh", "--json"])
    assert code == 0 and term == "", term
    assert json.loads(out)["challenges"][0]["challenge"] == "toy"
