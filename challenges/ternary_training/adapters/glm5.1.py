"""ternary_training adapter for glm5.1 (published benchmark): its
ternarize_ste (ternary_model.py), the projection every TernaryLinear /
TernaryEmbedding of its model applies on the forward pass.

Translation only: ternary_quantize and ste_quantize call
ternarize_ste(W, group_size) unchanged (forward value: the ternary weights;
gradient: identity, through W + stop_gradient(W_t - W)).
"""
from __future__ import annotations

from ternary_model import Model, ModelArgs, ternarize_ste

ANSWER_SHA256 = {
    "ternary_model.py": "27b9e2df04b1614c7f9b26a135dbde8c83a88c22eeef930ebc2e3575ed554bba",
}


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
