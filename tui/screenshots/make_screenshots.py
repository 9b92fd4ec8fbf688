"""Regenerate the README's screenshots from real runs of the demo workbench.

    python tui/screenshots/make_screenshots.py

Copies models/ and challenges/ to a temporary workbench, runs every answer in
the sandbox (CPU), imports the judge grades in models/JUDGES.md, records a few
human grades, and saves one SVG per screen here. Nothing in the repository's
own store.db is touched. (The snapshot tests use fixed, made-up results
instead, so that they stay byte-identical between runs.)
"""
from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))

from engine.grade_import import import_markdown  # noqa: E402
from engine.grades import set_grade  # noqa: E402
from engine.runner.orchestrate import run_answers  # noqa: E402
from engine.scan import scan_workbench  # noqa: E402
from engine.store import Store  # noqa: E402
from engine.workbench import find_workbench  # noqa: E402

os.environ["BENCHTUI_GRADER"] = "reviewer"  # the human grader the screenshots show
SIZE = (120, 34)
HUMAN = [("demo-careful", "backwards", "A-"), ("demo-careful", "flash_attention", "A"), ("demo-careful", "dflash_verify", "A-"),
         ("demo-hasty", "dflash_verify", "C-"), ("demo-hasty", "beam_search", "C"), ("demo-hasty", "backwards", "B-"),
         ("demo-quitter", "backwards", "B")]


def prepare(root: Path):
    shutil.copytree(REPO / "models", root / "models")
    shutil.copytree(REPO / "challenges", root / "challenges")
    wb = find_workbench(str(root), None, root)
    with Store(wb.store_path) as store:
        scan_workbench(wb, store)
        pairs = [(a["model"], a["challenge"]) for a in store.answers()]
    run_answers(wb, pairs, jobs=2, backend="cpu")
    with Store(wb.store_path) as store:
        import_markdown(store, root / "models" / "JUDGES.md")
        for model, challenge, letter in HUMAN:
            set_grade(store, model, challenge, letter, grader="reviewer", note="screenshot demo")
    return wb


async def shoot(wb) -> None:
    from tui.app import BenchApp

    shots = {
        "matrix": [],
        "answer": [lambda app: app.open_answer("demo-hasty", "dflash_verify"), "2",
                   lambda app: app.screen.query_one("#checks-table").move_cursor(row=2)],
        "transcript": [lambda app: app.open_transcript("demo-careful", "flash_attention", "session.jsonl")],
        "compare": [lambda app: app.open_compare("demo-careful", "backwards", "demo-hasty"), "n"],
        "grades": [lambda app: app.open_grades("demo-hasty", "dflash_verify")],
        "runs": [lambda app: app.open_runs([("demo-hasty", "beam_search")], "answer")],
        "leaderboard": [lambda app: app.open_leaderboard()],
    }
    for name, steps in shots.items():
        app = BenchApp(wb)
        async with app.run_test(size=SIZE) as pilot:
            for step in [None, *steps]:
                if callable(step):
                    step(app)
                elif step:
                    await pilot.press(step)
                for _ in range(3):
                    await pilot.pause()
                    await app.workers.wait_for_complete()
            app.save_screenshot(str(HERE / f"{name}.svg"))
            print(f"wrote {name}.svg")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        wb = prepare(Path(tmp) / "wb")
        asyncio.run(shoot(wb))


if __name__ == "__main__":
    main()
