"""demo: the bundled demo workbench, without a clone."""
from __future__ import annotations

import shlex
import shutil
from pathlib import Path

from benchtui.commands.context import CommandError, UsageError
from benchtui.commands.dashboard import no_terminal, open_dashboard
from benchtui.host import resources

SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", "store.db*", "*.db-wal", "*.db-shm")


def register(sub) -> None:
    p = sub.add_parser("demo", help="copy the bundled demo workbench to DIR (default: the user data folder) and open it")
    p.add_argument("dir", nargs="?", metavar="DIR", help="where the demo workbench goes (default: USER_DATA/demo)")
    p.add_argument("--no-open", action="store_true", help="only put the workbench there and say where it is")
    p.set_defaults(func=cmd_demo)


def place_demo(target: Path) -> tuple[Path, bool]:
    """Copy the demo's model folders to TARGET/models; a workbench already
    there is kept as it is (its store, grades and edits are the user's).
    Returns (target, whether it was copied now)."""
    target = target.expanduser().resolve()
    if refusal := resources.refuse_install_write(target):
        raise CommandError(refusal)
    if (target / "models").is_dir():
        demo = {p.name for p in resources.bundled_demo_models().iterdir() if p.is_dir()}
        own = sorted(p.name for p in (target / "models").iterdir() if p.is_dir() and p.name not in demo)
        if own:  # someone's own workbench: the demo is not there, and nothing is copied into it
            raise CommandError(f"{target} is a workbench of your own (models: {', '.join(own[:4])}"
                               f"{' ...' if len(own) > 4 else ''}), not the demo: nothing was copied; "
                               "`benchtui demo DIR` takes an empty or new folder")
        return target, False
    if target.exists() and not target.is_dir():
        raise UsageError(f"{target} is a file, not a folder; pick an empty or new folder for the demo")
    if target.exists() and any(target.iterdir()):
        raise CommandError(f"{target} exists and is not empty; pick an empty or new folder for the demo")
    source = resources.bundled_demo_models()
    if not source.is_dir():
        raise CommandError(f"the bundled demo workbench is missing ({source}); reinstall benchtui")
    try:
        target.mkdir(parents=True, exist_ok=True)
        shutil.copytree(source, target / "models", ignore=SKIP)
        for folder in demo_own_challenges():
            shutil.copytree(folder, target / "challenges" / folder.name, ignore=SKIP)
    except OSError as exc:
        raise CommandError(f"cannot write the demo workbench to {target}: {exc.strerror or exc}") from exc
    return target, True


def demo_own_challenges() -> list[Path]:
    """Bundled-folder challenges marked ``bundled = false``: the demo
    workbench's own (its worked example), which travel with the demo."""
    from benchtui.challenges.definition import load_challenges

    return [c.path for c in load_challenges(resources.bundled_challenges()).values()
            if c.raw.get("bundled", True) is False]


def cmd_demo(args, ctx) -> int:
    target, copied = place_demo(Path(args.dir) if args.dir else resources.user_data_dir() / "demo")
    print(f"demo workbench {'copied to' if copied else 'already at'} {target}; reopen it with: benchtui --workbench {target}")
    # commands read the workbench in the current folder: the demo's is elsewhere
    print(f"from the shell: cd {shlex.quote(str(target))} && benchtui results; its judge's grades, for the grade "
          "screen and the leaderboard: benchtui grades import models/JUDGES.md")
    if args.no_open:
        return 0
    if (what := no_terminal()) is not None:  # the copy is made: that is what a script wanted
        print(f"not opening the dashboard: {what}")
        return 0
    ctx.args.workbench, ctx.args.store = str(target), None
    return open_dashboard(ctx)
