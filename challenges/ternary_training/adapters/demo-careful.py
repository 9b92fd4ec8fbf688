"""Adapter for demo-careful (MLX, path A): a short run of its own training
loop (train_ternary.train) on a tiny configuration with the checker's byte
tokens, returning the model it trained; its TernaryQwen at a small size for
the layer checks (ternary_layers); its own held-out evaluation (smoke_evaluate);
its TernaryQwen holding a Qwen3 checkpoint's weights (architecture_model: the
checkpoint's names mapped onto its modules' names, nothing computed). Its
model takes no KV cache, so no architecture_cache."""
from __future__ import annotations

import numpy as np
from train_ternary import evaluate, train  # the answer folder is on sys.path

SMOKE_CONFIG = dict(d_model=128, n_layers=1, n_heads=4, n_kv_heads=2, d_ff=256)


class ByteTokenizer:
    """UTF-8 bytes as token ids (vocabulary 256): the checker's tokenisation."""
    vocab_size = 256

    def encode(self, text: str) -> np.ndarray:
        return np.frombuffer(text.encode("utf-8"), dtype=np.uint8).astype(np.int32)


def smoke_run(text: str, steps: int, seed: int):
    model, _, _ = train(text, cfg_overrides=SMOKE_CONFIG, steps=steps, seed=seed, batch=8, seq_len=32, lr=3e-3,
                        log=None, tokenizer=ByteTokenizer())
    return model


def smoke_evaluate(model, text: str) -> float:
    """Its own validation figure (evaluate: mean next-token loss over windows of
    64, the loss its results.json reports) on the checker's byte tokens."""
    return evaluate(model, ByteTokenizer().encode(text), seq_len=64, max_windows=10**6)


def smoke_layers(model):
    """{name: (kind, layer, module holding its latent weight)} of every BitLinear it trained."""
    return {name: ("linear", layer, layer) for name, layer in model.bit_layers()}


def ternary_layers():
    """{name: (kind, layer, module holding its latent weight)} of its TernaryQwen."""
    from qwen3_ternary import ModelConfig, TernaryQwen

    model = TernaryQwen(ModelConfig(vocab_size=256, d_model=128, n_layers=1, n_heads=2, n_kv_heads=1, d_ff=256))
    block = model.blocks[0]
    out = {name: ("linear", getattr(block.attn, name), getattr(block.attn, name)) for name in ("q_proj", "k_proj", "v_proj", "o_proj")}
    out.update({name: ("linear", getattr(block.mlp, name), getattr(block.mlp, name)) for name in ("gate_proj", "up_proj", "down_proj")})
    out["embed_tokens"] = ("embedding", model.embed, model.embed)
    out["lm_head"] = ("linear", model.embed.as_linear, model.embed)  # tied
    return out


# a Qwen3 checkpoint's names (mlx_lm / Hugging Face) -> TernaryQwen's
QWEN3_NAMES = (("model.embed_tokens.", "embed."), ("model.layers.", "blocks."), ("model.norm.", "norm."),
               (".self_attn.", ".attn."), (".input_layernorm.", ".attn_norm."),
               (".post_attention_layernorm.", ".mlp_norm."))


def architecture_model(weights, config):
    """Its TernaryQwen at `config` holding `weights` (a Qwen3 checkpoint's, tied head)."""
    import mlx.core as mx
    from qwen3_ternary import ModelConfig, TernaryQwen

    model = TernaryQwen(ModelConfig(vocab_size=config["vocab_size"], d_model=config["hidden_size"],
                                    n_layers=config["num_hidden_layers"], n_heads=config["num_attention_heads"],
                                    n_kv_heads=config["num_key_value_heads"], d_ff=config["intermediate_size"],
                                    rope_theta=config["rope_theta"]))
    renamed = []
    for name, value in weights.items():
        for old, new in QWEN3_NAMES:
            name = name.replace(old, new)
        renamed.append((name, mx.array(np.asarray(value))))
    model.load_weights(renamed, strict=True)
    return model
