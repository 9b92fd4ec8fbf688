"""ternary_training adapter for qwen36 (published benchmark): ternarize and
ternarize_ste of train_ternary.py (the projection its TernaryLinear and
TernaryEmbedding apply on the forward pass).

Translation only: ternary_quantize calls ternarize(w, group_size) and
ste_quantize calls ternarize_ste(w, group_size), unchanged.

smoke_run drives its main() unchanged: load_qwen3_ternary (its conversion of
the loaded checkpoint), prepare_batches, AdamW with warm-up, train_step
(loss and STE), its verification and its save. What the adapter supplies:
- its command line: --steps N, --batch-size 4, --seq-len 64, --warmup-steps
  N/10 (its default is 50 of 300), --lr 1e-3 (the smoke learning rate every
  adapter uses; its own default is 5e-5), --data-file a file holding the
  checker's text, --output-dir a temporary folder, no mid-run checkpoints;
- load("Qwen/Qwen3-0.6B"), which the sandbox cannot reach, answers with
  mlx_lm's own Qwen3 at the smoke size (hidden 128, 2 blocks, 256 byte ids)
  with mlx_lm's random initialisation (no pretrained weights) and a byte
  tokenizer (ids are UTF-8 bytes: the checker's tokenisation);
- its generate_text (sample text) answers "" and its compute_perplexity (its
  own figure over up to 50,000 characters) answers nan: neither touches the
  weights, the checker measures the model itself, and on this CPU they take
  longer than the whole smoke budget.
main() returns nothing: the trained model is its own final_model.safetensors
loaded into the model load_qwen3_ternary builds. steps=0 returns
load_qwen3_ternary's model (main's first step), untrained. Its loop pairs
inputs b[1:] with labels b[:-1] (train_ternary.py:580-581): each position is
taught the token before it, which the checker's next-token loss sees.

train_ternary.py imports mlx_lm (loading Qwen3-0.6B) at the top; the
quantiser never uses it. Where mlx_lm cannot be imported (absent, or its
import-time setrlimit refused by the sandbox), a placeholder module lets the
file import; calling anything from it raises ImportError.

architecture_model runs its load_qwen3_ternary (its conversion of a loaded
Qwen3 checkpoint into its TernaryQwen3ForCausalLM) on the checker's stand-in
checkpoint holding the checker's weights. Its model takes no KV cache (its
generate_text reruns the whole sequence), so no architecture_cache.
smoke_evaluate runs its compute_perplexity (the figure its report prints) on
the checker's text with windows of 64 byte ids, and takes the log.
"""
from __future__ import annotations

import contextlib
import io
import sys
import tempfile
import types
from pathlib import Path

ANSWER_SHA256 = {
    "train_ternary.py": "ff16c1151cf669f8bee856be5fb5d34f6472193b12fb6d83a4b468d50eac138a",
}


def _placeholder_mlx_lm(*names: str) -> None:
    try:
        import mlx_lm  # noqa: F401
        return
    except Exception:  # absent, or failing at import (it raises RLIMIT_NOFILE, which a sandbox may refuse)
        pass

    def missing(*args, **kwargs):
        raise ImportError("mlx_lm cannot be imported here")

    def attribute(name):
        if name.startswith("__"):
            raise AttributeError(name)
        return missing

    for name in names:
        module = types.ModuleType(name)
        module.__getattr__ = attribute
        module.__path__ = []
        sys.modules.setdefault(name, module)


_placeholder_mlx_lm("mlx_lm")
import train_ternary  # noqa: E402
from benchtui.api import smoke_checkpoint as checkpoint
from benchtui.api import weights_checkpoint
from train_ternary import ternarize, ternarize_ste  # noqa: E402

BATCH, SEQ_LEN, LR = 4, 64, 1e-3
PROJECTIONS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


def ternary_quantize(w, group_size=128):
    return ternarize(w, group_size)


def ste_quantize(w, group_size=128):
    return ternarize_ste(w, group_size)


def ternary_layers():
    """Its TernaryQwen3ForCausalLM at a small size: the prompt's layers. Its tied
    head is not a module (the forward pass multiplies by ternarize_ste of the
    embedding): untied here, its lm_head is its own TernaryLinear."""
    from train_ternary import ModelArgs, TernaryQwen3ForCausalLM

    return _prompt_layers(TernaryQwen3ForCausalLM(ModelArgs(hidden_size=128, num_hidden_layers=1, intermediate_size=256, num_attention_heads=2, num_key_value_heads=1, vocab_size=256, head_dim=64, tie_word_embeddings=False)))


def _prompt_layers(model):
    """{name: (kind, layer, module holding its latent weight)} of the layers the prompt names,
    found by name in the answer's own module tree (no logic of its own); a
    tied head is the embedding's as_linear."""
    mods = dict(model.named_modules())

    def find(suffix):
        return next((m for n, m in mods.items() if n.split(".")[-1] == suffix), None)

    out = {}
    for name in ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"):
        m = find(name)
        if m is not None:
            out[name] = ("linear", m, m)
    embed, head = find("embed_tokens"), find("lm_head")
    if embed is not None:
        out["embed_tokens"] = ("embedding", embed, embed)
    if head is not None:
        out["lm_head"] = ("linear", head, head)
    elif embed is not None and hasattr(embed, "as_linear"):
        out["lm_head"] = ("linear", embed.as_linear, embed)
    return out


_checkpoint = checkpoint  # the stand-in for mlx_lm.load (engine/verify/smoke_stand_ins.py)


def smoke_run(text, steps, seed):
    """Its main() for `steps` steps on `text` from the stand-in checkpoint; its saved model."""
    import mlx.core as mx

    mx.random.seed(seed)
    folder = Path(tempfile.mkdtemp(prefix="qwen36-smoke-"))
    (folder / "train_data.txt").write_text(text, encoding="utf-8")
    run = {"load": _checkpoint, "generate_text": lambda *a, **k: "", "compute_perplexity": lambda *a, **k: float("nan")}
    saved = {k: getattr(train_ternary, k) for k in run}
    argv = sys.argv
    for k, v in run.items():
        setattr(train_ternary, k, v)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            if steps == 0:  # main's first step, and no training
                return train_ternary.load_qwen3_ternary("Qwen/Qwen3-0.6B")[0]
            sys.argv = ["train_ternary.py", "--steps", str(steps), "--batch-size", str(BATCH), "--seq-len", str(SEQ_LEN),
                        "--warmup-steps", str(max(1, steps // 10)), "--lr", str(LR), "--data-file", str(folder / "train_data.txt"),
                        "--output-dir", str(folder / "output"), "--save-every", str(10**9)]
            train_ternary.main()
            model = train_ternary.load_qwen3_ternary("Qwen/Qwen3-0.6B")[0]
        model.load_weights(str(folder / "output" / "final_model.safetensors"))
        return model
    finally:
        sys.argv = argv
        for k, v in saved.items():
            setattr(train_ternary, k, v)


def smoke_layers(model):
    """{name: ("linear", layer, layer)}: every block's projections of the trained model."""
    return {n: ("linear", m, m) for n, m in model.named_modules() if n.split(".")[-1] in PROJECTIONS}


def architecture_model(weights, config):
    """Its load_qwen3_ternary on a checkpoint holding `weights` at `config`."""
    saved = train_ternary.load
    train_ternary.load = lambda name, *args, **kwargs: weights_checkpoint(weights, config)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            return train_ternary.load_qwen3_ternary("Qwen/Qwen3-0.6B")[0]
    finally:
        train_ternary.load = saved


def smoke_evaluate(model, text):
    """Its own validation figure: compute_perplexity on `text` (byte ids,
    windows of 64 as its prepare_batches cuts them), as a loss in nats."""
    import math

    from benchtui.api import smoke_checkpoint

    tokenizer = smoke_checkpoint("Qwen/Qwen3-0.6B")[1]
    return math.log(train_ternary.compute_perplexity(model, tokenizer, text, max_seq_len=SEQ_LEN, batch_size=BATCH))
