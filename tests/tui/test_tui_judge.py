"""The matrix's judge key: the configured LLM judge (a stand-in registered
through llm's plugin hooks) grades a cell, or a challenge's row, in a worker,
and the grade shows in the matrix as any judge's does."""
from __future__ import annotations

import pytest

pytest.importorskip("llm", reason="the judge extra (llm) is not installed: pip install -e '.[test]'")

from benchtui.grading.grades import current_grades  # noqa: E402
from benchtui.store.database import Store  # noqa: E402
from benchtui.tui.app import BenchApp  # noqa: E402
from judge_stand_in import stand_in_fixture  # noqa: E402,F401  (the fixture)
from settling import settle  # noqa: E402
from textual.widgets import DataTable  # noqa: E402


def configure(tmp_path, monkeypatch, model: str) -> None:
    config = tmp_path / "judge-config.toml"
    config.write_text(f'[judge]\nmodel = "{model}"\nmode = "blind"\n', encoding="utf-8")
    monkeypatch.setenv("BENCHTUI_CONFIG", str(config))


def judge_grades(wb, model: str | None = None, challenge: str | None = None):
    with Store(wb.store_path) as store:
        return [g for g in current_grades(store, model=model, challenge=challenge) if g.judge_model == "stand-in"]


async def test_tui_judge_key_grades_the_cell_and_the_row(demo_wb, stand_in, tmp_path, monkeypatch):
    configure(tmp_path, monkeypatch, "stand-in")
    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        table = app.screen.query_one("#matrix", DataTable)
        assert str(table.get_cell("fuse", "demo-hasty")).split()[-1] != "A"
        app.screen.focus_cell("demo-hasty", "fuse")
        await pilot.press("j")
        await settle(app, pilot)
        await settle(app, pilot)
        assert len(stand_in.sent) == 1 and "demo-hasty/fuse" in stand_in.sent[0][1]
        assert str(table.get_cell("fuse", "demo-hasty")).split()[-1] == "A"  # the judge's grade, as any judge's
        # the challenge column: every answer of the row (the graded one from the cache)
        table.move_cursor(column=0)
        await pilot.press("j")
        await settle(app, pilot)
        await settle(app, pilot)
        row = [m for m in app.screen.matrix.models if app.screen.matrix.cell(m, "fuse").status == "answer"]
        assert len(row) >= 2 and len(stand_in.sent) == len(row)
    assert {g.model for g in judge_grades(demo_wb, challenge="fuse")} == set(row)
    assert app.errors == []


async def test_tui_judge_key_without_a_key_is_a_notification(demo_wb, stand_in, tmp_path, monkeypatch):
    configure(tmp_path, monkeypatch, "stand-in-keyed")
    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        app.screen.focus_cell("demo-hasty", "fuse")
        await pilot.press("j")
        await settle(app, pilot)
        said = [n.message for n in app._notifications]
        assert any("judge: stand-in-keyed: No key found" in m for m in said), said
    assert stand_in.sent == [] and judge_grades(demo_wb) == []
    assert app.errors == []
