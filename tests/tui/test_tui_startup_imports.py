"""Start-up: what the dashboard loads before its first frame.

`benchtui` shows the matrix from the store before anything else; the scan,
runs, grades, challenge definitions and their libraries load afterwards (the
rescan worker) or on first use. This holds the first frame to that, in a
fresh interpreter, on both workbench layouts."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from settling import wait_workers

REPO = Path(__file__).resolve().parents[2]

# Not before the first frame: each costs start-up milliseconds (sqlite_utils,
# numpy and git far more) and the matrix needs none of them.
LATER = ("benchtui.grading.grades", "benchtui.challenges.definition", "benchtui.workbench.scan", "benchtui.runner", "tomllib", "sqlite_utils",
         "numpy", "git", "pygments", "benchtui.tui.widgets.jump_palette", "rich._emoji_codes", "argparse",
         "benchtui.tui.screens.whole_frame")

PROBE = r"""
import asyncio, os, sys
from pathlib import Path
from benchtui.cli import Context, parse_args

ctx = Context(parse_args(["--workbench", sys.argv[1]]))  # what `benchtui` resolves before the app
ctx.store
ctx.close()
from benchtui.tui.app import BenchApp

async def main():
    app = BenchApp(ctx.workbench)  # no rescan: nothing runs after the first frame
    async with app.run_test(size=(140, 45)) as pilot:
        await pilot.pause()
        status = str(app.screen.query_one("#matrix-status").render()).split(" · ")[0]
        cells = app.screen.query_one("#matrix").row_count
    print(status, cells, sep="|")
    print(",".join(sorted(m for m in LATER if m in sys.modules)))

LATER = %r
asyncio.run(main())
"""


def first_frame_modules(root: Path) -> tuple[str, str]:
    out = subprocess.run([sys.executable, "-c", PROBE % (LATER,), str(root)], cwd=root, capture_output=True, text=True,
                         timeout=120, env={"BENCHTUI_CONFIG": str(root / "no-keys.toml"), "PATH": "/usr/bin:/bin",
                                           "PYTHONPATH": str(REPO)})
    assert out.returncode == 0, out.stderr[-2000:]
    shown, loaded = (out.stdout.strip().splitlines() + ["", ""])[:2]
    return shown, loaded


def test_first_frame_of_a_models_workbench_loads_nothing_it_does_not_show(demo_wb):
    shown, loaded = first_frame_modules(demo_wb.root)
    assert shown.startswith("3 models × 9 challenges|9"), shown
    assert loaded == "", f"loaded before the first frame: {loaded}"


def test_first_frame_of_a_published_workbench_loads_nothing_it_does_not_show(tmp_path):
    from benchtui.store.database import Store
    from benchtui.workbench.layout import find_workbench
    from benchtui.workbench.scan import scan_workbench

    root = tmp_path / "published"
    for model, challenge in (("glm5", "kv"), ("qwen36", "kv"), ("qwen36", "fuse")):
        (root / model / challenge).mkdir(parents=True)
        (root / model / challenge / "main.py").write_text("x = 1\n")
    # the prompt handed out, as a published benchmark keeps it: what makes the folders answers
    shutil.copyfile(REPO / "challenges" / "kv" / "PROMPT.md", root / "glm5" / "kv" / "PROMPT.md")
    (root / "analysis").mkdir()
    wb = find_workbench(str(root), None, root)
    assert wb.layout == "published"
    with Store(wb.store_path) as store:
        scan_workbench(wb, store)
    shown, loaded = first_frame_modules(root)
    assert shown.startswith("2 models × 2 challenges|2"), shown  # the bundled others no model answered: on request
    assert loaded == "", f"loaded before the first frame: {loaded}"


def test_layout_found_without_reading_challenge_files_matches_the_ids(tmp_path):
    # The folder names stand in for the ids at start-up; the bundled ones agree,
    # and a workbench whose own challenge says another id still opens by that id.
    from benchtui.challenges import definition as challenges
    from benchtui.workbench import layout as workbench

    assert workbench.BUNDLED_CHALLENGES == challenges.BUNDLED_CHALLENGES
    bundled = challenges.load_challenges(challenges.BUNDLED_CHALLENGES)
    assert {c.path.name for c in bundled.values()} == set(bundled) == workbench.challenge_folder_names(
        challenges.BUNDLED_CHALLENGES)
    root = tmp_path / "wb"
    shutil.copytree(challenges.BUNDLED_CHALLENGES / "kv", root / "challenges" / "kv_folder")
    toml = root / "challenges" / "kv_folder" / "challenge.toml"
    toml.write_text('id = "kv"\n' + "\n".join(line for line in toml.read_text().splitlines() if not line.startswith("id ")))
    (root / "m1" / "kv").mkdir(parents=True)
    found = workbench.find_workbench(str(root), None, root)
    # the workbench's kv replaces the bundled one; the other bundled eight stay
    assert (found.layout, len(found.challenges), found.challenges["kv"].path.name) == ("published", 9, "kv_folder")


async def test_first_frame_shows_the_footer_keys_and_the_rescan_waits_for_it(demo_wb):
    from benchtui.tui.app import BenchApp
    from benchtui.tui.widgets.footer import KeysFooter

    first: list = []
    app = BenchApp(demo_wb, scan_on_start=True)
    display = app._display

    def probe(screen, renderable) -> None:  # the first frame that reaches the terminal
        if renderable is not None and not app._batch_count and not first:
            footer = screen.query_one(KeysFooter)
            first.append((footer.region.height, [k[2] for k in footer.keys()],  # noqa: SIM118 - KeysFooter.keys(), not a dict
                          sorted(w.name for w in app.workers if not w.is_finished)))
        display(screen, renderable)

    app._display = probe
    async with app.run_test(size=(140, 45)) as pilot:
        for _ in range(4):
            await pilot.pause()
            await wait_workers(app)
        keys = [k[2] for k in app.screen.query_one(KeysFooter).keys()]  # noqa: SIM118 - KeysFooter.keys(), not a dict
        status = str(app.screen.query_one("#matrix-status").render())
    height, shown_keys, running = first[0]
    assert height == 1 and shown_keys == keys and "Leaders" in keys
    assert "Open" not in keys  # enter belongs to the table
    assert "reload" not in running  # the rescan starts after the first screen is out
    assert "indexed" in status  # and it did run


async def test_keys_footer_follows_focus_and_skips_same_keys():
    from benchtui.tui.widgets.footer import KeysFooter
    from textual.app import App
    from textual.binding import Binding
    from textual.widgets import Button

    class One(Button):
        BINDINGS = [Binding("x", "noop", "Ex")]

    class Two(Button):
        BINDINGS = [Binding("y", "noop", "Why")]

    class Probe(App):
        def compose(self):
            yield One("1", id="one")
            yield Two("2", id="two")
            yield KeysFooter()

    app = Probe()
    async with app.run_test(size=(80, 10)) as pilot:
        await pilot.pause()
        footer = app.screen.query_one(KeysFooter)
        assert " x Ex " in str(footer.render())
        refreshed = []
        footer.refresh = lambda *a, **k: refreshed.append(1)
        footer._bindings_changed(app.screen)  # same keys: no repaint
        assert refreshed == []
        app.screen.query_one("#two").focus()
        await pilot.pause()
        await pilot.pause()
        assert refreshed  # the signal came, with other keys
        line = str(footer.render())
        assert " y Why " in line and "Ex" not in line


def test_the_first_frame_is_let_out_before_more_work(demo_wb):
    # After the first frame the app waits (briefly, boundedly) for Textual's
    # writer thread to empty its queue, so that frame is on the terminal
    # before the next refresh and the rescan take the GIL.
    import queue
    import threading
    import time
    from types import SimpleNamespace

    from benchtui.tui.app import BenchApp

    app = BenchApp(demo_wb)
    pending: queue.Queue = queue.Queue()
    for part in ("sync on", "frame", "sync off"):
        pending.put(part)
    written = []

    def writer():
        while True:
            item = pending.get()
            time.sleep(0.002)  # a slow terminal
            written.append(item)
            if item == "sync off":
                return

    app._driver = SimpleNamespace(_writer_thread=SimpleNamespace(_queue=pending))
    thread = threading.Thread(target=writer)
    thread.start()
    app._let_the_frame_out(limit_s=1.0)
    assert pending.qsize() == 0 and written[:2] == ["sync on", "frame"]
    thread.join()

    stuck: queue.Queue = queue.Queue()
    stuck.put("never written")
    app._driver = SimpleNamespace(_writer_thread=SimpleNamespace(_queue=stuck))
    start = time.monotonic()
    app._let_the_frame_out(limit_s=0.05)
    assert time.monotonic() - start < 3.0  # bounded (limit 0.05 s): a stuck writer does not hold start-up
    app._driver = None
    app._let_the_frame_out()  # no writer thread (headless): just a short nap


def test_the_escape_key_waits_25_ms_unless_the_user_says_otherwise():
    """Textual waits ESCDELAY for the rest of an escape sequence before a lone ESC
    is the escape key (its default: 100 ms, paid by every `esc back`); the
    dashboard's package sets 25 ms before Textual is imported, and a user's own
    ESCDELAY stays."""
    probe = "import benchtui.tui.app, textual.constants as c; print(c.ESCAPE_DELAY)"
    env = {k: v for k, v in __import__("os").environ.items() if k != "ESCDELAY"}
    ours = subprocess.run([sys.executable, "-c", probe], env=env, cwd=REPO, capture_output=True, text=True, check=True)
    theirs = subprocess.run([sys.executable, "-c", probe], env={**env, "ESCDELAY": "150"}, cwd=REPO,
                            capture_output=True, text=True, check=True)
    assert float(ours.stdout) == 0.025 and float(theirs.stdout) == 0.15
