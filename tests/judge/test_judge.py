"""`benchtui judge` with a stand-in model: the dry run, the grades it stores and
every view that reads them, the cache, both modes and what the evidence
changes, failures of every kind, Ctrl-C, and the answer folder left alone."""
from __future__ import annotations

import csv
import hashlib
import io
import json
from pathlib import Path

import pytest
from benchtui.cli import main
from benchtui.grading.agreement import suite_conflicts
from benchtui.grading.grades import cell_grades, current_grades
from benchtui.judge import judging
from benchtui.judge.calls import find_model
from benchtui.judge.reply import ReplyError, parse_reply
from benchtui.judge.rubric import BUNDLED_RUBRIC, RubricError, load_rubric
from benchtui.store import judge_sql
from benchtui.store.database import Store
from benchtui.workbench.layout import find_workbench
from judge_stand_in import RateLimitError, graded_reply, slow

FAILING_CELL = ("demo-hasty", "kv")
PASSING_CELL = ("demo-careful", "kv")
HASTY_KV = "kvcache_numpy.py"
COUNTER_EXAMPLE = "append past max_len: expected IndexError, got a silent overwrite at position 0"


def run(root: Path, capsys, *args: str) -> tuple[int, str, str]:
    code = main(["--workbench", str(root), *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def bench(demo_workbench, capsys):
    """The demo, scanned, with the suite's verdicts on two kv answers as runs leave them."""
    assert run(demo_workbench, capsys, "scan")[0] == 0
    store = Store(demo_workbench / "store.db")
    with store.db.conn:
        for (model, challenge), verdict in ((FAILING_CELL, "fail"), (PASSING_CELL, "pass")):
            run_id = store.db["runs"].insert({
                "model": model, "challenge": challenge, "status": "done", "verdict": verdict, "backend": "cpu",
                "started_at": "2026-01-02T00:00:00Z", "finished_at": "2026-01-02T00:00:09Z",
                "self_status": "fail" if verdict == "fail" else "pass",
                "self_exit_code": 1 if verdict == "fail" else 0,
                "coverage": json.dumps([{"id": "bounded_append", "status": verdict, "reason": "", "words": "x"},
                                        {"id": "no_recompute", "status": "not_exercised", "words": "y",
                                         "reason": "a cost per step is a timing figure"}])}).last_pk
            store.db["checks"].insert({"run_id": run_id, "position": 1, "name": "decode_matches_reference",
                                       "verdict": "pass", "message": ""})
            if verdict == "fail":
                store.db["checks"].insert({"run_id": run_id, "position": 2, "name": "append_bounds",
                                           "verdict": "fail", "message": COUNTER_EXAMPLE})
    store.close()
    return demo_workbench


def tree_hash(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file():
            h.update(p.relative_to(root).as_posix().encode() + p.read_bytes())
    return h.hexdigest()


def judge_args(*extra: str) -> list[str]:
    return ["judge", "-J", "stand-in", "-c", "kv", *extra]


# -- the reply and the rubric -------------------------------------------------------
def test_a_reply_is_read_leniently_but_never_guessed():
    rubric = load_rubric()
    reply = parse_reply("Here you go:\n" + graded_reply("B+") + "\nthanks", rubric)
    assert reply.grades["overall"][0].letter == "B+" and len(reply.grades) == 9 and reply.problems == []
    scored = parse_reply(json.dumps({"overall": 88, "correctness": {"score": 95, "reasoning": "ok"},
                                     "speed": "A"}), rubric)
    assert scored.grades["overall"][0].letter == "B+" and scored.grades["correctness"][0].score == 95
    assert any("speed" in p for p in scored.problems) and any(p.startswith("not graded:") for p in scored.problems)
    for text, status in [("", "unparseable"), ("B+ overall, nice work", "unparseable"),
                         (json.dumps({"grades": {"correctness": "A"}}), "unparseable"),
                         ('{"grades": {"overall": "excellent"}}', "unparseable"),
                         ("I can't help with grading this submission.", "refused")]:
        with pytest.raises(ReplyError) as caught:
            parse_reply(text, rubric)
        assert caught.value.status == status, text


def test_the_bundled_rubric_holds_the_seed_dimensions_and_a_changed_one_is_another_grader(tmp_path):
    rubric = load_rubric()
    assert rubric.path == BUNDLED_RUBRIC and rubric.dimension_ids == (
        "correctness", "completeness", "testing", "analysis_depth", "algorithmic_sophistication",
        "engineering_rigor", "code_quality", "gpu_mapping", "overall")
    mine = tmp_path / "rubric.md"
    mine.write_text(rubric.text.replace("strict senior reviewer", "lenient reviewer"), encoding="utf-8")
    changed = load_rubric(mine)
    assert changed.sha256 != rubric.sha256
    assert judging.grader_name("m", "blind", changed) != judging.grader_name("m", "blind", rubric)
    mine.write_text(rubric.text.replace("(gpu_mapping)", "(gpu_speed)"), encoding="utf-8")
    with pytest.raises(RubricError, match="gpu_speed.*not a benchtui dimension"):
        load_rubric(mine)
    mine.write_text(rubric.text.split("## Overall")[0], encoding="utf-8")
    with pytest.raises(RubricError, match="no '## Overall"):
        load_rubric(mine)


# -- the dry run ---------------------------------------------------------------------
def test_the_dry_run_lists_the_calls_and_their_tokens_and_sends_nothing(bench, capsys, stand_in):
    code, out, _ = run(bench, capsys, *judge_args("--dry-run"))
    assert code == 0 and stand_in.sent == []
    assert "demo-hasty/kv" in out and "demo-careful/kv" in out and "input tokens" in out
    assert "dry run: 2 call(s) to send (0 cached)" in out and "nothing sent" in out
    assert "- opencode-export.json" in out and "left out, a session transcript" in out  # a transcript, said
    assert "no verdict to give as evidence" not in out  # both kv answers were run
    code, out, _ = run(bench, capsys, "judge", "-J", "stand-in", "-c", "backwards", "--dry-run", "--with-evidence")
    assert code == 0 and "answer(s) have no verdict to give as evidence (demo-careful/backwards" in out
    code, out, _ = run(bench, capsys, *judge_args("--dry-run", "--json"))
    data = json.loads(out)
    assert data["estimate"]["to_send"] == 2 and data["estimate"]["input_tokens"] == sum(
        c["input_tokens"] for c in data["calls"]) > 1000
    assert stand_in.sent == []
    with Store(bench / "store.db") as store:
        assert judge_sql.calls_of(store) == [] and current_grades(store, dimension=None) == []


# -- a judging, and every view of its grades -------------------------------------------
def test_judge_stores_grades_every_view_shows(bench, capsys, stand_in):
    before = tree_hash(bench / "models")
    code, out, err = run(bench, capsys, *judge_args("--blind"))
    assert code == 0, err
    assert len(stand_in.sent) == 2 and "graded" in out
    grader = f"stand-in:blind:{load_rubric().short}"
    assert f"{grader}: 2 graded" in out
    assert tree_hash(bench / "models") == before  # nothing of the answer folders written
    with Store(bench / "store.db") as store:
        rows = current_grades(store, grader=grader, dimension=None)
        assert len(rows) == 18 and {(g.judge_model, g.rubric_sha, g.judge_mode, g.grader_kind) for g in rows} == {
            ("stand-in", load_rubric().sha256, "blind", "judge")}
        assert all(g.note for g in rows)  # the reasoning is the note
        assert cell_grades(store)[FAILING_CELL].grader == grader  # the matrix shows it
    code, out, _ = run(bench, capsys, "grades", "history", *FAILING_CELL)
    assert grader in out and "current, shown" in out
    code, out, _ = run(bench, capsys, "export", "csv")
    exported = [r for r in csv.DictReader(io.StringIO(out)) if r["kind"] == "grade"]
    assert {(r["judge_model"], r["judge_mode"], r["rubric_sha"]) for r in exported} == {
        ("stand-in", "blind", load_rubric().sha256)}
    code, out, _ = run(bench, capsys, "export", "json")
    exported = json.loads(out)
    assert {g["grader"] for g in exported["grades"]} == {grader}
    assert exported["leaderboard"]["matrix"] == {"demo-careful/kv": "A", "demo-hasty/kv": "A"}  # the leaderboard's
    code, out, _ = run(bench, capsys, "export", "markdown")
    assert "| KV-Cache | **A** | **A** | — |" in out.splitlines()  # the grade matrix: careful, hasty, quitter


def test_a_rerun_costs_nothing_and_an_edited_answer_is_judged_again(bench, capsys, stand_in):
    assert run(bench, capsys, *judge_args("--blind"))[0] == 0
    assert len(stand_in.sent) == 2
    code, out, _ = run(bench, capsys, *judge_args("--blind"))
    assert code == 0 and len(stand_in.sent) == 2 and out.count("cached ") == 2
    code, out, _ = run(bench, capsys, *judge_args("--blind", "--dry-run"))
    assert "dry run: 0 call(s) to send (2 cached)" in out
    source = bench / "models" / "demo-hasty" / "kv" / HASTY_KV
    source.write_text(source.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    code, out, _ = run(bench, capsys, *judge_args("--blind"))
    assert code == 0 and len(stand_in.sent) == 3 and "edited" in stand_in.sent[-1][1]
    assert "graded       demo-hasty/kv" in out and out.count("cached ") == 1
    # another mode or rubric is another key
    code, out, _ = run(bench, capsys, *judge_args("--with-evidence", "-m", "demo-careful"))
    assert code == 0 and len(stand_in.sent) == 4


# -- the two modes, and what the evidence changes ---------------------------------------
def test_blind_sees_the_answer_only_and_evidence_sees_the_suite(bench, capsys, stand_in):
    assert run(bench, capsys, *judge_args("--blind", "-m", "demo-hasty"))[0] == 0
    system, body = stand_in.sent[-1]
    assert "## kvcache_numpy.py" in body and "hidden test suite" not in body and COUNTER_EXAMPLE not in body
    assert "nothing tells you whether it runs" in system
    assert run(bench, capsys, *judge_args("--with-evidence", "-m", "demo-hasty"))[0] == 0
    system, body = stand_in.sent[-1]
    assert "Verdict: fail" in body and COUNTER_EXAMPLE in body and "append_bounds: fail" in body
    assert "self-check" in body and "fail (exit code 1)" in body
    assert "What the verdict does not cover" in body and "code quality" in body
    assert "requirement no_recompute: not_exercised (a cost per step is a timing figure)" in body
    assert "requirement bounded_append" not in body  # a failed requirement is covered: its checks say why
    assert "Verdict: fail: 0 of 2 requirements" in body
    assert "counter-example" in system


def test_grades_agreement_shows_a_range_on_failing_answers_per_judge_and_mode(bench, capsys, stand_in):
    assert run(bench, capsys, *judge_args("--blind"))[0] == 0
    assert run(bench, capsys, *judge_args("--with-evidence"))[0] == 0
    with Store(bench / "store.db") as store:
        rows, effects = suite_conflicts(store)
    by_mode = {r.mode: r for r in rows}
    # blind: A on both judged answers, one of which fails; with evidence the failing one gets a C
    assert (by_mode["blind"].graded, by_mode["blind"].a_range, by_mode["blind"].a_on_failing) == (2, 2, 1)
    assert (by_mode["evidence"].a_range, by_mode["evidence"].a_on_failing) == (1, 0)
    assert [(e.failing_both, e.a_blind, e.a_evidence) for e in effects] == [(1, 1, 0)]
    code, out, _ = run(bench, capsys, "grades", "agreement")
    assert code == 0 and "1 of 2 (50%) of its A-range grades" in out
    assert "A-range blind 1, with evidence 0" in out
    code, out, _ = run(bench, capsys, "grades", "agreement", "--json")
    assert {j["mode"]: j["share_of_failing"] for j in json.loads(out)["judges"]} == {"blind": 1.0, "evidence": 0.0}


# -- failures -------------------------------------------------------------------------
def test_an_unparseable_reply_or_a_refusal_is_stored_raw_and_makes_no_grade(bench, capsys, stand_in):
    stand_in.reply = lambda body, system: ("I cannot help with that." if "demo-hasty" in body
                                           else "Overall this is a solid B+.")
    code, out, _ = run(bench, capsys, *judge_args("--blind"))
    assert code == 1 and out.count("\nno grade ") + out.startswith("no grade") == 2 and "the judge declined" in out
    with Store(bench / "store.db") as store:
        calls = judge_sql.calls_of(store)
        assert sorted(c["status"] for c in calls) == ["refused", "unparseable"]
        assert any(c["reply"] == "Overall this is a solid B+." for c in calls)
        assert current_grades(store, dimension=None) == []
    # an unparseable reply is not the cache: asked again
    stand_in.reply = lambda body, system: graded_reply("B")
    assert run(bench, capsys, *judge_args("--blind"))[0] == 0 and len(stand_in.sent) == 4


def test_a_timeout_is_one_line_and_the_others_are_kept(bench, capsys, stand_in):
    stand_in.reply = lambda body, system: slow(3)(body, system) if "demo-hasty" in body else graded_reply("B")
    code, out, _ = run(bench, capsys, *judge_args("--blind", "--timeout", "0.5"))
    assert code == 1
    failed = [line for line in out.splitlines() if line.startswith("failed")]
    assert failed == ["failed       demo-hasty/kv: timed out: no reply within 0.5 s"]
    with Store(bench / "store.db") as store:
        assert {(g.model, g.challenge) for g in current_grades(store)} == {("demo-careful", "kv")}
        assert [c["status"] for c in judge_sql.calls_of(store, *FAILING_CELL)] == ["error"]


def test_a_quota_error_is_one_line_and_stops_the_calls(bench, capsys, stand_in):
    def quota(body, system):
        raise RateLimitError("Error code: 429 - You exceeded your current quota\nplease check your plan")
    stand_in.reply = quota
    code, out, err = run(bench, capsys, *judge_args("--blind", "--jobs", "1"))
    assert code == 1 and len(stand_in.sent) == 1
    assert "failed       demo-careful/kv: quota or rate limit: RateLimitError: Error code: 429 - You exceeded " \
           "your current quota" in out and "please check" not in out
    assert "not asked    1 call(s)" in out and "Traceback" not in out + err


def test_a_missing_key_is_one_line_before_anything_is_sent(bench, capsys, stand_in):
    code, out, err = run(bench, capsys, *judge_args("-J", "stand-in-keyed"))
    assert code == 1 and stand_in.sent == [] and len(err.strip().splitlines()) == 1
    assert "No key found - add one using 'llm keys set stand-in-provider'" in err
    code, out, err = run(bench, capsys, *judge_args("-J", "no-such-model"))
    assert code == 1 and "unknown judge model 'no-such-model'" in err and len(err.strip().splitlines()) == 1


def test_ctrl_c_keeps_the_calls_that_finished(bench, stand_in):
    wb = find_workbench(str(bench), None, bench)
    with Store(bench / "store.db") as store:
        plan = judging.plan(store, wb, [("demo-careful", "kv"), ("demo-hasty", "kv"), ("demo-quitter", "kv")],
                            judge_model="stand-in", mode="blind", rubric=load_rubric())

        def interrupt(done, total, cell):
            raise KeyboardInterrupt

        result = judging.Result()
        with pytest.raises(KeyboardInterrupt):
            judging.judge(store, plan, find_model("stand-in"), jobs=1, on_progress=interrupt, result=result)
        assert len(result.graded) == 1 and len(stand_in.sent) == 1
        assert {(g.model, g.challenge) for g in current_grades(store)} == {("demo-careful", "kv")}


def test_doctor_says_which_judge_models_are_usable(stand_in, capsys):
    from benchtui.commands.doctor import _judge_line, judge_models

    found = judge_models()
    usable = {m["id"]: m["usable"] for m in found["models"]}
    assert usable["stand-in"] is True and usable["stand-in-keyed"] is False
    line = _judge_line(found)
    assert line.startswith("ok judge") and "stand-in" in line and "stand-in-provider" in line
    assert _judge_line({"llm": None}).startswith("-- judge    llm not installed")


def test_a_store_of_the_previous_release_gains_the_judge_columns_and_keeps_its_grades(tmp_path, capsys):
    import gzip
    import shutil

    fixture = Path(__file__).resolve().parents[1] / "foundation" / "data" / "store-0.1.0.db.gz"
    path = tmp_path / "store.db"
    with gzip.open(fixture) as src, path.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    with Store(path) as store:
        (grade,) = current_grades(store, model="demo-careful", dimension=None)
        assert grade.letter == "B" and (grade.judge_model, grade.rubric_sha, grade.judge_mode) == (None, None, None)
        assert judge_sql.calls_of(store) == []
        assert suite_conflicts(store) == ([], [])


def test_without_the_extra_the_judge_says_how_to_install_it_in_one_line(bench, capsys, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "llm", None)  # `import llm` raises ImportError, as where it is absent
    code, out, err = run(bench, capsys, "judge", "--dry-run")
    assert code == 1 and 'pip install "benchtui[judge]"' in err and len(err.strip().splitlines()) == 1
    from benchtui.commands.doctor import _judge_line, judge_models

    assert judge_models()["llm"] is None and "llm not installed" in _judge_line(judge_models())


def test_a_judging_shows_its_progress_on_a_terminal_and_nothing_under_json(bench, monkeypatch, tmp_path):
    import sys

    from terminal_run import on_a_terminal

    monkeypatch.setenv("LLM_USER_PATH", str(tmp_path / "llm-home"))
    monkeypatch.setenv("BENCHTUI_STAND_IN_DELAY", "0.3")
    child = [sys.executable, str(Path(__file__).with_name("with_stand_in.py"))]
    code, out, term = on_a_terminal(["--workbench", str(bench), *judge_args("--blind", "--jobs", "1")], program=child)
    assert code == 0, term
    assert "judging with stand-in: demo-" in term and "/2" in term, term[-300:]
    assert "2 graded" in out and "judging with" not in out
    code, out, term = on_a_terminal(["--workbench", str(bench), *judge_args("--with-evidence", "--json")],
                                    program=child)
    assert code == 0 and term == "", term
    assert len(json.loads(out)["graded"]) == 2


def test_ctrl_c_on_the_command_keeps_what_finished_and_says_so(bench, monkeypatch, tmp_path):
    import signal
    import subprocess
    import sys
    import time

    monkeypatch.setenv("LLM_USER_PATH", str(tmp_path / "llm-home"))
    monkeypatch.setenv("BENCHTUI_STAND_IN_DELAY", "1.5")
    child = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("with_stand_in.py")), "--workbench", str(bench),
         "judge", "-J", "stand-in", "--blind", "--jobs", "1", "-c", "kv", "-c", "backwards"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        time.sleep(0.2)
        if not (bench / "store.db").exists():
            continue
        with Store(bench / "store.db") as store:
            if "judge_calls" in store.table_names() and judge_sql.calls_of(store):
                break
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 130, err
    assert "call(s) finished and are stored; the rest were not" in err and "Traceback" not in err
    with Store(bench / "store.db") as store:
        calls = judge_sql.calls_of(store)
        graded = {(g.model, g.challenge) for g in current_grades(store)}
    assert 1 <= len(calls) < 5 and all(c["status"] == "graded" for c in calls)
    assert graded == {(c["model"], c["challenge"]) for c in calls}  # what finished kept, grades and all


def test_calls_run_at_most_jobs_at_once_and_each_outcome_comes_back_once():
    import threading
    import time

    from benchtui.judge.calls import Answered, run_calls

    running, most, lock = 0, 0, threading.Lock()

    def job() -> Answered:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        time.sleep(0.05)
        with lock:
            running -= 1
        return Answered("{}", 1, 1)

    seen = []
    assert run_calls([job] * 7, limit=2, timeout=10, on_done=lambda o: seen.append(o.index)) == 0
    assert most == 2 and sorted(seen) == list(range(7))
