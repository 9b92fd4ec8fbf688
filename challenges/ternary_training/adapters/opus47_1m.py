"""ternary_training adapter for opus47_1m (published benchmark): the
TernaryLinear of ternary_train.py (its static ternarize and its forward
pass with the straight-through estimator).

Translation only (a class to functions):
- ternary_quantize(w) is TernaryLinear.ternarize(w, group_size);
- ste_quantize(w) is the layer's effective weight on the forward pass: a
  TernaryLinear holding w as its latent weight, applied to the identity
  matrix (x @ W_eff.T with x = I is W_eff.T, exactly); its gradient is the
  answer's own STE (W + stop_gradient(W_t - W));
- ternary_layers() builds mlx_lm's Qwen3 at a small size and applies its
  replace_linear_with_ternary (what its main() does to Qwen3-0.6B), then
  names the layers the prompt asks about (no logic of its own).

smoke_run drives its main() unchanged: its conversion
(replace_linear_with_ternary on every block), AdamW with warm-up and cosine
decay, loss, verification and validation. Its configuration is module
constants read from the environment at import (NUM_STEPS, SEQ_LEN,
BATCH_SIZE, WARMUP_STEPS, SEED, DATA_PATH): the adapter sets them for the run
(steps N, 64, 4, N/10 (its default is 30 of 250), LR 1e-3 (the smoke learning
rate every adapter uses; its own is 5e-4), the checker's seed, a file
holding the checker's text) and puts them back after. Stand-ins:
- load("Qwen/Qwen3-0.6B"), which the sandbox cannot reach, answers with
  mlx_lm's own Qwen3 at the smoke size (hidden 128, 2 blocks, 256 byte ids)
  with mlx_lm's random initialisation (no pretrained weights) and a byte
  tokenizer (ids are UTF-8 bytes: the checker's tokenisation); main() trains
  that object in place, so it is the model returned;
- generate (mlx_lm's, sample text after training) answers "": it never
  touches the weights and the checker measures the model itself;
- __file__ points into a temporary folder, so main() writes its report.json
  there, not over the answer's own.
steps=0 cannot go through main() (its report reads losses[-1],
ternary_train.py:320): the adapter builds the model as main() does before
its loop (the stand-in, replace_linear_with_ternary on each block, latent
weights cast to float32; lines 223-236), untrained.

ternary_train.py imports mlx_lm (model loading, text generation) at the top;
the quantiser never uses it. Where mlx_lm cannot be imported (absent, or
its import-time setrlimit refused by the sandbox), placeholder modules let
the file import; calling anything from them raises ImportError.

architecture_model loads the checker's stand-in checkpoint (mlx_lm's Qwen3
holding the checker's weights) and converts it as main() does (lines 223-236:
replace_linear_with_ternary on each block, latent weights in float32): its
model is mlx_lm's Qwen3 with its TernaryLinear. architecture_cache gives the
mlx_lm KV cache that model takes.
"""
from __future__ import annotations

import contextlib
import io
import sys
import tempfile
import types
from pathlib import Path

import mlx.core as mx

ANSWER_SHA256 = {
    "ternary_train.py": "9fe887f7020689102059e864b1dfc6eb5b9efe6d7c6ce001f02692308b7356d0",
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


_placeholder_mlx_lm("mlx_lm", "mlx_lm.generate")
import ternary_train  # noqa: E402
from benchtui.api import smoke_checkpoint as checkpoint
from benchtui.api import weights_checkpoint
from ternary_train import TernaryLinear, replace_linear_with_ternary  # noqa: E402

BATCH, SEQ_LEN, LR = 4, 64, 1e-3
PROJECTIONS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


def ternary_quantize(w, group_size=128):
    return TernaryLinear.ternarize(w, group_size)


def ste_quantize(w, group_size=128):
    out_f, in_f = w.shape
    layer = TernaryLinear(in_f, out_f, group_size)
    layer.weight = w
    return layer(mx.eye(in_f, dtype=w.dtype)).T


def ternary_layers():
    """Its conversion (replace_linear_with_ternary, as its main() applies it to
    Qwen3-0.6B) on mlx_lm's Qwen3 at a small size, with Qwen3-0.6B's tied
    embeddings: {name: (kind, layer, module holding its latent weight)} of the layers the
    prompt names. The head is the embedding's as_linear (tied)."""
    from mlx_lm.models import qwen3

    args = qwen3.ModelArgs(model_type="qwen3", hidden_size=128, num_hidden_layers=1, intermediate_size=256,
                           num_attention_heads=2, rms_norm_eps=1e-6, vocab_size=256, num_key_value_heads=1,
                           max_position_embeddings=512, rope_theta=10000.0, head_dim=64, tie_word_embeddings=True)
    model = qwen3.Model(args)
    replace_linear_with_ternary(model)
    block = model.model.layers[0]
    out = {name: ("linear", getattr(block.self_attn, name), getattr(block.self_attn, name))
           for name in ("q_proj", "k_proj", "v_proj", "o_proj")}
    out.update({name: ("linear", getattr(block.mlp, name), getattr(block.mlp, name))
                for name in ("gate_proj", "up_proj", "down_proj")})
    embed = model.model.embed_tokens
    out["embed_tokens"] = ("embedding", embed, embed)
    out["lm_head"] = ("linear", model.lm_head, model.lm_head) if hasattr(model, "lm_head") else ("linear", embed.as_linear, embed)
    return out


_checkpoint = checkpoint  # the stand-in for mlx_lm.load (engine/verify/smoke_stand_ins.py)


def smoke_run(text, steps, seed):
    """Its main() for `steps` steps on `text` from the stand-in checkpoint; the model it trained."""
    if steps == 0:  # the model as main() has it when its loop starts
        mx.random.seed(seed)
        model = _checkpoint("Qwen/Qwen3-0.6B")[0]
        for layer in model.model.layers:
            replace_linear_with_ternary(layer)
        for tl in ternary_train.collect_ternary_modules(model):
            tl.weight = tl.weight.astype(mx.float32)
        return model
    folder = Path(tempfile.mkdtemp(prefix="opus-smoke-"))
    (folder / "train_data.txt").write_text(text, encoding="utf-8")
    built = []

    def load(name, *args, **kwargs):
        built.append(_checkpoint(name))
        return built[-1]

    run = {"load": load, "generate": lambda *a, **k: "", "NUM_STEPS": steps, "SEQ_LEN": SEQ_LEN, "BATCH_SIZE": BATCH,
           "WARMUP_STEPS": max(1, steps // 10), "LR": LR, "SEED": seed, "DATA_PATH": folder / "train_data.txt",
           "__file__": str(folder / "ternary_train.py")}
    saved = {k: getattr(ternary_train, k) for k in run}
    for k, v in run.items():
        setattr(ternary_train, k, v)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            ternary_train.main()
    finally:
        for k, v in saved.items():
            setattr(ternary_train, k, v)
    return built[0][0]


def smoke_layers(model):
    """{name: ("linear", layer, layer)}: every block's projections of the trained model."""
    return {n: ("linear", m, m) for n, m in model.named_modules() if n.split(".")[-1] in PROJECTIONS}


def _converted(model):
    """main()'s conversion of the loaded checkpoint (lines 223-236)."""
    for layer in model.model.layers:
        replace_linear_with_ternary(layer)
    for tl in ternary_train.collect_ternary_modules(model):
        tl.weight = tl.weight.astype(mx.float32)
    return model


def architecture_model(weights, config):
    """main()'s conversion of a checkpoint holding `weights` at `config`."""
    return _converted(weights_checkpoint(weights, config)[0])


def architecture_cache(model):
    """An empty mlx_lm KV cache per block (its model is mlx_lm's Qwen3)."""
    from mlx_lm.models.cache import KVCache

    return [KVCache() for _ in model.layers]
