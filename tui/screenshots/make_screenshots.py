"""Regenerate the README's screenshots from real runs.

    python tui/screenshots/make_screenshots.py [--demo]

Where the published benchmark is present (``../shared/published-benchmark/
llm_programming_tests`` beside the repository, or the folder
``$BENCHTUI_PUBLISHED`` names), the screenshots show a scratch copy of it: the
copy is scanned, every answer is run in the sandbox (CPU), the judge grades
of its README are imported, and a few human grades are recorded. Without it
(or with ``--demo``), the same is done on a copy of the demo workbench
(models/ and challenges/, judge grades from models/JUDGES.md). Either way one
SVG per screen is saved here; the published folder and the repository's own
store.db are never written to. (The snapshot tests use fixed, made-up
results instead, so that they stay byte-identical between runs.)
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

from benchtui.grading.grades import set_grade  # noqa: E402
from benchtui.grading.judge_import import import_markdown  # noqa: E402
from benchtui.runner.orchestrate import run_answers  # noqa: E402
from benchtui.store.database import Store  # noqa: E402
from benchtui.workbench.layout import find_workbench  # noqa: E402
from benchtui.workbench.scan import scan_workbench  # noqa: E402

os.environ["BENCHTUI_GRADER"] = "reviewer"  # the human grader the screenshots show
SIZE = (120, 34)
HUMAN = [("demo-careful", "backwards", "A-"), ("demo-careful", "flash_attention", "A"), ("demo-careful", "dflash_verify", "A-"),
         ("demo-hasty", "dflash_verify", "C-"), ("demo-hasty", "beam_search", "C"), ("demo-hasty", "backwards", "B-"),
         ("demo-quitter", "backwards", "B")]


PUBLISHED = Path(os.environ.get("BENCHTUI_PUBLISHED") or REPO.parent / "shared" / "published-benchmark" / "llm_programming_tests")
# The published README credits its grades to this judge in its Methodology section.
PUBLISHED_JUDGE = "DeepSeek V4 Pro"


def prepare_published(root: Path):
    """A scratch copy of the published benchmark, scanned, run, with its judge's grades
    (no human grades: nobody graded these answers by hand)."""
    from benchtui.grading.judge_import import ImportError_

    shutil.copytree(PUBLISHED, root, ignore=shutil.ignore_patterns("store.db*", ".git"))
    for path in [root, *root.rglob("*")]:  # the shared folder is read-only; the copy needs a store
        if not path.is_symlink():
            path.chmod(path.stat().st_mode | 0o200)
    wb = find_workbench(str(root), None, root)
    with Store(wb.store_path) as store:
        scan_workbench(wb, store)
        pairs = [(a["model"], a["challenge"]) for a in store.answers()]
    run_answers(wb, pairs, jobs=2, backend="cpu")
    with Store(wb.store_path) as store:
        try:
            import_markdown(store, root / "README.md")
        except ImportError_:  # the README names its judge in prose only
            import_markdown(store, root / "README.md", grader=PUBLISHED_JUDGE)
    return wb


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


def show_errors(screen) -> None:
    """The transcript on its errors filter, the cursor on the first repaired line (no toast)."""
    screen.filter_mode = "errors"
    screen.rebuild()
    view = screen.query_one("#transcript-view")
    view.move_to(next((i for i, r in enumerate(view.rows) if r.kind == "warn"), 0))


PUBLISHED_SHOTS = {
    "matrix": [],
    "answer": [lambda app: app.open_answer("glm5", "fuse")],
    "transcript": [lambda app: app.open_transcript("qwen36", "kv", "session.jsonl"), lambda app: show_errors(app.screen)],
    "compare": [lambda app: app.open_compare("glm5", "backwards", "qwen36"), "n"],
    "grades": [lambda app: app.open_grades("qwen36", "dflash_verify")],
    "runs": [lambda app: app.open_runs([("qwen36", "kv")], "answer")],
    "leaderboard": [lambda app: app.open_leaderboard()],
}


async def shoot(wb, shots: dict | None = None) -> None:
    from benchtui.tui.app import BenchApp

    shots = shots or {
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
    published = PUBLISHED.is_dir() and "--demo" not in sys.argv[1:]
    with tempfile.TemporaryDirectory() as tmp:
        if published:
            print(f"from a scratch copy of {PUBLISHED}")
            wb = prepare_published(Path(tmp) / "published")
            asyncio.run(shoot(wb, PUBLISHED_SHOTS))
        else:
            print(f"{PUBLISHED} is absent: from the demo workbench")
            wb = prepare(Path(tmp) / "wb")
            asyncio.run(shoot(wb))


if __name__ == "__main__":
    main()
