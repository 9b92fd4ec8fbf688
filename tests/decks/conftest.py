"""The two published decks (a KernelBench-Hard slice and a KernelBench slice),
found beside the repository (``../shared`` of a checkout or of its worktree
folder) or at ``$BENCHTUI_DECKS``, copied into tmp once per session; and each
imported once into a workbench the read-only tests share. Tests of behaviour
that holds for any deck take ``any_kbh_deck``/``any_kb_deck``: a deck made by
hand (deck_kit.py), always, and the published one where it is there."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import deck_kit
import pytest
from deck_fixtures import EVAL_RESULTS, kernelbench_runs

REPO = Path(__file__).resolve().parents[2]


def shared_decks() -> Path | None:
    env = os.environ.get("BENCHTUI_DECKS")
    candidates = [Path(env)] if env else []
    candidates += [p / "shared" for p in REPO.parents[:3]]
    return next((c for c in candidates if (c / "kernelbench-hard").is_dir() and (c / "kernelbench").is_dir()), None)


@pytest.fixture(scope="session")
def decks(tmp_path_factory) -> Path:
    found = shared_decks()
    if found is None:
        pytest.skip("the published decks (shared/kernelbench-hard, shared/kernelbench) are not beside this checkout; "
                    "set BENCHTUI_DECKS to their folder")
    out = tmp_path_factory.mktemp("decks")
    for name in ("kernelbench-hard", "kernelbench"):
        shutil.copytree(found / name, out / name)
    return out


@pytest.fixture
def kbh_deck(decks, tmp_path) -> Path:
    """A private copy of the KernelBench-Hard deck, for tests that break it."""
    return Path(shutil.copytree(decks / "kernelbench-hard", tmp_path / "kbh"))


@pytest.fixture(params=["handmade", "published"])
def any_kbh_deck(request, tmp_path) -> Path:
    """A private KernelBench-Hard deck to break: made by hand, or the published slice (skipped where absent)."""
    if request.param == "handmade":
        return deck_kit.hard_deck(tmp_path / "kbh")
    return request.getfixturevalue("kbh_deck")


@pytest.fixture(params=["handmade", "published"])
def any_kb_deck(request, tmp_path) -> Path:
    """A private KernelBench tree with a runs/ folder of run ``demo``: made by hand, or the published slice
    with runs made from its example answers (skipped where absent)."""
    if request.param == "handmade":
        return deck_kit.kernelbench_deck(tmp_path / "kb")
    deck = Path(shutil.copytree(request.getfixturevalue("decks") / "kernelbench", tmp_path / "kb"))
    kernelbench_runs(deck, deck / "runs", results=EVAL_RESULTS)
    return deck


@pytest.fixture(scope="session")
def kbh_imported(decks, tmp_path_factory):
    """(workbench, first import's result, second import's result) of the KernelBench-Hard deck."""
    from benchtui.decks.importer import import_deck
    from benchtui.decks.kernelbench_hard import read_deck

    root = tmp_path_factory.mktemp("kbh-wb")
    deck = decks / "kernelbench-hard"
    first = import_deck(read_deck(deck, "h100", commit="c7d9221"), root)
    second = import_deck(read_deck(deck, "h100", commit="c7d9221"), root)
    return root, first, second


@pytest.fixture(scope="session")
def kb_imported(decks, tmp_path_factory):
    """(workbench, import result) of the KernelBench deck with a runs/ folder built in tmp."""
    from benchtui.decks.importer import import_deck
    from benchtui.decks.kernelbench import read_deck

    base = tmp_path_factory.mktemp("kb")
    runs = kernelbench_runs(decks / "kernelbench", base / "runs", results=EVAL_RESULTS)
    root = base / "wb"
    result = import_deck(read_deck(decks / "kernelbench", runs=runs, commit="423217d"), root)
    return root, result
