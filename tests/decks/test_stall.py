"""A call that never returns is a ``timeout``, not "too slow for this CPU": that
is said only from calls that finished, with their projection shown."""
from __future__ import annotations

import contextlib
from pathlib import Path

import deck_kit
import pytest
from benchtui.cli import main
from benchtui.decks import kernelbench
from benchtui.decks.importer import import_deck
from benchtui.store.database import Store

CHALLENGE = "kb_l1_p1_tiny_double"
# right on its first call, then never returns: every signal blocked, so only the checker's clock can stop it
STALL = """import signal
import time
import torch.nn as nn

CALLS = [0]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a):
        CALLS[0] += 1
        if CALLS[0] > 1:
            signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
            while True:
                time.sleep(0.5)
        return a * 2
"""


@pytest.mark.sandbox
def test_a_forward_that_never_returns_is_a_timeout_not_too_slow(tmp_path, capsys):
    pytest.importorskip("torch")
    deck = deck_kit.kernelbench_deck(tmp_path / "deck")
    root = tmp_path / "wb"
    import_deck(kernelbench.read_deck(deck, runs=deck / "runs", commit=deck_kit.KB_COMMIT), root)
    folder = root / "models" / "stall" / CHALLENGE
    folder.mkdir(parents=True)
    (folder / "solution.py").write_text(STALL)
    for argv in (("scan",), ("run", "-c", CHALLENGE, "-m", "stall", "--backend", "cpu", "--timeout", "20",
                             "--no-self-check")):
        with contextlib.suppress(SystemExit):
            main(["--workbench", str(root), *argv])
    capsys.readouterr()
    with Store(Path(root) / "store.db") as store:
        run = store.query("select verdict, duration_s from runs where model = 'stall' order by id desc limit 1")[0]
        checks = {c["name"]: c for c in store.query(
            "select name, verdict, message from checks where run_id = (select max(id) from runs where model = 'stall')")}
    first = checks["deck_seeds:shape0"]
    assert (run["verdict"], first["verdict"]) == ("timeout", "timeout"), (run, first, checks.get("run"))
    assert "did not return within" in first["message"] and "after 1 call(s) returned" in first["message"], first
    assert not any((c["message"] or "").startswith("too slow") or c["verdict"] == "skipped" for c in checks.values())
    # the checker ended the run itself, naming the call: the run's limit did not have to stop it
    assert "run" not in checks, checks
