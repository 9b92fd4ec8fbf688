"""Long model names (a deck's "claude_claude-opus-4-8_max") head their matrix
columns shortened from the middle, so an 80-column terminal still shows
several models; the detail line names the model whole."""
from __future__ import annotations

import shutil
from pathlib import Path

from benchtui.store.database import Store
from benchtui.tui.app import BenchApp
from benchtui.tui.widgets.matrix_table import MatrixTable
from benchtui.workbench.layout import find_workbench
from benchtui.workbench.scan import scan_workbench
from settling import settle
from textual.widgets import Static

REPO = Path(__file__).resolve().parents[2]
MODELS = ["claude_claude-opus-4-8_high", "claude_claude-opus-4-8_max", "gemini_gemini-3.5-flash-preview", "glm5"]


async def test_long_model_names_are_cut_in_their_headers_and_whole_in_the_detail(tmp_path, monkeypatch):
    root = tmp_path / "wb"
    shutil.copytree(REPO / "challenges" / "kv", root / "challenges" / "kv")
    for model in MODELS:
        (root / "models" / model / "kv").mkdir(parents=True)
        (root / "models" / model / "kv" / "cache.py").write_text("x = 1\n")
    monkeypatch.setenv("BENCHTUI_CONFIG", str(tmp_path / "no-keys.toml"))
    wb = find_workbench(str(root), None, root)
    with Store(wb.store_path) as store:
        scan_workbench(wb, store, index_transcripts=False)
    app = BenchApp(wb)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        table = app.screen.query_one(MatrixTable)
        headers = {str(key.value): str(col.label) for key, col in table.columns.items()}
        assert headers["glm5"] == "glm5"
        for model in MODELS[:3]:
            assert len(headers[model]) <= 16 and "…" in headers[model], headers
        # the two opus runs stay apart by what differs: their ends
        assert headers[MODELS[0]].endswith("high") and headers[MODELS[1]].endswith("max")
        assert sum(col.width for col in table.columns.values()) <= 80  # every model on screen at 80 columns
        table.move_cursor(row=0, column=2)
        await settle(app, pilot)
        assert MODELS[1] in str(app.screen.query_one("#matrix-detail", Static).render())
    assert app.errors == []
