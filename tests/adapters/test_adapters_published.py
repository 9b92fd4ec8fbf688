"""The adapters shipped for the published benchmark's answers, through the
real pipeline (sandbox, scratch copies): each binds its answer (read from the
published benchmark's own run, tests/conftest.py), none binds a changed answer, and none hides a bug (a copy of the answer with one logic
line broken, adapter re-keyed to it, fails).

Skipped when ``<repo>/../shared/published-benchmark`` is absent. The kv
suite's memory and speed scenarios are shrunk in a copy of the challenge so
the pure-Python answer stays quick; the checks themselves are unchanged.
"""
from __future__ import annotations

import hashlib
import importlib.util
import re
import shutil
from pathlib import Path

import pytest
from benchtui.runner.orchestrate import run_answers
from benchtui.store.database import Store
from benchtui.workbench.layout import find_workbench
from benchtui.workbench.scan import scan_workbench

REPO = Path(__file__).resolve().parents[2]
PUBLISHED = REPO.parent / "shared" / "published-benchmark" / "llm_programming_tests"
# The published ternary answers import mlx_lm too: the ternary extra.
HAS_MLX = all(importlib.util.find_spec(m) is not None for m in ("mlx", "mlx_lm"))

# answer -> the verdict it gets with its adapter (see the adapters' docstrings for why)
EXPECTED = {
    ("glm5", "kv"): "fail",  # one token at a time is right; its multi-token (prefill) path is not causal
    ("opus47_1m", "kv"): "pass",
    ("qwen36", "kv"): "fail",  # its variable-length mask lets a decode step see only position 0
    ("minimax-m2.7", "kv"): "fail",  # its own engine and stack keep only the newest K / V
    # their own loops run from a stand-in for the hub checkpoint; the checker measures what they taught
    ("glm5", "ternary_training"): "pass",
    ("glm5.1", "ternary_training"): "pass",
    ("kimi-k2.6", "ternary_training"): "fail",  # its embedding stays full precision (the prompt: ALL layers)
    ("opus47_1m", "ternary_training"): "fail",  # its embedding and tied head stay full precision
    ("qwen36", "ternary_training"): "fail",  # its loop teaches each position the byte before it
}

SMALL_KV = {"speed_lengths": "[20, 12, 28, 6]", "speed_heads": "2", "speed_head_dim": "8",
            "speed_steps": "4", "timing_budget_s": "0.05"}

pytestmark = [pytest.mark.sandbox,
              pytest.mark.skipif(not PUBLISHED.is_dir(), reason=f"no published benchmark at {PUBLISHED}")]


def set_thresholds(toml: Path, values: dict[str, str]) -> None:
    text = toml.read_text()
    for key, value in values.items():
        text, n = re.subn(rf"(?m)^{key}\s*=.*$", f"{key} = {value}", text)
        assert n == 1, f"{key} not found in {toml}"
    toml.write_text(text)


def make_workbench(root: Path, answers) -> Path:
    for model, challenge in answers:
        shutil.copytree(PUBLISHED / model / challenge, root / model / challenge)
    shutil.copytree(REPO / "challenges", root / "challenges")
    set_thresholds(root / "challenges" / "kv" / "challenge.toml", SMALL_KV)
    set_thresholds(root / "challenges" / "ternary_training" / "challenge.toml", {"timing_budget_s": "0.05"})
    return root


def run(root: Path, pairs) -> dict:
    wb = find_workbench(str(root), None, Path.cwd())
    with Store(wb.store_path) as store:
        scan_workbench(wb, store, index_transcripts=False)
    events = run_answers(wb, list(pairs), jobs=2, self_check=False, seed=7)
    out = {}
    with Store(wb.store_path) as store:
        for e in events:
            checks = store.query("select name, verdict, message from checks where run_id = ? order by position", (e.run_id,))
            out[(e.model, e.challenge)] = (e.verdict, {c["name"]: (c["verdict"], c["message"]) for c in checks})
    return out


@pytest.mark.published
@pytest.mark.xdist_group("published_run")
def test_each_shipped_adapter_binds_its_answer(published_run):
    """Read from the published benchmark's own run (tests/conftest.py), which runs every
    answer with the shipped adapters: each binds its answer and gets its verdict."""
    results = {pair: ({e.verdict for e in published_run["events"] if (e.model, e.challenge) == pair}.pop(),
                      {name: (row["verdict"], row["message"]) for name, row in published_run["checks"][pair].items()})
               for pair in EXPECTED}
    for pair in EXPECTED:
        verdict, checks = results[pair]
        assert checks["adapter"][0] == "info" and "plugin adapter" in checks["adapter"][1], (pair, checks.get("adapter"))
        assert "unbound" not in {v for v, _ in checks.values()}, (pair, checks)
        assert verdict == EXPECTED[pair], (pair, verdict, checks)
    assert results[("qwen36", "kv")][1]["decode_matches_full_attention"][0] == "fail"
    assert results[("glm5", "kv")][1]["multi_token_causal"][0] == "fail"
    assert results[("glm5", "kv")][1]["decode_matches_full_attention"][0] == "pass"
    assert results[("minimax-m2.7", "kv")][1]["decode_matches_full_attention"][0] == "fail"
    for model in ("glm5", "glm5.1", "kimi-k2.6", "opus47_1m", "qwen36"):
        checks = results[(model, "ternary_training")][1]
        assert checks["ternary_block_projections"][0] == "pass", (model, checks["ternary_block_projections"])
        if model != "kimi-k2.6":  # the adapter drove the answer's own loop
            assert checks["smoke_weights_ternary"][0] == "pass", (model, checks["smoke_weights_ternary"])
            assert checks["smoke_learns_next_token"][0] == ("fail" if model == "qwen36" else "pass"), (model, checks)
    kimi = results[("kimi-k2.6", "ternary_training")][1]
    assert kimi["smoke_run"][0] == "info" and "train_pathb.py" in kimi["smoke_run"][1], kimi["smoke_run"]
    assert "embed_tokens" in kimi["ternary_embeddings_and_head"][1]


def break_line(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def rekey(adapter: Path, target: Path, answer: Path) -> None:
    """A copy of ``adapter`` whose ANSWER_SHA256 names ``answer``'s current files."""
    text = adapter.read_text()
    for rel, digest in re.findall(r'"([^"]+)": "([0-9a-f]{64})"', text):
        text = text.replace(digest, hashlib.sha256((answer / rel).read_bytes()).hexdigest())
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)


MUTANTS = [
    # (model, challenge, file, logic line, broken line, the check that must fail)
    ("glm5", "kv", "kv_cache.py", "scale = 1.0 / math.sqrt(q.shape[-1])", "scale = 1.0 / q.shape[-1]",
     "decode_matches_full_attention"),
    ("glm5.1", "ternary_training", "ternary_model.py", "scales = mx.mean(mx.abs(grouped), axis=-1, keepdims=True)",
     "scales = mx.max(mx.abs(grouped), axis=-1, keepdims=True)", "quantize_group_scale"),
    # its loop computes the loss but never takes an optimizer step: the adapter that drives main() does not hide it
    ("opus47_1m", "ternary_training", "ternary_train.py", "optimizer.update(model, grads)", "optimizer.state",
     "smoke_loss_falls"),
]


def test_an_adapter_does_not_hide_a_bug_nor_bind_a_changed_answer(tmp_path):
    mutants = [m for m in MUTANTS if HAS_MLX or m[1] != "ternary_training"]
    root = make_workbench(tmp_path / "wb", [(m, c) for m, c, *_ in mutants])
    for model, challenge, rel, old, new, _ in mutants:
        break_line(root / model / challenge / rel, old, new)
    pairs = [(m, c) for m, c, *_ in mutants]
    # the shipped adapters are keyed to the published files: stale, not used
    stale = run(root, pairs)
    for model, challenge, rel, *_ in mutants:
        verdict, checks = stale[(model, challenge)]
        assert checks["adapter"][0] == "unbound" and "stale" in checks["adapter"][1] and rel in checks["adapter"][1]
    # the same adapters re-keyed to the broken copies (workbench adapters win): the run fails
    for model, challenge, *_ in mutants:
        rekey(REPO / "challenges" / challenge / "adapters" / f"{model}.py",
              root / ".benchtui" / "adapters" / challenge / f"{model}.py", root / model / challenge)
    broken = run(root, pairs)
    for model, challenge, rel, old, new, check in mutants:  # noqa: B007 - the unpacking names the tuple's fields
        verdict, checks = broken[(model, challenge)]
        assert checks["adapter"][0] == "info" and "workbench adapter" in checks["adapter"][1]
        assert verdict == "fail" and checks[check][0] == "fail", (model, challenge, checks)
