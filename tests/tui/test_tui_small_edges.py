"""Rough edges a newcomer meets: notices that fit an 80x24 terminal, the
leaderboard's title line, and blind mode saying why it hides nothing."""
from __future__ import annotations

from benchtui.tui.app import BenchApp
from settling import settle
from textual.widgets import Static
from textual.widgets._toast import Toast


def screen_lines(app) -> list[str]:
    return ["".join(seg.text for seg in strip) for strip in app.screen._compositor.render_strips()]


NOTICES = ("cancelling: running children are stopped",
           "runs cancelled: 1 finished, 20 cancelled, the rest never started",
           "this answer has no transcript",
           "wrote challenges/kv/adapters/qwen36.py: fill it in, then press r (or: benchtui adapter check qwen36 kv)",
           "scan: 6 models, 38 answers, 145 files, 9 transcripts; 6 warning(s)")


async def test_notices_are_never_cut_at_80x24(demo_wb):
    app = BenchApp(demo_wb)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(app, pilot)
        for text in NOTICES:
            app.notify(text, timeout=30)
        await settle(app, pilot)
        toasts = list(app.screen.query(Toast))
        assert toasts
        for toast in toasts:  # each whole on screen, above the footer
            assert toast.region.y >= 0 and toast.region.bottom <= 23, (toast.region, str(toast.render()))
            assert toast.content_region.width >= 40  # wide enough not to stack a word a line
        shown = " ".join(str(t.render()) for t in toasts)
        assert NOTICES[-1] in shown  # the newest always shows; the oldest give way
    assert app.errors == []


async def test_the_leaderboard_has_a_title_line(demo_wb):
    app = BenchApp(demo_wb)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("l")
        await settle(app, pilot)
        assert screen_lines(app)[1].strip().startswith("Leaderboard")
    assert app.errors == []


async def test_blind_mode_on_a_graded_answer_says_why_nothing_is_hidden(demo_wb):
    from benchtui.store.database import Store

    with Store(demo_wb.store_path) as store:  # the answer the demo's reviewer graded B+
        graded = store.query("select model, challenge from grades g join graders r on r.id = g.grader_id "
                             "where r.name = 'reviewer' and g.dimension = 'overall' order by g.id limit 1")[0]
    app = BenchApp(demo_wb)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        app.open_grades(graded["model"], graded["challenge"])
        await settle(app, pilot)
        await pilot.press("x")
        await settle(app, pilot)
        said = [n.message for n in app._notifications]
        assert any("blind" in m and "already" in m and "overall" in m for m in said), said
        title = str(app.screen.query_one("#grades-title", Static).render())
        assert graded["model"] in title and "blind" in title  # nothing hidden, and the mode said on screen
        await pilot.press("x")
        await settle(app, pilot)
        assert any("blind mode off" in n.message for n in app._notifications)
    assert app.errors == []


async def test_next_ungraded_skips_the_answers_this_grader_graded(demo_wb, monkeypatch):
    from benchtui.grading.grades import set_grade
    from benchtui.store.database import Store

    monkeypatch.setenv("BENCHTUI_GRADER", "tester")
    with Store(demo_wb.store_path) as store:  # the matrix's order: challenge by challenge, models by name
        order = store.challenge_ids()
        cells = sorted(((a["model"], a["challenge"]) for a in store.answers() if a["status"] == "answer"),
                       key=lambda cell: (order.index(cell[1]), cell[0]))
        set_grade(store, *cells[1], "B", grader="tester")
    app = BenchApp(demo_wb)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        app.open_grades(*cells[0])
        await settle(app, pilot)
        await pilot.press("right_square_bracket")
        await settle(app, pilot)
        assert (app.screen.model, app.screen.challenge) == cells[2]
    assert app.errors == []


def test_the_help_names_the_key_file_this_machine_reads(monkeypatch, tmp_path):
    from benchtui.tui.screens.help import keys_file_words

    monkeypatch.delenv("BENCHTUI_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    said = keys_file_words()
    assert f"in {tmp_path / 'xdg' / 'benchtui' / 'keys.toml'} ($XDG_CONFIG_HOME/benchtui/keys.toml" in said, said
    assert "~/.config" not in said
    monkeypatch.delenv("XDG_CONFIG_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert "in ~/.config/benchtui/keys.toml ($BENCHTUI_CONFIG names another file)" in keys_file_words()
    monkeypatch.setenv("BENCHTUI_CONFIG", str(tmp_path / "mine.toml"))
    assert "in ~/mine.toml ($BENCHTUI_CONFIG)" in keys_file_words()
