"""ternary_training adapter for kimi-k2.6 (published benchmark): the
TernaryLinear of train_pathb.py, the path its REPORT.md names as the one it
trained (``from train_pathb import TernaryLinear``).

Translation only (a class to functions):
- ternary_quantize(w) is TernaryLinear._quantize(w) on a layer of w's shape:
  (ternary weights, per-group scales);
- ste_quantize(w) is the layer's effective weight on the forward pass: the
  layer, holding w as its latent weight, applied to the identity matrix
  (x @ W_eff.T with x = I is W_eff.T, exactly); its gradient is the answer's
  own STE (W_t + (W - stop_gradient(W)));
- ternary_layers() builds its TernaryTransformer (the model its main()
  trains) at a small size and names the layers the prompt asks about.
"""
from __future__ import annotations

import mlx.core as mx
from train_pathb import TernaryLinear, TernaryTransformer

ANSWER_SHA256 = {
    "train_pathb.py": "00f1ebda1d56c491391979fb9545e6d9a7e4638be6381b08b00ad7bcb14621c1",
}


def _layer(w, group_size):
    out_f, in_f = w.shape
    layer = TernaryLinear(in_f, out_f, group_size)
    layer.weight = w
    return layer


def ternary_quantize(w, group_size=128):
    return _layer(w, group_size)._quantize(w)


def ste_quantize(w, group_size=128):
    layer = _layer(w, group_size)
    return layer(mx.eye(w.shape[1], dtype=w.dtype)).T


def ternary_layers():
    """{name: (kind, layer, module holding its latent weight)} of its TernaryTransformer, small."""
    model = TernaryTransformer(vocab_size=256, dims=128, n_layers=1, n_heads=2, n_kv_heads=1, head_dim=64,
                               hidden_dims=256, max_seq_len=64, group_size=128)
    block = model.layers[0]
    out = {name: ("linear", getattr(block.self_attn, name), getattr(block.self_attn, name))
           for name in ("q_proj", "k_proj", "v_proj", "o_proj")}
    out.update({name: ("linear", getattr(block.mlp, name), getattr(block.mlp, name))
                for name in ("gate_proj", "up_proj", "down_proj")})
    out["embed_tokens"] = ("embedding", model.embed_tokens, model.embed_tokens)
    out["lm_head"] = ("linear", model.lm_head, model.lm_head)
    return out
