"""ternary_training adapter for glm5 (published benchmark): its
ternary_projection (ternary_linear.py, an mx.custom_function whose VJP is
the straight-through estimator, the projection TernaryLinear uses).

Translation only: ternary_quantize and ste_quantize both call
ternary_projection unchanged. Its group size is its own constant
GROUP_SIZE = 128 (the prompt's), so no group size is passed.
ternary_layers() builds its TernaryModel (ternary_model.py, Qwen3 with tied
embeddings as in its training) at a small size and names the prompt's layers.
"""
from __future__ import annotations

from ternary_linear import ternary_projection

ANSWER_SHA256 = {
    "ternary_linear.py": "83ef0cb5a65af04171e6d6f9ed013bfef07699b3d912b05b8bcfddbec91f6112",
    "ternary_model.py": "43595afd7c050324910d842b8e8b0304bb4f2d50c0464e89a009ea0765af3357",
}


def ternary_quantize(w):
    """Projected weights {-s, 0, +s} per group of 128 along the input axis."""
    return ternary_projection(w)


def ste_quantize(w):
    """The same projection; its gradient is glm5's custom VJP (identity)."""
    return ternary_projection(w)


def _package_module(name):
    """ternary_model.py imports its siblings relatively (the folder is a package,
    __init__.py): import it as part of that package, under a private name."""
    import importlib
    import importlib.util
    import sys
    from pathlib import Path

    folder = Path(sys.modules["ternary_linear"].__file__).resolve().parent  # the answer's folder
    if "glm5_answer" not in sys.modules:
        spec = importlib.util.spec_from_file_location("glm5_answer", folder / "__init__.py",
                                                      submodule_search_locations=[str(folder)])
        package = importlib.util.module_from_spec(spec)
        sys.modules["glm5_answer"] = package
        spec.loader.exec_module(package)
    return importlib.import_module(f"glm5_answer.{name}")


def ternary_layers():
    m = _package_module("ternary_model")
    ModelArgs, TernaryModel = m.ModelArgs, m.TernaryModel

    return _prompt_layers(TernaryModel(ModelArgs(hidden_size=128, num_hidden_layers=1, intermediate_size=256, num_attention_heads=2, num_key_value_heads=1, vocab_size=256, head_dim=64)))


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
