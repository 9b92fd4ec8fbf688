"""ternary_training adapter for qwen36 (published benchmark): ternarize and
ternarize_ste of train_ternary.py (the projection its TernaryLinear and
TernaryEmbedding apply on the forward pass).

Translation only: ternary_quantize calls ternarize(w, group_size) and
ste_quantize calls ternarize_ste(w, group_size), unchanged.

train_ternary.py imports mlx_lm (loading Qwen3-0.6B) at the top; the
quantiser never uses it. Where mlx_lm cannot be imported (absent, or its
import-time setrlimit refused by the sandbox), a placeholder module lets the
file import; calling anything from it raises ImportError.
"""
from __future__ import annotations

import sys
import types

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
from train_ternary import ternarize, ternarize_ste  # noqa: E402


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
