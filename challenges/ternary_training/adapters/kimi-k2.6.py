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

No smoke_run: neither of its training loops can run at a small size here
without changing its code (SMOKE_UNDRIVABLE says why, with lines), and its
one training-step function is called by neither loop.
"""
from __future__ import annotations

import mlx.core as mx
from train_pathb import TernaryLinear, TernaryTransformer

ANSWER_SHA256 = {
    "train_pathb.py": "00f1ebda1d56c491391979fb9545e6d9a7e4638be6381b08b00ad7bcb14621c1",
    "train_ternary.py": "0922e3e98dc27cbbc06622036ced7ab2e873d453af3f538d7ad217c2b595c06a",
}
SMOKE_UNDRIVABLE = (
    "train_pathb.py's main() (line 413), the loop its REPORT.md names, fixes its model and run as local constants "
    "(vocabulary 50,257, d_model 512, 8 layers, 1,000 steps: lines 419-428), loads the GPT-2 tokenizer from the hub "
    "(line 451: AutoTokenizer.from_pretrained('gpt2')) and runs its loop inline (line 517); train_ternary.py's main() "
    "(line 399, Path A) likewise fixes 500 steps (line 408), loads 'Qwen/Qwen3-0.6B' (line 425) and runs its loop "
    "inline (line 473); its step() (train_ternary.py:324) is called by neither loop. Neither loop can run at a "
    "small size without changing its code")


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
