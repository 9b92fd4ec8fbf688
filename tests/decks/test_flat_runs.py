"""Every run file of a KernelBench-Hard deck is read or named: a file directly in
public/runs/ (not under a GPU's folder) is imported where its result file,
leaderboard row or annotation says it is this GPU's run, and listed as left out,
with why, where none does or one names another GPU."""
from __future__ import annotations

import shutil

import deck_kit as K
from benchtui.decks import kernelbench_hard
from benchtui.decks.importer import import_deck


def test_flat_run_files_are_imported_or_named(tmp_path):
    deck = K.hard_deck(tmp_path / "deck")
    flat = deck / "public" / "runs"
    # annotated as an h100 run, its file not under h100/: imported
    (flat / f"{K.MISSING_RUN}_solution.py.txt").write_text(K.SOLUTION.format(tag="flat", k=3))
    # annotated as a B200 run: left out, saying so
    (flat / f"{K.OTHER_GPU_RUN}_solution.py.txt").write_text(K.SOLUTION.format(tag="b200", k=2))
    # nothing says where it ran: left out, saying so
    (flat / "20260105_000000_codex_gpt-9_01_tiny_double_solution.py.txt").write_text(K.SOLUTION.format(tag="?", k=2))
    d = kernelbench_hard.read_deck(deck, "h100")
    assert K.MISSING_RUN in {r.run_id for r in d.runs}
    assert K.OTHER_GPU_RUN not in {r.run_id for r in d.runs}
    said = [n for n in d.notes if "directly in public/runs/" in n]
    assert any(n.startswith("1 run files directly in public/runs/ (not under h100/) are h100 runs") for n in said), said
    left = next(n for n in said if "left out" in n)
    assert left.startswith("2 run files directly in public/runs/ left out")
    assert f"{K.OTHER_GPU_RUN}_solution.py.txt (its annotation says B200, not h100)" in left
    assert "20260105_000000_codex_gpt-9_01_tiny_double_solution.py.txt (no result file, leaderboard row or " \
           "annotation says which GPU it ran on)" in left
    result = import_deck(d, tmp_path / "wb")
    assert not any(f"{K.MISSING_RUN}" in n and "does not hold" in n for n in result.notes)


def test_a_published_run_file_moved_out_of_its_gpu_folder_is_still_imported(any_kbh_deck, tmp_path):
    whole = kernelbench_hard.read_deck(any_kbh_deck, "h100")
    runs = any_kbh_deck / "public" / "runs"
    moved = sorted((runs / "h100").glob("*_solution.py.txt"))[:3]
    for path in moved:
        shutil.move(path, runs / path.name)
    d = kernelbench_hard.read_deck(any_kbh_deck, "h100")
    assert sorted(r.run_id for r in d.runs) == sorted(r.run_id for r in whole.runs)
    assert any(n.startswith(f"{len(moved)} run files directly in public/runs/") for n in d.notes), d.notes
