"""ternary_training adapter for glm5.1 (published benchmark): its
ternarize_ste (ternary_model.py), the projection every TernaryLinear /
TernaryEmbedding of its model applies on the forward pass.

Translation only: ternary_quantize and ste_quantize call
ternarize_ste(W, group_size) unchanged (forward value: the ternary weights;
gradient: identity, through W + stop_gradient(W_t - W)).

smoke_run drives train.py's own path below its main(): load_model_and_tokenizer
(its conversion of the loaded checkpoint into its ternary Model),
prepare_dataset (its train/validation split and sequences) and train (its
AdamW loop with warm-up, loss and STE), unchanged. main() itself is not
called: it pins MLX to the GPU (mx.set_default_device(mx.gpu), train.py:373,
which raises where MLX has no GPU backend, as here) and keeps the trained
model to itself. What the adapter supplies:
- mlx_lm.load("Qwen/Qwen3-0.6B"), which the sandbox cannot reach, answers with
  mlx_lm's own Qwen3 at the smoke size (hidden 128, 2 blocks, 256 byte ids)
  with mlx_lm's random initialisation (no pretrained weights) and a byte
  tokenizer (ids are UTF-8 bytes: the checker's tokenisation). Its own
  Model() starts the embedding at zeros (ternary_model.py:94) for a checkpoint
  to overwrite; without one no gradient ever moves it;
- prepare_dataset reads ./train_data.txt: it runs in a temporary folder
  holding the checker's text;
- train's arguments: num_steps, batch_size=4, seq_len 64, warmup_steps N/10
  (its default is 20 of 200), lr=1e-3 (the smoke learning rate every
  adapter uses; its own default is 3e-4), eval_every=0.
steps=0 returns the converted model without calling train.
smoke_evaluate runs its evaluate (train.py) on the checker's held-out windows.
architecture_model runs its load_model_and_tokenizer (train.py: its conversion
of a loaded Qwen3 checkpoint into its ternary Model) on the checker's stand-in
checkpoint holding the checker's weights; architecture_cache gives the mlx_lm
KV cache its Attention is written for (cache.offset, cache.update_and_fetch).
"""
from __future__ import annotations

import contextlib
import io
import os
import tempfile
from pathlib import Path

from benchtui.api import smoke_checkpoint as checkpoint
from benchtui.api import weights_checkpoint
from ternary_model import Model, ModelArgs, ternarize_ste

ANSWER_SHA256 = {
    "ternary_model.py": "27b9e2df04b1614c7f9b26a135dbde8c83a88c22eeef930ebc2e3575ed554bba",
    "train.py": "dca83ec19a7c75b2effebbd097f3fbbb133ae8cec3a49df8a3ab12c3b418ccb3",
}
BATCH, SEQ_LEN, LR = 4, 64, 1e-3
PROJECTIONS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


def ternary_quantize(w, group_size=128):
    return ternarize_ste(w, group_size)


def ste_quantize(w, group_size=128):
    return ternarize_ste(w, group_size)


def ternary_layers():
    """Its Model (Qwen3 with tied embeddings) at a small size: the prompt's layers."""
    return _prompt_layers(Model(ModelArgs(model_type="qwen3", hidden_size=128, num_hidden_layers=1, intermediate_size=256, num_attention_heads=2, num_key_value_heads=1, vocab_size=256, head_dim=64)))


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
    """Its load_model_and_tokenizer, prepare_dataset and train, `steps` steps on `text`."""
    import mlx.core as mx
    import mlx_lm
    import train

    mx.random.seed(seed)  # its batch order: mx.random.permutation
    folder = Path(tempfile.mkdtemp(prefix="glm51-smoke-"))
    (folder / "train_data.txt").write_text(text, encoding="utf-8")
    saved, here = mlx_lm.load, os.getcwd()
    mlx_lm.load = _checkpoint
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            model, tokenizer, args = train.load_model_and_tokenizer("Qwen/Qwen3-0.6B")
            if steps:
                os.chdir(folder)
                train_inputs, train_targets = train.prepare_dataset(tokenizer, seq_len=SEQ_LEN, split="train")
                val_inputs, val_targets = train.prepare_dataset(tokenizer, seq_len=SEQ_LEN, split="validation")
                train.train(model, tokenizer, args, train_inputs, train_targets, val_inputs, val_targets,
                            num_steps=steps, batch_size=BATCH, lr=LR, warmup_steps=max(1, steps // 10), eval_every=0)
    finally:
        mlx_lm.load = saved
        os.chdir(here)
    return model


def smoke_evaluate(model, text):
    """Its own validation figure: train.py's evaluate (the mean next-token
    cross-entropy its EVAL lines and validation perplexity come from) on the
    windows of 64 byte ids of `text`, inputs and targets as prepare_dataset
    pairs them (targets one to the right)."""
    import mlx.core as mx
    import numpy as np
    import train

    data = np.frombuffer(text.encode("utf-8"), dtype=np.uint8).astype(np.int32)
    n = (len(data) - 1) // SEQ_LEN
    chunk = data[np.arange(n)[:, None] * SEQ_LEN + np.arange(SEQ_LEN + 1)]
    return train.evaluate(model, mx.array(chunk[:, :-1]), mx.array(chunk[:, 1:]), batch_size=BATCH)


def smoke_layers(model):
    """{name: ("linear", layer, layer)}: every block's projections of the trained model."""
    return {n: ("linear", m, m) for n, m in model.named_modules() if n.split(".")[-1] in PROJECTIONS}


def architecture_model(weights, config):
    """Its load_model_and_tokenizer on a checkpoint holding `weights` at `config`."""
    import mlx_lm
    import train

    saved = mlx_lm.load
    mlx_lm.load = lambda name, *args, **kwargs: weights_checkpoint(weights, config)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            model, _, _ = train.load_model_and_tokenizer("Qwen/Qwen3-0.6B")
    finally:
        mlx_lm.load = saved
    return model


def architecture_cache(model):
    """An empty mlx_lm KV cache per block, the cache its Attention takes."""
    from mlx_lm.models.cache import KVCache

    return [KVCache() for _ in model.layers]
