"""The whole demo workbench through the real pipeline (sandbox, self-check):
every demo answer gets the verdict its mistakes deserve, with the checks that
catch them, and no answer folder changes."""
from __future__ import annotations

from pathlib import Path

import pytest
from benchtui.runner.orchestrate import run_answers, tree_digest
from benchtui.store.database import Store
from benchtui.verify.cuda import build as cuda_build
from benchtui.workbench.layout import find_workbench
from benchtui.workbench.scan import scan_workbench

pytestmark = pytest.mark.sandbox

# nvcc compiles without a GPU; where there is none (NVCC=none, most laptops) the compile is skipped
HAS_NVCC = cuda_build.find_nvcc() is not None
FUSE_BROKEN = "compile_error" if HAS_NVCC else "skipped"


def nvcc_check(cu: str) -> set[str]:
    """The check that does not pass: the file's compile, or the one saying nvcc is missing."""
    return {f"nvcc_compile:{cu}" if HAS_NVCC else "nvcc_compile"}

# (model, challenge): (verdict, checks that must not pass)
EXPECTED = {
    ("demo-careful", "backwards"): ("pass", set()),
    ("demo-careful", "fuse"): ("skipped", set()),  # compiles; its GPU checks need a GPU
    ("demo-careful", "kv"): ("pass", set()),
    ("demo-careful", "beam_search"): ("pass", set()),
    ("demo-careful", "flash_attention"): ("pass", set()),
    ("demo-careful", "flash_attention_bwd"): ("pass", set()),
    ("demo-careful", "dflash_verify"): ("pass", set()),
    ("demo-careful", "ternary_training"): ("pass", set()),
    ("demo-hasty", "backwards"): ("fail", {"huge_mean_tiny_variance", "float32"}),
    ("demo-hasty", "fuse"): (FUSE_BROKEN, nvcc_check("fused_softmax_topk.cu")),
    ("demo-hasty", "kv"): ("fail", {"decode_matches_full_attention", "padding_isolated"}),
    ("demo-hasty", "beam_search"): ("fail", {"eos_retention"}),
    ("demo-hasty", "flash_attention"): ("fail", {"causal_256_tile64", "uneven_tiles"}),
    ("demo-hasty", "flash_attention_bwd"): ("fail", {"gradients_vs_reference"}),
    ("demo-hasty", "dflash_verify"): ("fail", {"golden_rule"}),
    ("demo-hasty", "ternary_training"): ("fail", {"quantize_group_scale"}),
    ("demo-quitter", "backwards"): ("pass", set()),
    ("demo-quitter", "fuse"): (FUSE_BROKEN, nvcc_check("kernel.cu")),
    ("demo-quitter", "kv"): ("no_answer", set()),
    ("demo-quitter", "dflash_verify"): ("unbound", {"bind_verify_and_accept"}),
    # the demo workbench's own challenge (README: "Adding your own challenge"), deployed to every model
    ("demo-careful", "top_p"): ("pass", set()),
    # both compile; demo-hasty's dropped block on a boundary shows only on a GPU
    # (tests/challenges/test_challenge_paged_attention.py, -m gpu)
    ("demo-careful", "paged_attention"): ("skipped", set()),
    ("demo-hasty", "paged_attention"): ("skipped", set()),
    ("demo-hasty", "top_p"): ("fail", {"fixed_crossing_token", "fixed_tiny_p", "p_one_keeps_all"}),
    ("demo-quitter", "top_p"): ("no_answer", set()),
}


def test_demo_matrix_verdicts(demo_workbench: Path):
    wb = find_workbench(str(demo_workbench), None, Path.cwd())
    with Store(wb.store_path) as store:
        scan_workbench(wb, store)
        pairs = [(a["model"], a["challenge"]) for a in store.answers()]
    assert set(pairs) == set(EXPECTED)
    before = tree_digest(demo_workbench / "models")
    events = run_answers(wb, pairs, jobs=2, backend="cpu")
    assert tree_digest(demo_workbench / "models") == before
    got = {(e.model, e.challenge): e for e in events}
    with Store(wb.store_path) as store:
        for key, (verdict, failing) in EXPECTED.items():
            event = got[key]
            checks = {c["name"]: c["verdict"] for c in store.query("select name, verdict from checks where run_id = ?", (event.run_id,))}
            assert event.verdict == verdict, (key, checks)
            not_passing = {name for name, v in checks.items() if v not in ("pass", "info")}
            assert failing <= not_passing, (key, not_passing)
        hasty = store.query("select self_status, self_exit_code from runs where model = 'demo-hasty' and challenge = 'dflash_verify'")[0]
        # its own tests pass: the answer's claims about itself are not evidence
        assert (hasty["self_status"], hasty["self_exit_code"]) == ("pass", 0)
