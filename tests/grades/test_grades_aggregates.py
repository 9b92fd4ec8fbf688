"""Per-model and per-challenge aggregates and head-to-head records, checked
by hand against the demo judge grades in models/JUDGES.md."""
from pathlib import Path

import pytest
from benchtui.grading.aggregates import current_verdicts, head_to_head_records, leaderboard
from benchtui.grading.grades import set_grade
from benchtui.grading.judge_import import import_markdown

JUDGES = Path(__file__).resolve().parents[2] / "models" / "JUDGES.md"


@pytest.fixture
def judged(store):
    result = import_markdown(store, JUDGES)
    assert result.unmapped == [] and result.problems == []
    return store


def test_current_verdict_is_the_latest_finished_run(store):
    verdicts = current_verdicts(store)
    assert verdicts[("demo-hasty", "beam_search")] == "fail"
    assert verdicts[("demo-careful", "kv")] == "pass"
    assert ("demo-careful", "flash_attention") not in verdicts


def test_model_summaries(judged):
    lb = leaderboard(judged, grader="DeepSeek V4 Pro")
    s = {m.model: m for m in lb.model_summaries}
    assert lb.models == ["demo-careful", "demo-hasty", "demo-quitter"]
    careful, hasty, quitter = s["demo-careful"], s["demo-hasty"], s["demo-quitter"]
    assert (careful.mean_points, careful.band, careful.rank) == (3.45, "A-/B+", 1)
    assert (careful.best, careful.best_letter, careful.worst, careful.worst_letter) == (
        "backwards", "A", "beam_search", "B")
    assert (careful.attempted, careful.graded, careful.passed, careful.verified, careful.pass_rate) == (6, 6, 4, 4, 1.0)
    assert (hasty.mean_points, hasty.band) == (3.05, "B+/B")
    assert (hasty.attempted, hasty.graded, hasty.passed, hasty.verified, hasty.pass_rate) == (7, 6, 1, 4, 0.25)
    assert (round(quitter.mean_points, 3), quitter.band, quitter.worst) == (1.667, "C-", "fuse")
    assert (quitter.attempted, quitter.pass_rate) == (3, 0.0)


def test_head_to_head_records(judged):
    lb = leaderboard(judged, grader="DeepSeek V4 Pro")
    records = {(h.model_a, h.model_b): h for h in lb.head_to_head}
    ch = records[("demo-careful", "demo-hasty")]
    assert (ch.wins, ch.losses, ch.ties, ch.text) == (4, 1, 1, "leads 4-1-1")
    assert records[("demo-careful", "demo-quitter")].text == "leads 3-0-0"
    assert records[("demo-hasty", "demo-quitter")].record == "3-0-0"
    assert len(records) == 3


def test_head_to_head_from_either_side_and_level():
    class G:  # only points matter here
        def __init__(self, p):
            self.points = p
    matrix = {("x", "a"): G(3.0), ("y", "a"): G(4.0), ("x", "b"): G(2.0), ("y", "b"): G(1.0),
              ("x", "c"): G(2.0), ("y", "c"): G(2.0), ("x", "d"): G(4.0)}
    [h] = head_to_head_records(["x", "y"], ["a", "b", "c", "d"], matrix)
    assert (h.wins, h.losses, h.ties, h.challenges, h.text) == (1, 1, 1, ["a", "b", "c"], "level 1-1-1")
    [h] = head_to_head_records(["y", "x"], ["a"], matrix)
    assert h.text == "leads 1-0-0"


def test_challenge_winners_share_ties(judged):
    lb = leaderboard(judged, grader="DeepSeek V4 Pro")
    c = {x.challenge: x for x in lb.challenge_summaries}
    assert c["kv"].winners == ["demo-careful", "demo-hasty"]
    assert c["beam_search"].winners == ["demo-hasty"] and c["beam_search"].best_letter == "A-"
    assert c["dflash_verify"].winners == [] and c["dflash_verify"].graded == 0
    assert ("demo-hasty", "beam_search") in lb.best_cells and ("demo-careful", "beam_search") not in lb.best_cells


def test_a_person_grade_changes_the_default_leaderboard(judged):
    set_grade(judged, "demo-hasty", "beam_search", "F", grader="ana")
    lb = leaderboard(judged)
    assert lb.matrix[("demo-hasty", "beam_search")].grader == "ana"
    assert lb.challenge_summaries[3].winners == ["demo-careful"]


def test_a_checkpoint_can_stop_the_leaderboard_anywhere_and_changes_nothing_else(judged):
    """The dashboard stops computing a board nobody will see (its screen was left)
    by raising at a checkpoint; without one raising, the board is the same."""
    calls = []
    board = leaderboard(judged, checkpoint=lambda: calls.append(1))
    assert board.to_dict() == leaderboard(judged).to_dict()
    assert len(calls) >= 5  # grades read, names, summaries, winners, head to head

    class Stop(Exception):
        pass

    for n in range(len(calls)):
        seen = []

        def stop_after_n():
            seen.append(1)  # noqa: B023 - called at once, within this iteration
            if len(seen) > n:  # noqa: B023 - called at once, within this iteration
                raise Stop

        with pytest.raises(Stop):
            leaderboard(judged, checkpoint=stop_after_n)
        assert len(seen) == n + 1  # stopped at that checkpoint, not later


def test_grades_are_read_between_checkpoints_of_2000(store):
    from benchtui.grading.grades import OVERALL, current_grades

    store.conn.executemany(
        "insert into grades (model, challenge, dimension, letter, points, created_at) values (?, ?, ?, 'B', 3.0, 't')",
        [(f"m{i % 50}", f"c{i // 50}", OVERALL) for i in range(4500)])
    calls = []
    grades = current_grades(store, checkpoint=lambda: calls.append(len(calls)))
    assert len(grades) == 4500 and len(calls) == 3  # 2,000 + 2,000 + 500
    assert grades == current_grades(store)


def _ran(store, model, challenge, verdict, message="", checks=()):
    run_id = store.db["runs"].insert({"model": model, "challenge": challenge, "status": "done", "verdict": verdict,
                                      "message": message}).last_pk
    for name, v, msg in checks:
        store.db["checks"].insert({"run_id": run_id, "name": name, "verdict": v, "message": msg})


def test_every_pass_rate_says_what_it_is_over(store):
    """A run that judged nothing (skipped for want of a GPU, stopped by its time limit before
    its checks finished) is no miss: the rate is over what was judged, and says so."""
    gpu = "build_library: needs an NVIDIA GPU: this run's backend is cpu, not cuda"
    _ran(store, "demo-careful", "flash_attention", "skipped", gpu)
    _ran(store, "demo-careful", "ternary_training", "skipped", gpu)
    # every answer of demo-quitter judged nothing: no rate, not 0 of 3
    for challenge in ("backwards", "fuse"):
        _ran(store, "demo-quitter", challenge, "skipped", gpu)
    _ran(store, "demo-quitter", "kv", "timeout", "killed after 60.2 s", [
        ("decode", "timeout", "stopped by the run's time limit"), ("run", "timeout", "killed after 60.2 s (limit 60 s)")])
    # a check that ran past its own limit is a judgment: a miss
    _ran(store, "demo-hasty", "fuse", "timeout", "check ran past 30 s", [("fuse", "timeout", "check ran past 30 s")])
    s = {m.model: m for m in leaderboard(store).model_summaries}
    careful, hasty, quitter = s["demo-careful"], s["demo-hasty"], s["demo-quitter"]
    assert (careful.passed, careful.verified, careful.pass_rate) == (4, 4, 1.0)
    assert careful.over == "4 of 4 judged; 2 skipped: no GPU"
    assert (hasty.passed, hasty.verified, hasty.over) == (1, 5, "1 of 5 judged")
    assert (quitter.verified, quitter.pass_rate) == (0, None)
    assert quitter.over == "0 of 0 judged; 2 skipped: no GPU; 1 time limit hit before the checks finished"
    kv = next(c for c in leaderboard(store).challenge_summaries if c.challenge == "kv")
    assert kv.over == "1 of 2 judged; 1 time limit hit before the checks finished"

    from benchtui.grading.exports import markdown

    text = markdown(store)
    assert "| 100% (4 of 4 judged; 2 skipped: no GPU) |" in text
    assert "| — (0 of 0 judged; 2 skipped: no GPU; 1 time limit hit before the checks finished) |" in text

    from benchtui.tui.screens.leaderboard import rankings_table
    from rich.console import Console

    console = Console(width=120, record=True)
    console.print(rankings_table(leaderboard(store), width=120))
    shown = console.export_text()
    quitter_row = next(line for line in shown.splitlines() if "demo-quitter" in line and "│" in line)
    assert "0/" not in quitter_row and "—" in quitter_row
    assert "not judged: demo-careful: 2 skipped: no GPU" in " ".join(shown.split())
