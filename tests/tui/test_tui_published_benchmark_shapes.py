"""What a new user tripped over on the published benchmark.

Each test reproduces one finding on a small fixture workbench (a copy of the
demo, with the published benchmark's shapes added), so they always run.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

from benchtui.store.database import Store
from benchtui.tui.app import BenchApp
from benchtui.workbench.scan import scan_workbench
from rich.console import Console
from textual.widgets import DataTable, Static, Tree

sys.path.insert(0, str(Path(__file__).parent))
from settling import settle
from tui_demo import pi_session  # noqa: E402


def strip_text(strips) -> list[str]:
    return ["".join(seg.text for seg in strip) for strip in strips]


def widget_lines(widget) -> list[str]:
    """What a widget shows now, line by line (its visible region)."""
    region = widget.region
    return strip_text(widget.render_lines(region.reset_offset))


# -- the transcript's repaired lines -----------------------------------------

def repaired_session() -> str:
    """The demo session with the first write's result broken the way qwen36/kv's lines 28/58 are:
    unescaped quotes inside a tool result's text, a line the loader repairs."""
    lines = pi_session(bad_line=False).splitlines()
    i = next(k for k, line in enumerate(lines) if '"toolCallId": "call_0_w"' in line)
    lines[i] = lines[i].replace("wrote 78 bytes", 'wrote 78 bytes to "layernorm.py"')
    return "\n".join(lines) + "\n"


def add_repaired_transcript(wb) -> tuple[str, int]:
    path = Path(wb.root) / "models" / "demo-careful" / "backwards" / "repaired-session.jsonl"
    path.write_text(repaired_session(), encoding="utf-8")
    from benchtui.transcripts import load_transcript

    t = load_transcript(path)
    assert [w.kind for w in t.warnings] == ["repaired"]
    line = t.warnings[0].line
    entry = next(e for e in t.entries if e.line == line)
    assert entry.role == "tool_result" and entry.repaired and not entry.is_error  # paired to its call
    return path.name, line


async def test_transcript_repaired_tool_result_is_shown_found_and_filtered(demo_wb):
    name, line = add_repaired_transcript(demo_wb)
    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        app.open_transcript("demo-careful", "backwards", name)
        await settle(app, pilot)
        screen = app.screen
        view = screen.query_one("#transcript-view")
        header = str(screen.query_one("#transcript-header", Static).render())
        assert f"line {line}" in header  # the header says which line, not only how many
        marked = [r for r in view.rows if r.kind == "warn" and f"line {line}" in r.text]
        assert marked, "the repaired line is marked in the view"
        # search finds it
        await pilot.press("slash", *"repaired", "enter")
        await settle(app, pilot)
        assert screen.hits and f"line {line}" in view.rows[view.cursor].text
        # the errors filter keeps it
        while screen.filter_mode != "errors":
            await pilot.press("f")
        await settle(app, pilot)
        assert any(r.kind == "warn" and f"line {line}" in r.text for r in view.rows)
    assert app.errors == []


async def test_transcript_expand_all_keeps_the_reading_position_and_is_in_the_footer(demo_wb):
    from benchtui.tui.widgets.footer import KeysFooter

    path = Path(demo_wb.root) / "models" / "demo-careful" / "backwards" / "long-session.jsonl"
    path.write_text(pi_session(turns=6, bad_line=False), encoding="utf-8")
    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        app.open_transcript("demo-careful", "backwards", path.name)
        await settle(app, pilot)
        screen = app.screen
        view = screen.query_one("#transcript-view")
        footer = screen.query_one(KeysFooter)
        descriptions = [description for _key, _shown, description, _on, _palette in footer.keys()]  # noqa: SIM118 - KeysFooter.keys(), not a dict
        assert any("xpand" in d for d in descriptions), descriptions
        assert "xpand" in str(footer.render())  # drawn, not only bound
        # read down to the 4th user turn
        for _ in range(4):
            await pilot.press("right_square_bracket")
        await pilot.pause()
        before = view.rows[view.cursor]
        offset = view.cursor - view.scroll_offset.y
        assert before.role == "user" and before.kind == "header"
        await pilot.press("e")
        await settle(app, pilot)
        assert any(r.kind == "thinking" for r in view.rows)  # expanded
        after = view.rows[view.cursor]
        assert (after.kind, after.entry, after.text) == (before.kind, before.entry, before.text)
        assert view.cursor - view.scroll_offset.y == offset  # same place on the screen
        await pilot.press("e")  # and collapsing again keeps it too
        await settle(app, pilot)
        after = view.rows[view.cursor]
        assert (after.kind, after.entry, after.text) == (before.kind, before.entry, before.text)
    assert app.errors == []


# -- the answer screen ------------------------------------------------------

GLM5_FUSE = {  # the file names of glm5/fuse in the published benchmark (contents made up)
    "DESIGN.md": "# design\n",
    "FINAL.md": "# final\n",
    "diagram.py": "print('ascii diagram')\n" * 40,
    "fused_softmax_topk.cuh": "// the kernel\n__global__ void fused_softmax_topk() {}\n" * 30,
    "test_fused.cu": "#include \"fused_softmax_topk.cuh\"\nint main() { return 0; }\n" * 60,
}


def add_glm5_like_fuse(wb, model: str = "glm5") -> None:
    folder = Path(wb.root) / "models" / model / "fuse"
    folder.mkdir(parents=True)
    for name, text in GLM5_FUSE.items():
        (folder / name).write_text(text, encoding="utf-8")
    with Store(wb.store_path) as store:
        scan_workbench(wb, store)


def test_main_source_picks_the_answer_not_a_diagram_test_or_demo():
    from benchtui.workbench.answer_files import main_source

    def files(*names_sizes):
        kinds = {".py": "source", ".cu": "cuda", ".cuh": "cuda", ".md": "doc"}
        return [{"relpath": n, "size": s, "kind": kinds.get(Path(n).suffix, "data")} for n, s in names_sizes]

    names = ("fuse", "Fused Softmax+TopK", "Fused softmax + top-k CUDA kernel")
    assert main_source(files(("diagram.py", 13057), ("fused_softmax_topk.cuh", 8123), ("test_fused.cu", 6736)),
                       names, language="cuda") == "fused_softmax_topk.cuh"
    kv = files(("attention.py", 9000), ("demo.py", 20000), ("gpu_mapping.py", 12000), ("kv_cache.py", 8000),
               ("memory_analysis.py", 15000), ("optimizations.py", 14000))
    assert main_source(kv, ("kv", "KV-Cache"), language="python") == "kv_cache.py"
    bw = files(("benchmark_layer_norm.py", 9000), ("layer_norm_backward.py", 7000), ("test_layer_norm.py", 12000))
    assert main_source(bw, ("backwards", "Layer Norm Backward"), language="python") == "layer_norm_backward.py"
    # no name match: the largest real source, never the demo
    assert main_source(files(("demo.py", 9000), ("impl.py", 100), ("helpers.py", 50)), ("beam_search",)) == "impl.py"
    # only a test: still something to show
    assert main_source(files(("test_x.py", 10)), ("kv",)) == "test_x.py"
    assert main_source(files(("NOTES.md", 10)), ("kv",)) is None


async def test_answer_opens_the_main_source_not_the_first_file(demo_wb):
    add_glm5_like_fuse(demo_wb)
    app = BenchApp(demo_wb)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(app, pilot)
        app.open_answer("glm5", "fuse")
        await settle(app, pilot)
        assert app.screen.current_file == "fused_softmax_topk.cuh"
    assert app.errors == []


async def test_answer_tree_keeps_file_names_and_warnings_at_80x24(demo_wb):
    add_glm5_like_fuse(demo_wb)
    # a warning on a file: the same content in another model's answer
    dup = Path(demo_wb.root) / "models" / "demo-hasty" / "fuse" / "fused_softmax_topk.cuh"
    dup.write_text(GLM5_FUSE["fused_softmax_topk.cuh"], encoding="utf-8")
    with Store(demo_wb.store_path) as store:
        scan_workbench(demo_wb, store)
    app = BenchApp(demo_wb)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        app.open_answer("glm5", "fuse")
        await settle(app, pilot)
        tree = app.screen.query_one("#file-tree", Tree)
        shown = "\n".join(widget_lines(tree))
        for name in GLM5_FUSE:
            stem, ext = name.rsplit(".", 1)
            assert name in shown or (f".{ext}" in shown and "…" in shown), (name, shown)
        cuh = next(line for line in shown.splitlines() if "topk" in line or "…" in line and ".cuh" in line)
        assert ".cuh" in cuh and "⚠" in cuh, cuh  # extension and warning mark both visible
        # the warning's text in full: selecting its node shows it in the file pane
        node = next(n for n in tree.root.children if "Warnings" in str(n.label)).children[0]
        tree.select_node(node)
        await settle(app, pilot)
        pane = app.screen.query_one("#file-view-pane")
        text = " ".join(str(w.render()) for w in pane.query(Static))
        assert "duplicate_file" in text and "demo-hasty/fuse/fused_softmax_topk.cuh" in text, text
    assert app.errors == []


# -- grades, matrix filter, palette, 80x24 ------------------------------------

async def test_grades_never_cut_a_judge_name(demo_wb):
    from benchtui.grading.grades import set_grade

    with Store(demo_wb.store_path) as store:
        set_grade(store, "demo-careful", "backwards", "A-", grader="DeepSeek V4 Pro", grader_kind="judge")
    app = BenchApp(demo_wb)
    for size in ((140, 45), (80, 24)):
        async with app.run_test(size=size) as pilot:
            await settle(app, pilot)
            app.open_grades("demo-careful", "backwards")
            await settle(app, pilot)
            table = app.screen.query_one("#grades-dims", DataTable)
            shown = "\n".join(widget_lines(table))
            assert "A- (DeepSeek V4 Pro)" in shown, (size, shown)
            assert "(Judge LLM)" in shown, (size, shown)
        app = BenchApp(demo_wb)
    assert app.errors == []


def all_pass_except_missing(wb) -> None:
    """beam_search: both demo answers pass; demo-quitter has no folder for it."""
    with Store(wb.store_path) as store:
        for model in ("demo-careful", "demo-hasty"):
            store.db["runs"].insert({"model": model, "challenge": "beam_search", "status": "done", "verdict": "pass",
                                     "backend": "cpu", "started_at": "2025-06-16T10:00:00.000Z"})


async def test_matrix_not_passing_filter_drops_rows_whose_answers_all_pass(demo_wb):
    all_pass_except_missing(demo_wb)
    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        screen = app.screen
        assert screen.matrix.cell("demo-quitter", "beam_search").status == "missing"
        await pilot.press("f")
        await settle(app, pilot)
        assert screen.filter_mode == "not passing"
        table = screen.query_one("#matrix", DataTable)
        rows = [k.value for k in table.rows]
        assert "beam_search" not in rows  # every answer passes: nothing to see
        # a not-run answer is not passing: its row stays
        not_run = [(m, c.id) for c in screen.matrix.challenges for m in screen.matrix.models
                   if screen.matrix.cell(m, c.id).verdict == "not_run"]
        assert not_run and all(c in rows for _, c in not_run)
        status = str(screen.query_one("#matrix-status").render())
        assert "filter: not passing (rows with an answer whose latest run did not pass; not run counts)" in status
    assert app.errors == []


async def test_matrix_80x24_keeps_the_challenge_column_when_scrolling(demo_wb):
    for model in ("a-very-long-model-name-1", "a-very-long-model-name-2", "a-very-long-model-name-3"):
        folder = Path(demo_wb.root) / "models" / model / "kv"
        folder.mkdir(parents=True)
        (folder / "kv_cache.py").write_text("x = 1\n", encoding="utf-8")
    with Store(demo_wb.store_path) as store:
        scan_workbench(demo_wb, store)
    app = BenchApp(demo_wb)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        table = app.screen.query_one("#matrix", DataTable)
        for _ in range(len(table.columns)):
            await pilot.press("right")
        await settle(app, pilot)
        assert table.scroll_offset.x > 0  # it did scroll
        shown = widget_lines(table)
        assert shown[0].lstrip().startswith("challenge"), shown[0]
        assert "KV-Cache" in "\n".join(shown)
    assert app.errors == []


def test_leaderboard_keeps_the_mean_and_grades_at_80_columns():
    from benchtui.tui.screens.leaderboard import rankings_table

    s = SimpleNamespace
    lb = s(model_summaries=[
        s(rank=i + 1, model=m, band=band, graded=8, best="flash_attention_bwd", best_letter="A",
          worst="ternary_training", worst_letter="C+", passed=1, verified=2)
        for i, (m, band) in enumerate([("opus47_1m", "A-/B+"), ("minimax-m2.7", "B/B-"), ("glm5.1", "B-/C+")])])
    console = Console(width=78, record=True, color_system=None)
    console.print(rankings_table(lb, width=78))
    out = console.export_text()
    for band in ("A-/B+", "B/B-", "B-/C+"):
        assert band in out, out
    line = next(line for line in out.splitlines() if "opus47_1m" in line)
    assert "│ A flash" in line and "│ C+ ternary" in line and line.rstrip().endswith("│"), line  # grades kept, fits


async def test_leaderboard_explains_head_to_head_level(demo_wb):
    app = BenchApp(demo_wb)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        app.open_leaderboard()
        await settle(app, pilot)
        text = " ".join(" ".join(widget_lines(app.screen.query_one("#leader-h2h", Static))).split())
        assert "level = as many wins as losses" in text, text
    assert app.errors == []


def palette_search(app, query: str) -> list[str]:
    """What ctrl+p's palette lists for ``query`` (tui/widgets/jump_palette.py)."""
    from benchtui.tui.palette_index import palette_index
    from benchtui.tui.widgets.jump_palette import search

    return [hit.text for hit in search(app, palette_index(app), query, app.screen)]


async def test_palette_matches_space_separated_terms(demo_wb):
    app = BenchApp(demo_wb)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        spaced = palette_search(app, "demo-hasty kv")
        slashed = palette_search(app, "demo-hasty/kv")
        assert slashed and spaced
        assert all("demo-hasty/kv" in t for t in spaced), spaced
        assert set(slashed) <= set(spaced)
        assert palette_search(app, "kv demo-hasty")  # any order
        assert not palette_search(app, "demo-hasty zzz")
    assert app.errors == []


def test_repaired_session_fixture_is_valid_json_except_the_broken_line():
    bad = [line for line in repaired_session().splitlines() if not _is_json(line)]
    assert len(bad) == 1


def _is_json(line: str) -> bool:
    try:
        json.loads(line)
        return True
    except ValueError:
        return False


def test_transcript_rows_are_single_lines_even_for_multiline_commands():
    """qwen36/kv runs `python -c "<script>"`: the tool row showed the script's newlines,
    which a one-line row draws over the rows below it."""
    from benchtui.transcripts.model import Entry, ToolCall, ToolResult
    from benchtui.tui.transcript_rows import build_rows

    script = 'cd ./qwen36/kv && python -c "\nimport numpy as np\nprint(np.ones(3))\n"'
    call = ToolCall("c1", "bash", {"command": script}, ToolResult(text="[1. 1. 1.]"))
    rows = build_rows([Entry(0, 1, "assistant", tool_calls=[call])], 80, set())
    assert all("\n" not in r.text for r in rows)
    tool = next(r for r in rows if r.kind == "tool")
    assert tool.text.startswith("⚙ bash cd ./qwen36/kv && python -c") and tool.text.endswith("…")
    assert [r.text for r in rows if r.kind == "code"] == ["import numpy as np", "print(np.ones(3))", '"']


# -- the same findings on a scratch copy of the published benchmark (skipped when absent) ---

PUBLISHED = Path(__file__).resolve().parents[2].parent / "shared" / "published-benchmark" / "llm_programming_tests"


def published_copy(tmp_path: Path):
    import pytest
    from benchtui.workbench.layout import find_workbench

    if not PUBLISHED.is_dir():
        pytest.skip(f"the published benchmark is not at {PUBLISHED}")
    import shutil

    root = tmp_path / "llm_programming_tests"
    shutil.copytree(PUBLISHED, root, ignore=shutil.ignore_patterns("store.db*", ".git"))
    for path in [root, *root.rglob("*")]:  # the shared copy is read-only
        if not path.is_symlink():
            path.chmod(path.stat().st_mode | 0o200)
    wb = find_workbench(str(root), None, root)
    with Store(wb.store_path) as store:
        scan_workbench(wb, store)
    return wb


async def test_published_copy_answer_transcript_grades_palette(tmp_path, monkeypatch):
    from benchtui.grading.judge_import import import_markdown
    from benchtui.store.queries import answer_files
    from benchtui.workbench.answer_files import is_helper

    wb = published_copy(tmp_path)
    monkeypatch.setenv("BENCHTUI_CONFIG", str(tmp_path / "no-keys.toml"))
    with Store(wb.store_path) as store:
        import_markdown(store, Path(wb.root) / "README.md", grader="DeepSeek V4 Pro")
        answers = store.query("select id, model, challenge from answers where status = 'answer'")
        files = {(a["model"], a["challenge"]): answer_files(store, a["id"]) for a in answers}
    app = BenchApp(wb)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        # the main source, never a helper where a real source exists
        app.open_answer("glm5", "fuse")
        await settle(app, pilot)
        assert app.screen.current_file == "fused_softmax_topk.cuh"
        for (model, challenge), fs in files.items():
            app.screen.data = {"files": fs, "challenge": None}
            app.screen.challenge = challenge
            main = app.screen.main_file()
            sources = [f["relpath"] for f in fs if f["kind"] in ("source", "cuda")]
            if any(not is_helper(s) for s in sources):
                assert main and not is_helper(main), (model, challenge, main)
        await pilot.press("escape")
        # qwen36/kv's three repaired lines are marked and kept by the errors filter
        app.open_transcript("qwen36", "kv", "session.jsonl")
        await settle(app, pilot)
        view = app.screen.query_one("#transcript-view")
        for mode in ("all", "errors"):
            app.screen.filter_mode = mode
            app.screen.rebuild()
            marked = " ".join(r.text for r in view.rows if r.kind == "warn")
            assert all(f"line {n}: repaired" in marked for n in (28, 58, 72)), (mode, marked)
        await pilot.press("escape")
        # the judge's name in full at 80x24; the palette's space-separated terms
        app.open_grades("glm5", "fuse")
        await settle(app, pilot)
        shown = "\n".join(widget_lines(app.screen.query_one("#grades-dims", DataTable)))
        assert "A- (DeepSeek V4 Pro)" in shown, shown
        hits = palette_search(app, "qwen36 kv")
        assert "answer qwen36/kv" in hits and all("qwen36/kv" in h for h in hits)
    assert app.errors == []
