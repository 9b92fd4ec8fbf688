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

ternary_train.py imports mlx_lm (model loading, text generation) at the top;
the quantiser never uses it. Where mlx_lm cannot be imported (absent, or
its import-time setrlimit refused by the sandbox), placeholder modules let
the file import; calling anything from them raises ImportError.
"""
from __future__ import annotations

import sys
import types

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
from ternary_train import TernaryLinear, replace_linear_with_ternary  # noqa: E402


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
