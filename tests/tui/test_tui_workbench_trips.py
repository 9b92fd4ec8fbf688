"""What a new user tripped over on a real workbench.

1. matrix cells lost grades after returning from another screen;
2. compare's model picker, file pairing and the unified view's file names;
3. the runs screen during a live run, `enter` on a history row, `null` in logs.

Most tests build a small workbench of their own (the demo plus two models with
short names, like a published benchmark's `glm5` and `qwen36`); the ones
marked so also run on a scratch copy of the published benchmark when
../shared/published-benchmark is present.
"""
from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest
from benchtui.grading.grades import set_grade
from benchtui.store.database import Store
from benchtui.tui.app import BenchApp
from benchtui.workbench.scan import scan_workbench
from fakes import like
from rich.text import Text
from settling import settle
from textual.widgets import DataTable, OptionList, Static

REPO = Path(__file__).resolve().parents[2]
PUBLISHED = (REPO / ".." / "shared" / "published-benchmark" / "llm_programming_tests").resolve()
needs_published = pytest.mark.skipif(not PUBLISHED.is_dir(),
                                     reason=f"the published benchmark is not present at {PUBLISHED}")


def add_answer(wb, model: str, challenge: str, files: dict[str, str]) -> None:
    folder = Path(wb.root) / "models" / model / challenge
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")


@pytest.fixture
def short_wb(demo_wb):
    """The demo plus `glm5` (judge grades only) and `qwen36` (human and judge
    grades with + and -): names shorter than their cells, as in a published
    benchmark."""
    add_answer(demo_wb, "glm5", "backwards", {
        "layer_norm.py": "import numpy as np\n\n\ndef backward(dy, x, w):\n    return dy * w\n",
        "DESIGN.md": "# Design\n\nTwo passes over the rows.\n",
        "FINAL.md": "# Final\n\nAll tests pass.\n",
    })
    add_answer(demo_wb, "glm5", "kv", {"kv_cache.py": "class KVCache:\n    pass\n"})
    add_answer(demo_wb, "qwen36", "backwards", {
        "PROMPT.md": "Implement layer norm backward.\n",
        "layernorm.py": "import numpy as np\n\n\ndef backward(dy, x, w):\n    return dy * w - dy.mean()\n",
        "FINAL.md": "# Final\n\nAll tests pass.\n",
        "ANALYSIS.md": "# Analysis\n\nThe mean term matters.\n",
    })
    add_answer(demo_wb, "qwen36", "kv", {"kv_cache.py": "class KVCache:\n    size = 0\n"})
    with Store(demo_wb.store_path) as store:
        scan_workbench(demo_wb, store)
        set_grade(store, "glm5", "backwards", "B+", grader="Judge LLM", grader_kind="judge")
        set_grade(store, "glm5", "kv", "A-", grader="Judge LLM", grader_kind="judge")
        set_grade(store, "qwen36", "backwards", "A-", grader="reviewer")
        set_grade(store, "qwen36", "backwards", "B+", grader="Judge LLM", grader_kind="judge")
        set_grade(store, "qwen36", "kv", "B-", grader="reviewer")
    return demo_wb


def paint_after_each_rebuild(monkeypatch) -> None:
    """Paint the matrix once more between each rebuild and the table's idle
    handler (where the DataTable measures new rows): a real terminal often
    paints a frame there (the flaky case seen in tmux), the headless test
    driver rarely does."""
    original = DataTable._on_idle

    async def on_idle(self, event) -> None:
        if self.id == "matrix" and self._require_update_dimensions:
            for y in range(self.size.height):
                self.render_line(y)
        await original(self, event)

    monkeypatch.setattr(DataTable, "_on_idle", on_idle)


def matrix_lines(app) -> list[str]:
    table = app.screen.query_one("#matrix", DataTable)
    return [table.render_line(y).text for y in range(table.size.height)]


def row_line(app, label: str) -> str:
    return next(line for line in matrix_lines(app) if line.strip().startswith(label))


def assert_every_grade_shown(app) -> None:
    """Each cell's human and judge grade appear, whole, in the painted row,
    and each column is as wide as its widest cell."""
    screen = app.screen
    table = screen.query_one("#matrix", DataTable)
    models, challenges = screen.ordered()
    for key, column in table.columns.items():
        cells = [table.get_cell(row, key) for row in table.rows]
        widest = max((Text(c).cell_len if isinstance(c, str) else c.cell_len for c in cells), default=0)
        assert column.get_render_width(table) - 2 * table.cell_padding >= widest, key.value
    visible = set(range(table.size.width))
    lines = {line.strip().split("  ")[0]: line for line in matrix_lines(app)[1:] if line.strip()}
    for ch in challenges:
        line = lines[ch.label[:22]]
        x = table.columns["__challenge__"].get_render_width(table)
        for model in models:
            width = table.columns[model].get_render_width(table)
            if x + width <= len(visible):  # columns scrolled off to the right are not painted
                cell = line[x:x + width]
                c = screen.matrix.cell(model, ch.id)
                for grade in (c.human, c.judge):
                    if grade:
                        assert grade in cell.replace("⚠", " ").split(), (model, ch.id, grade, cell)
            x += width


# -- 1. matrix grades after returning from another screen ---------------------------

async def leave_and_return(app, pilot, cell: tuple[str, str], keys: tuple[str, ...]) -> None:
    app.screen.focus_cell(*cell)
    await pilot.press(keys[0])
    await settle(app, pilot)
    assert type(app.screen).__name__ != "MatrixScreen"
    for key in keys[1:]:
        await pilot.press(key)
        await settle(app, pilot)
    await pilot.press("escape")
    await settle(app, pilot)
    assert type(app.screen).__name__ == "MatrixScreen"


# leave the matrix and come back: grading a cell (the matrix is rebuilt), the
# leaderboard, grading again
TRIPS = (("g", "a"), ("l",), ("g", "minus"))


async def test_matrix_keeps_whole_grades_after_returning_from_a_screen(short_wb, monkeypatch):
    paint_after_each_rebuild(monkeypatch)
    app = BenchApp(short_wb)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(app, pilot)
        assert_every_grade_shown(app)
        for keys in TRIPS:
            await leave_and_return(app, pilot, ("qwen36", "kv"), keys)
            assert "B+" in row_line(app, "Layer Norm Backward").replace("⚠", " ").split()  # glm5's judge grade
            assert "A-" in row_line(app, "KV-Cache").replace("⚠", " ").split()  # glm5's judge grade, not "A"
            assert_every_grade_shown(app)
        assert app.screen.matrix.cell("qwen36", "kv").human == "A-"  # A, then one step down
    assert app.errors == []


async def test_matrix_keeps_whole_grades_at_80x24(short_wb, monkeypatch):
    paint_after_each_rebuild(monkeypatch)
    app = BenchApp(short_wb)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        for keys in TRIPS:
            await leave_and_return(app, pilot, ("glm5", "kv"), keys)
            assert_every_grade_shown(app)
    assert app.errors == []


def published_copy(tmp_path: Path, monkeypatch):
    from benchtui.cli import main as cli
    from benchtui.workbench.layout import find_workbench

    dest = tmp_path / "pub"
    shutil.copytree(PUBLISHED, dest, ignore=shutil.ignore_patterns("store.db*"))
    monkeypatch.setenv("BENCHTUI_CONFIG", str(tmp_path / "no-keys.toml"))
    monkeypatch.setenv("BENCHTUI_GRADER", "reviewer")
    wb = find_workbench(str(dest), None, dest)
    assert cli(["--workbench", str(dest), "scan"]) == 0
    assert cli(["--workbench", str(dest), "grades", "alias", "MiniMax", "minimax-m2.7"]) == 0
    assert cli(["--workbench", str(dest), "grades", "import", "--grader", "readme-judge", str(dest / "README.md")]) == 0
    return wb


@needs_published
@pytest.mark.parametrize("size", [(140, 45), (80, 24)])
async def test_published_matrix_keeps_whole_grades(tmp_path, monkeypatch, capsys, size):
    wb = published_copy(tmp_path, monkeypatch)
    capsys.readouterr()
    paint_after_each_rebuild(monkeypatch)
    app = BenchApp(wb)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        with Store(wb.store_path) as store:
            judged = store.query("select count(*) n from grades")[0]["n"]
        assert judged >= 20  # the README's grade matrix was imported
        for keys in TRIPS:
            await leave_and_return(app, pilot, ("glm5", "backwards"), keys)
            assert_every_grade_shown(app)
    assert app.errors == []


# -- 2. compare: the model picker, pairing, the unified view's names ----------------

async def test_compare_model_picker_highlights_the_current_model(short_wb):
    app = BenchApp(short_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        app.open_compare("glm5", "backwards")
        await settle(app, pilot)
        screen = app.screen
        first = screen.other
        assert first is not None and len(screen.others) >= 3
        await pilot.press("m")
        await settle(app, pilot)
        pick = screen.query_one("#compare-pick", OptionList)
        assert pick.has_focus and pick.highlighted is not None
        assert pick.get_option_at_index(pick.highlighted).id == first
        await pilot.press("down", "enter")
        await settle(app, pilot)
        assert screen.other not in (None, first)  # Down Enter picks the next model, not the same one
        assert screen.other == screen.others[screen.others.index(first) + 1]
    assert app.errors == []


def test_pairing_leaves_unrelated_files_alone():
    from benchtui.tui.diffing import pair_files

    def files(*names):
        kinds = {"PROMPT.md": "prompt", "session.jsonl": "transcript", "sesion.jsonl": "transcript"}
        return [{"relpath": n, "kind": kinds.get(n, "doc" if n.endswith(".md") else "cuda" if ".cu" in n else "source")}
                for n in names]

    pairs = pair_files(files("fused_softmax_topk.cuh", "DESIGN.md", "FINAL.md", "session.jsonl"),
                       files("fused_softmax_topk.cu", "PROMPT.md", "FINAL.md", "sesion.jsonl", "test_fused.cu"))
    named = {(a and a["relpath"], b and b["relpath"]) for a, b in pairs}
    assert ("fused_softmax_topk.cuh", "fused_softmax_topk.cu") in named
    assert ("FINAL.md", "FINAL.md") in named
    assert ("session.jsonl", "sesion.jsonl") in named
    assert ("DESIGN.md", None) in named and (None, "PROMPT.md") in named  # unrelated: shown alone
    assert (None, "test_fused.cu") in named
    # pairs first, then the files shown alone
    assert all(a and b for a, b in pairs[:3]) and not any(a and b for a, b in pairs[3:])

    pairs = pair_files(files("layernorm.py", "test_layernorm.py", "README.md", "NOTES.md"),
                       files("layer_norm.py", "gradient_check.py", "PROMPT.md", "IMPLEMENTATION_NOTES.md", "ANALYSIS.md"))
    named = {(a and a["relpath"], b and b["relpath"]) for a, b in pairs}
    assert ("layernorm.py", "layer_norm.py") in named
    assert ("NOTES.md", "IMPLEMENTATION_NOTES.md") in named
    assert ("README.md", None) in named and (None, "PROMPT.md") in named and (None, "ANALYSIS.md") in named
    # each answer's own test, whatever its name (a gradient check is one), pairs by its role
    assert ("test_layernorm.py", "gradient_check.py") in named
    # the one implementation file of each answer is paired, whatever its name
    pairs = pair_files(files("tree_attention.py", "NOTES.md"), files("dflash_verify.py", "PROMPT.md"))
    assert (pairs[0][0]["relpath"], pairs[0][1]["relpath"]) == ("tree_attention.py", "dflash_verify.py")


def test_main_sources_pair_by_role_and_come_first():
    """The two main sources pair whatever their names, and the screen opens on them,
    not on an identical PROMPT.md."""
    from benchtui.tui.diffing import pair_files

    def files(*names):
        return [{"relpath": n, "kind": "prompt" if n == "PROMPT.md" else "doc" if n.endswith(".md") else "source"}
                for n in names]

    pairs = pair_files(files("layer_norm.py", "gradient_check.py", "NOTES.md", "PROMPT.md"),
                       files("solution.py", "bench_solution.py", "test_solution.py", "PROMPT.md", "README.md"),
                       main=("layer_norm.py", "solution.py"))
    named = [(a and a["relpath"], b and b["relpath"]) for a, b in pairs]
    assert named[0] == ("layer_norm.py", "solution.py")
    assert ("gradient_check.py", "test_solution.py") in named and ("PROMPT.md", "PROMPT.md") in named
    assert (None, "bench_solution.py") in named
    # same main file on both sides: that pair still comes first
    pairs = pair_files(files("PROMPT.md", "kv.py", "util.py"), files("PROMPT.md", "kv.py"), main=("kv.py", "kv.py"))
    assert (pairs[0][0]["relpath"], pairs[0][1]["relpath"]) == ("kv.py", "kv.py")


async def test_compare_opens_on_the_main_sources(demo_wb):
    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        app.open_compare("demo-hasty", "backwards", "demo-quitter")
        await settle(app, pilot)
        first = app.screen.pairs[0]
        assert (first[0]["relpath"], first[1]["relpath"]) == ("layer_norm.py", "solution.py")
        assert "layer_norm.py ↔ solution.py" in str(app.screen.query_one("#compare-bar", Static).render())
    assert app.errors == []


async def test_compare_shows_unrelated_files_alone_and_unified_keeps_names(short_wb):
    app = BenchApp(short_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        app.open_compare("glm5", "backwards", "qwen36")
        await settle(app, pilot)
        screen = app.screen
        named = [(a and a["relpath"], b and b["relpath"]) for a, b in screen.pairs]
        assert ("layer_norm.py", "layernorm.py") in named and ("FINAL.md", "FINAL.md") in named
        assert ("DESIGN.md", None) in named and (None, "PROMPT.md") in named and (None, "ANALYSIS.md") in named
        files = screen.query_one("#compare-files", OptionList)
        labels = [str(files.get_option_at_index(i).prompt) for i in range(files.option_count)]
        assert not any("DESIGN.md" in label and "PROMPT.md" in label for label in labels)
        bar = screen.query_one("#compare-bar", Static)
        assert "layer_norm.py" in str(bar.render()) and "layernorm.py" in str(bar.render())
        await pilot.press("u")
        await settle(app, pilot)
        view = screen.query_one("#diff-view")
        assert view.unified
        text = str(bar.render())
        assert "layer_norm.py" in text and "layernorm.py" in text and "unified" in text
        assert [r.text for r in view.rows[:2]] == ["--- glm5/layer_norm.py", "+++ qwen36/layernorm.py"]
        # an identical pair and a file shown alone keep both names in the unified view too
        for wanted in (("FINAL.md", "FINAL.md"), ("DESIGN.md", None)):
            files.highlighted = named.index(wanted)
            await settle(app, pilot)
            heads = [r.text for r in view.rows[:2]]
            assert heads[0].startswith("--- glm5/") and heads[1].startswith("+++ qwen36/"), heads
            assert wanted[0] in heads[0] and (wanted[1] or "—") in heads[1]
            assert wanted[0] in str(bar.render())
    assert app.errors == []


@needs_published
async def test_published_compare_pairs_by_role(tmp_path, monkeypatch, capsys):
    wb = published_copy(tmp_path, monkeypatch)
    capsys.readouterr()
    app = BenchApp(wb)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(app, pilot)
        app.open_compare("glm5", "fuse", "minimax-m2.7")
        await settle(app, pilot)
        named = [(a and a["relpath"], b and b["relpath"]) for a, b in app.screen.pairs]
        assert ("fused_softmax_topk.cuh", "fused_softmax_topk.cu") in named
        assert not any(a and b and {a, b} & {"PROMPT.md"} and a != b for a, b in named)
        assert not any(a == "DESIGN.md" and b for a, b in named)
    assert app.errors == []


# -- 3. runs: history during a live run, enter opens a log, no `null` ----------------

def fake_runs(monkeypatch, gate: threading.Event, seen: dict):
    import benchtui.runner.orchestrate as orchestrate
    from benchtui.runner.orchestrate import RunEvent

    @like(orchestrate.run_answers)
    def fake_run_answers(workbench, pairs, *, backend="auto", on_event=None, cancel=None, **_):
        seen["pairs"] = list(pairs)
        with Store(workbench.store_path) as store:
            for i, (m, c) in enumerate(pairs):
                run_id = store.db["runs"].insert({"model": m, "challenge": c, "status": "running"}).last_pk
                on_event(RunEvent("started", m, c, run_id, None, "", i, len(pairs)))
                verdict = "compile_error" if i == 0 else "pass"
                store.db["runs"].update(run_id, {"status": "done", "verdict": verdict, "message": f"{verdict}: live"})
                store.db["checks"].insert({"run_id": run_id, "position": 1, "name": "speed", "verdict": "info",
                                           "value": "0.9227", "threshold": "null", "message": "speedup 0.92x"})
                on_event(RunEvent("finished", m, c, run_id, verdict, f"{verdict}: live", i + 1, len(pairs)))
                if i == 0:
                    gate.wait(10)  # the test looks at the screen mid-batch
        return []

    monkeypatch.setattr(orchestrate, "run_answers", fake_run_answers)


def table_text(table: DataTable) -> list[str]:
    return [table.render_line(y).text for y in range(table.size.height)]


async def test_runs_live_batch_keeps_history_and_whole_columns(short_wb, monkeypatch):
    gate, seen = threading.Event(), {}
    fake_runs(monkeypatch, gate, seen)
    app = BenchApp(short_wb)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(app, pilot)
            app.screen.focus_cell("glm5", "backwards")
            await pilot.press("r")
            await settle(app, pilot)
            screen = app.screen
            history = screen.query_one("#runs-table", DataTable)
            before = history.row_count
            assert before >= 5  # the demo's runs
            screen.query_one("#runs-scope").value = "row"
            await pilot.press("s")
            for _ in range(20):
                await pilot.pause(0.05)
                if seen.get("pairs") and screen.query_one("#runs-live", DataTable).row_count:
                    break
            await pilot.pause(0.2)
            live = screen.query_one("#runs-live", DataTable)
            assert screen.running and live.display and live.row_count == len(seen["pairs"]) >= 3
            # history stays on screen during the live batch, and gains the finished run
            assert history.display and history.size.height >= 4 and history.row_count >= before
            assert any(line.split()[:1] and line.split()[0].isdigit() for line in table_text(history)[1:])
            # whole words in every column: no "finish", no "compi"
            words = " ".join(table_text(live)).split()
            assert "finished" in words and "compile" in words and "error" in words and "queued" in words
            assert not any(w in ("finish", "finishe", "compi", "starte") for w in words)
            gate.set()
            await settle(app, pilot)
            assert not screen.running
            assert history.row_count >= before + len(seen["pairs"])
            words = " ".join(table_text(live)).split()
            assert words.count("finished") == len(seen["pairs"])
    finally:
        gate.set()
    assert app.errors == []


async def test_runs_enter_opens_the_highlighted_history_runs_log(short_wb, monkeypatch):
    gate, seen = threading.Event(), {}
    gate.set()
    fake_runs(monkeypatch, gate, seen)
    app = BenchApp(short_wb)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        app.screen.focus_cell("glm5", "backwards")
        await pilot.press("r")
        await settle(app, pilot)
        screen = app.screen
        # pick a scope the way a user does: open the dropdown, move, choose
        scope = screen.query_one("#runs-scope")
        scope.focus()
        await pilot.press("enter", "down", "enter")
        await settle(app, pilot)
        assert scope.value == "column"
        await pilot.press("s")
        await settle(app, pilot)
        assert seen["pairs"] and not screen.running
        history = screen.query_one("#runs-table", DataTable)
        assert history.has_focus
        await pilot.press("down")
        run_id = int(str(history.get_cell_at((history.cursor_row, 0))))
        await pilot.press("enter")
        await settle(app, pilot)
        assert not scope.expanded  # enter showed a log, not the scope dropdown
        lines = list(screen.query_one("#runs-log").lines)
        assert lines and lines[0].startswith(f"run #{run_id} ")
        log = "\n".join(lines)
        assert "null" not in log and "None" not in log
        assert "threshold" not in log.split("speed:")[-1].splitlines()[0]  # no threshold: omitted
        assert "[info] speed: 0.9227 speedup 0.92x" in log
    assert app.errors == []
