"""Other benchmarks' decks (``benchtui import``): each import, the deck's
published result per run, and its annotations.

- ``deck_imports``: one row per import: the deck, its path and commit, the
  GPU folder, counts, and the report's lines (JSON).
- ``deck_results``: one row per published run (unique per deck and run id),
  keyed to benchtui's (model, challenge) by name like grades and notes: the
  deck's PASS/FAIL and reason, peak_fraction, per-shape figures and session
  statistics (JSON), the leaderboard's own figures, the answer file's
  original path and sha256, and the deck's commit. ``has_answer`` is 0 for
  a published result whose run left no answer file.
- ``deck_annotations``: a person's verdict on a run (clean, reward_hack, ...),
  its summary, peak_fraction and the annotation as written (JSON); each
  quote is also a note on those lines of the answer (``notes``).
"""
import sqlite_utils


def apply(db: sqlite_utils.Database) -> None:
    db["deck_imports"].create(
        {"id": int, "deck": str, "title": str, "path": str, "deck_commit": str, "gpu": str,
         "imported_at": str, "challenges": int, "answers": int, "results": int, "annotations": int,
         "problems": str, "notes": str},
        pk="id", not_null={"deck"},
    )
    db["deck_results"].create(
        {"id": int, "deck": str, "run_id": str, "model": str, "challenge": str, "problem": str,
         "harness": str, "deck_model": str, "effort": str, "has_answer": int, "has_result": int,
         "correct": int, "failure_reason": str, "peak_fraction": float, "speedup": float,
         "shapes": str, "stats": str, "regime": str, "precision": str,
         "peak_tflops": float, "peak_bw_gbps": float,
         "board_label": str, "board_correct": int, "board_peak_fraction": float,
         "annotation_verdict": str, "source_path": str, "sha256": str, "deck_commit": str,
         "import_id": int, "imported_at": str},
        pk="id", not_null={"deck", "run_id"},
    )
    db["deck_results"].create_index(["deck", "run_id"], unique=True)
    db["deck_results"].create_index(["model", "challenge"])
    db["deck_annotations"].create(
        {"id": int, "deck": str, "run_id": str, "model": str, "challenge": str, "source": str,
         "verdict": str, "summary": str, "peak_fraction": float, "auditor": str, "quotes": int,
         "body": str, "import_id": int, "imported_at": str},
        pk="id", not_null={"deck", "run_id", "source"},
    )
    db["deck_annotations"].create_index(["deck", "run_id", "source"], unique=True)
    db["deck_annotations"].create_index(["model", "challenge"])
