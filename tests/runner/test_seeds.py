"""Secret seeds are 128 bits: an answer cannot recover one from the inputs it
is given (by trying every seed) and so cannot predict which rows of a timed
call are checked; the store keeps the seed exactly."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
from benchtui.records import verdicts as V
from benchtui.runner import orchestrate
from benchtui.runner.orchestrate import Runner, RunOptions
from benchtui.store.database import Store
from benchtui.verify import seeds
from benchtui.verify.cuda import device as cuda_device
from benchtui.verify.suite import Suite
from benchtui.workbench.layout import find_workbench
from benchtui.workbench.scan import scan_workbench

REPO = Path(__file__).resolve().parents[2]


def test_a_run_draws_a_128_bit_seed_and_the_store_keeps_it_exactly(tmp_path, monkeypatch):
    root = tmp_path / "wb"
    shutil.copytree(REPO / "challenges" / "backwards", root / "challenges" / "backwards")
    (root / "models" / "m" / "backwards").mkdir(parents=True)
    (root / "models" / "m" / "backwards" / "ln.py").write_text("def forward(x):\n    return x\n")
    wb = find_workbench(str(root), None, Path.cwd())
    with Store(wb.store_path) as store:
        scan_workbench(wb, store, index_transcripts=False)
    drawn = []

    def execute(self, folder, challenge, model, backend, seed, *rest, **kw):
        drawn.append(seed)
        return [], V.PASS, {}

    monkeypatch.setattr(orchestrate.Runner, "_execute", execute)
    for _ in range(4):
        Runner(wb, RunOptions(backend="cpu", allow_unsafe=True, layer="rlimits")).run_all([("m", "backwards")])
    # a 31-bit seed is found by trying them all from the first input; 2^128 is out of reach
    assert len(drawn) == 4 and len(set(drawn)) == 4
    assert max(s.bit_length() for s in drawn) > 100
    with Store(wb.store_path) as store:
        stored = [seeds.from_store(r["seed"]) for r in store.query("select seed from runs order by id")]
    assert stored == drawn


def test_every_bit_of_the_seed_picks_the_inputs():
    seed = seeds.secret_seed() | (1 << 127)
    suite = lambda s: Suite(challenge_id="x", answer_dir=Path("."), challenge_dir=Path("."), model="m", seed=s)
    first = suite(seed).rng("topk-1000-1").standard_normal(64)
    for bit in (0, 63, 64, 127):
        assert not np.array_equal(first, suite(seed ^ (1 << bit)).rng("topk-1000-1").standard_normal(64)), bit
    # the device generator takes both 64-bit words
    rows = cuda_device.seeded_rows(seed, [0], 256)
    assert not np.array_equal(rows, cuda_device.seeded_rows(seed ^ (1 << 64), [0], 256))
    # a derived per-call seed is 128 bits and differs per label
    a, b = seeds.derive(seed, "call-0"), seeds.derive(seed, "call-1")
    assert a != b and max(a.bit_length(), b.bit_length()) > 100


def test_store_form_of_seeds():
    assert seeds.for_store(42) == 42 and seeds.from_store(42) == 42
    big = (1 << 127) + 12345
    assert seeds.for_store(big).startswith("0x") and seeds.from_store(seeds.for_store(big)) == big
    assert seeds.from_store(None) is None


def test_a_derived_seed_depends_on_every_bit_of_the_run_s_seed():
    """``derive`` hashes the whole 128-bit run seed: a run seed that differs only in its
    high word (bits 64-127) derives other per-call seeds, so no call's inputs are shared
    by two runs whose seeds agree in their low 64 bits."""
    seed = seeds.secret_seed()
    derived = seeds.derive(seed, "module:timed:0:0:0")
    for bit in (0, 63, 64, 100, 127):
        assert seeds.derive(seed ^ (1 << bit), "module:timed:0:0:0") != derived, bit
