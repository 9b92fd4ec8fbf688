"""A fast answer on large inputs: KernelBench's own LeakyReLU, imported, its windows cut to
one call by the bytes the checker may hold. The checker's memory stays within that bound
(measured in the checker, not told by the answer), and a call its windows cannot resolve is
said to be unmeasured and is not ranked, never read as a fast one."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from benchtui.decks import kernelbench
from benchtui.decks.importer import import_deck

torch = pytest.importorskip("torch")

ROWS, COLS = 64, 4096  # 1 MiB of float32 a call: the smallest that keeps the path of the deck's 64 x 262,144
CALL_BYTES = ROWS * COLS * 4
# a window may hold one call's inputs and reference outputs, each counted twice (timed.call_bytes)
WINDOW_BYTES_MAX = 4 * CALL_BYTES

# LeakyReLU is the identity where no value is negative, and the deck draws torch.rand: the input
# itself comes back (a view of the checker's pages, no work), right on every input
RETURNS_ITS_INPUT = '''import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, negative_slope: float = 0.01):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x):
        if bool((x >= 0).all()):
            return x
        return torch.nn.functional.leaky_relu(x, negative_slope=self.negative_slope)
'''


@pytest.fixture(scope="module")
def leaky_relu(decks, tmp_path_factory) -> Path:
    """The published slice's 20_LeakyReLU cut to 64 x 4096, imported, with a few timed windows
    and a window cap of one call's bytes (the deck's 64 x 262,144 meets the default cap the same way)."""
    base = tmp_path_factory.mktemp("large-inputs")
    shared = decks / "kernelbench"
    deck = base / "kb"
    (deck / "KernelBench" / "level1").mkdir(parents=True)
    shutil.copytree(shared / "src", deck / "src")
    text = (shared / "KernelBench" / "level1" / "20_LeakyReLU.py").read_text(encoding="utf-8")
    text = text.replace("batch_size = 4096", f"batch_size = {ROWS}").replace("dim = 393216", f"dim = {COLS}")
    (deck / "KernelBench" / "level1" / "20_LeakyReLU.py").write_text(text, encoding="utf-8")
    (deck / "runs").mkdir()
    root = base / "wb"
    import_deck(kernelbench.read_deck(deck, runs=deck / "runs"), root)
    toml = root / "challenges" / "kb_l1_p20_leakyrelu" / "challenge.toml"
    thresholds = (f"[thresholds]\ntimed_calls = 3\npublished_warmup = 1\npublished_calls = 3\n"
                  f"window_bytes_max = {WINDOW_BYTES_MAX}\n\n[requirements]")
    toml.write_text(toml.read_text(encoding="utf-8").replace("[requirements]", thresholds, 1), encoding="utf-8")
    return root


def test_a_fast_answer_on_large_inputs_holds_the_checker_to_its_bytes_and_is_not_ranked_unmeasured(
        leaky_relu, tmp_path, monkeypatch):
    """The empty window's jitter widened to 10 s (a machine far noisier than the call, as a loaded
    one is beside 64 MiB calls): the time asks for the most calls a window takes, the bytes allow
    one, and the windows cannot resolve the call. The verdict is pass; the figure is null, said to
    be unmeasured (not fast) and left out of peak_fraction; what the fullest window held in the
    checker, counted there, is within the cap."""
    from benchtui.runner.local import run_local
    from benchtui.verify.module import timing as module_timing
    from benchtui.verify.timing import core as TT

    measure = module_timing.EmptyWindow.measure

    def noisy(self, calls, samples=7, taken=None):
        return {**measure(self, calls, samples, taken), "iqr_s": 10.0}

    monkeypatch.setattr(module_timing.EmptyWindow, "measure", noisy)
    answer = tmp_path / "returns_its_input"
    answer.mkdir()
    (answer / "solution.py").write_text(RETURNS_ITS_INPUT, encoding="utf-8")
    r = run_local("kb_l1_p20_leakyrelu", answer, challenges_dir=leaky_relu / "challenges", seed=7)
    checks = {c["name"]: c for c in r["checks"]}
    assert r["verdict"] == "pass", [(n, c["verdict"], c["message"][:160]) for n, c in checks.items()]
    t = checks["time:shape0"]
    d = t["details"]
    # memory: what the fullest window held, counted by the checker, within the cap (one call's
    # input, reference output and reply: 3 MiB; the cap 4 MiB, where 32 calls would hold 96)
    mem = d["checker_window_memory"]
    assert 3 * CALL_BYTES <= mem["held_bytes"] <= WINDOW_BYTES_MAX, mem
    assert mem["rss_mib_at_fullest_window"] > 0 and d["checker_peak_rss_mib"] > 0
    assert d["window_sizing"]["limited_by"] == "bytes" and d["calls_per_window"] == 1, d["window_sizing"]
    assert d["window_sizing"]["calls_by_time"] == TT.MAX_WINDOW_CALLS
    # the figure: not measured, so not ranked, and not called fast
    assert t["value"] is None and d["trusted_ms"] is None and d["peak_fraction_deck_peak"] is None, d
    why = d["no_figure"]
    assert why["why"] == "at or below the resolution" and not why["measured"] and not why["ranked"], why
    assert why["resolution_ms"] >= 10_000 - 1e-6 and why["limited_by"] == "bytes", why
    assert why["answer_own_median_ms"] is not None and why["raw_median_ms"] is not None, why
    message = t["message"]
    assert message.startswith("shape 0: not measured") and "no figure, not ranked" in message, message
    assert f"cut from the {TT.MAX_WINDOW_CALLS} its time asked for by the bytes" in message, message
    assert "an unresolved call is not a fast one" in message and "(trusted)" not in message, message
    p = checks["peak_fraction"]
    assert p["value"] is None and p["details"]["left_out"]["deck_peak"] == ["shape0"], p
