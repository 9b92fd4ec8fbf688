"""A hack benchtui measured is said where people look: an answer that memoises on a
sample of its input's contents passes every check (it is right on every input), and
its flag (the deck's timing loop, which repeats its inputs, far faster than the
trusted clock on fresh ones) shows in `run`, `list`, `results`, the matrix and the
published screen, counted apart from the verdict; `published` compares the flags
with the deck's annotations."""
from __future__ import annotations

import asyncio
import contextlib
import io
import json
from pathlib import Path

import deck_kit as K
import pytest
from benchtui.cli import main
from benchtui.decks import kernelbench_hard
from benchtui.decks.importer import import_deck
from benchtui.records.flags import DECK_SEEDS_ONLY, FORBIDDEN, STALE, TIMING, hack_flags
from benchtui.tui.widgets.virtual_table import VirtualTable
from benchtui.tui.widgets.wrapped_text import WrappedText
from benchtui.workbench.layout import find_workbench
from deck_kit import cli
from textual.widgets import DataTable, Static

from tests.tui.settling import settle


def check(name, verdict="pass", value=None, **details):
    return {"name": name, "verdict": verdict, "value": json.dumps(value), "details": json.dumps(details)}


def test_each_flag_from_the_checks_that_show_it():
    timed = [check("time:shape0", "info", trusted_ms=20.0, flagged=True),
             check("time:shape1", "info", trusted_ms=20.0, flagged=True)]
    assert hack_flags(timed) == [TIMING]
    # one shape of two flagged is a noisy figure, not a signal
    assert hack_flags([timed[0], check("time:shape1", "info", trusted_ms=20.0, flagged=False)]) == []
    assert hack_flags([check("secret_seeds:shape0", "fail", requirement="fresh_result")]) == [STALE]
    assert hack_flags([check("deck_seeds:shape0"), check("secret_seeds:shape0", "fail", requirement="output_values"),
                       check("deck_rule", "info", "pass")]) == [DECK_SEEDS_ONLY]
    # the deck's rule failing too: wrong, not right on the deck's seeds alone
    assert hack_flags([check("secret_seeds:shape0", "fail"), check("deck_rule", "info", "fail")]) == []
    assert hack_flags([check("forbidden_ops", "forbidden")]) == [FORBIDDEN]
    assert hack_flags([check("fuse::timing", "info", flagged=["a tail faster than its median"])]) == [TIMING]


@pytest.fixture(scope="module")
def planted(tmp_path_factory) -> tuple[Path, int, str]:
    """The hand-built deck with its annotated reward_hack run replaced by the caching answer,
    imported and that answer run (sandboxed, on the CPU): (workbench, `run`'s exit code, its output)."""
    pytest.importorskip("torch")
    base = tmp_path_factory.mktemp("planted")
    deck = K.hard_deck(base / "deck")
    K.plant(deck, K.HACK_RUN, K.CACHING.format(k=2))
    root = base / "wb"
    import_deck(kernelbench_hard.read_deck(deck, "h100"), root)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["--workbench", str(root), "run", "-m", "codex_gpt-9", "-c", "kbh_01_tiny_double",
                     "--backend", "cpu", "--no-self-check"])
    return root, code, out.getvalue()


# the tests that read the module's one planted run go to one worker together (-n 2): spread
# over both, each worker would run it
PLANTED_RUN = pytest.mark.xdist_group("hack_flags_planted")


@pytest.mark.sandbox
@PLANTED_RUN
def test_run_list_and_results_say_the_flag(planted, capsys):
    root, code, out = planted
    root = str(root)
    first = out.splitlines()[0]
    assert code == 0 and first.startswith("pass") and "FLAGGED: timing" in first, out
    assert "flagged       suspected hack: the deck's own timing loop" in out
    assert "1 suspected hack among 1 run" in out
    code, out = cli(capsys, "--workbench", root, "list")
    assert "pass !T" in out and "1 suspected hack (!T timing" in out, out
    code, out = cli(capsys, "--workbench", root, "list", "--json")
    answers = {(a["model"], a["challenge"]): a for a in json.loads(out)["answers"]}
    assert answers["codex_gpt-9", "kbh_01_tiny_double"]["flags"] == ["timing"]
    assert answers["codex_gpt-9", "kbh_01_tiny_double"]["status"] == "pass"  # the verdict is not moved
    code, out = cli(capsys, "--workbench", root, "results")
    assert "FLAGGED: timing" in out and "1 suspected hack among 1 run" in out, out
    code, out = cli(capsys, "--workbench", root, "published")
    assert ("reward hacks found without a person: 1 of 1 annotated reward_hack (0 run here and not flagged, "
            "0 not judged here); 0 annotated clean but flagged; 1 suspected hack in all") in out, out
    assert "FLAGGED: timing" in out


@pytest.mark.sandbox
@PLANTED_RUN
def test_the_matrix_and_the_published_screen_show_it_at_80x24(planted, monkeypatch, tmp_path):
    from benchtui.tui.app import BenchApp
    from benchtui.tui.glyphs import HACK_MARK

    root = planted[0]
    monkeypatch.setenv("BENCHTUI_CONFIG", str(tmp_path / "no-keys.toml"))
    wb = find_workbench(str(root), None, root)

    async def drive():
        app = BenchApp(wb)
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(app, pilot)
            cell = app.screen.matrix.cell("codex_gpt-9", "kbh_01_tiny_double")
            assert cell.verdict == "pass" and cell.flags == "T"
            table = app.screen.query_one("#matrix", DataTable)
            row = table.get_row("kbh_01_tiny_double")
            col = [c.key.value for c in table.ordered_columns].index("codex_gpt-9")
            assert HACK_MARK in row[col].plain
            status = str(app.screen.query_one("#matrix-status", Static).render())
            assert f"{HACK_MARK} 1 suspected hack" in status, status
            await pilot.press("p")
            await settle(app, pilot)
            rows = app.screen.rows
            i = next(i for i, r in enumerate(rows) if r["run_id"] == K.HACK_RUN)
            table = app.screen.query_one("#published-table", VirtualTable)
            assert f"{HACK_MARK}T" in table.get_row_at(i)[3].plain
            table.move_cursor(row=i)
            await settle(app, pilot)
            detail = str(app.screen.query_one("#published-detail", Static).render())
            assert "suspected hack: the deck's own timing loop" in detail
            summary = str(app.screen.query_one("#published-summary", WrappedText).render())
            assert "reward hacks found without a person: 1 of 1" in summary
        assert app.errors == []

    asyncio.run(drive())


def test_no_flag_where_nothing_ran_is_said_as_nothing_measured(any_kbh_deck, tmp_path, capsys):
    root = tmp_path / "wb"
    import_deck(kernelbench_hard.read_deck(any_kbh_deck, "h100"), root)
    code, out = cli(capsys, "--workbench", str(root), "published")
    line = next(ln for ln in out.splitlines() if ln.startswith("reward hacks found without a person:"))
    assert code == 0 and line.endswith("0 suspected hacks in all (no answer run here: nothing measured)"), line
