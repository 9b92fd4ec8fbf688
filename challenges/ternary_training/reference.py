"""Trusted reference for ternary_training (NumPy, path B).

Weights are stored (out_features, in_features); ``y = x @ W_q.T``. Each row is
cut into groups of ``group_size`` consecutive input features; a group's
scale is its mean |W|, and its weights project to -s, 0 or +s.
"""
from __future__ import annotations

import numpy as np

EPS = 1e-8


def group_scales(w: np.ndarray, group_size: int = 128) -> np.ndarray:
    """(out, in) -> (out, in // group_size) mean |W| per input-axis group."""
    out_f, in_f = w.shape
    if in_f % group_size:
        raise ValueError(f"in_features {in_f} is not a multiple of {group_size}")
    return np.abs(w).reshape(out_f, in_f // group_size, group_size).mean(axis=-1)


def ternary_codes(w: np.ndarray, group_size: int = 128) -> tuple[np.ndarray, np.ndarray]:
    """Codes in {-1, 0, +1} (int8) and the per-group scales."""
    s = group_scales(w, group_size)
    g = w.reshape(w.shape[0], -1, group_size) / np.maximum(s, EPS)[..., None]
    return np.clip(np.round(g), -1, 1).astype(np.int8).reshape(w.shape), s


def ternary_quantize(w: np.ndarray, group_size: int = 128) -> np.ndarray:
    """Projected weights: every entry is -s, 0 or +s of its group."""
    q, s = ternary_codes(w, group_size)
    return (q.reshape(w.shape[0], -1, group_size) * s[..., None]).reshape(w.shape).astype(w.dtype)


def ternary_quantize_backward(grad_wq: np.ndarray, w: np.ndarray, group_size: int = 128) -> np.ndarray:
    """Straight-through estimator: the latent weight gets the upstream gradient."""
    return np.array(grad_wq, copy=True)


def ternary_linear_forward(x: np.ndarray, w: np.ndarray, group_size: int = 128) -> np.ndarray:
    return x @ ternary_quantize(w, group_size).T


def ternary_linear_backward(dy: np.ndarray, x: np.ndarray, w: np.ndarray, group_size: int = 128):
    """(dx, dw) of y = x @ Q(w).T with the STE: dx uses Q(w), dw goes to w."""
    wq = ternary_quantize(w, group_size)
    x2, dy2 = x.reshape(-1, x.shape[-1]), dy.reshape(-1, dy.shape[-1])
    dx = (dy2 @ wq).reshape(x.shape)
    dw = ternary_quantize_backward(dy2.T @ x2, w, group_size)
    return dx, dw


# -- a tiny training loop: byte-level MLP LM with two ternary layers ----------

class TernaryLayer:
    """y = x @ Q(weight).T: the latent weight is projected on every call."""

    def __init__(self, weight: np.ndarray, group_size: int = 128):
        self.weight, self.group_size = weight, group_size

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return ternary_linear_forward(np.asarray(x, dtype=np.float64), self.weight, self.group_size)


class ByteMLP:
    """Next-byte logits from the previous ``context`` bytes (zeros before the start)."""

    context, vocab = 4, 256

    def __init__(self, rng: np.random.Generator, d_emb: int = 32, hidden: int = 256, group_size: int = 128):
        self.emb = rng.normal(0, 0.5, (self.vocab, d_emb))
        self.w1 = TernaryLayer(rng.normal(0, (self.context * d_emb) ** -0.5, (hidden, self.context * d_emb)), group_size)
        self.w2 = TernaryLayer(rng.normal(0, hidden ** -0.5, (self.vocab, hidden)), group_size)

    def windows(self, ids: np.ndarray) -> np.ndarray:
        """(B, L) ids -> (B, L, context): the bytes up to and including each position."""
        ids = np.asarray(ids, dtype=np.int64)
        padded = np.concatenate([np.zeros(ids.shape[:-1] + (self.context - 1,), np.int64), ids], axis=-1)
        return np.stack([padded[..., i:i + ids.shape[-1]] for i in range(self.context)], axis=-1)

    def hidden(self, ctx: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        e = self.emb[ctx].reshape(ctx.shape[:-1] + (-1,))
        h_pre = self.w1(e)
        return e, h_pre, np.maximum(h_pre, 0)

    def __call__(self, ids: np.ndarray) -> np.ndarray:
        return self.w2(self.hidden(self.windows(ids))[2])


def _batches(data: np.ndarray, context: int, batch: int, rng: np.random.Generator):
    while True:
        starts = rng.integers(0, len(data) - context - 1, size=batch)
        idx = starts[:, None] + np.arange(context + 1)
        chunk = data[idx]
        yield chunk[:, :-1], chunk[:, -1]


def smoke_run(text: str, steps: int = 30, seed: int = 0, group_size: int = 128) -> ByteMLP:
    """Train a tiny ternary byte-level MLP LM for ``steps`` Adam steps on
    ``text`` (UTF-8 bytes) from scratch and return it (``steps=0``: untrained)."""
    rng = np.random.default_rng(seed)
    data = np.frombuffer(text.encode("utf-8"), dtype=np.uint8).astype(np.int64)
    model = ByteMLP(rng, group_size=group_size)
    params = {"emb": model.emb, "w1": model.w1.weight, "w2": model.w2.weight}
    m = {k: np.zeros_like(v) for k, v in params.items()}
    v2 = {k: np.zeros_like(v) for k, v in params.items()}
    lr, b1, b2 = 3e-3, 0.9, 0.999
    batches = _batches(data, model.context, 64, rng)
    for step in range(1, steps + 1):
        xb, yb = next(batches)
        e, h_pre, h = model.hidden(xb)
        logits = model.w2(h)
        z = logits - logits.max(-1, keepdims=True)
        p = np.exp(z) / np.exp(z).sum(-1, keepdims=True)
        dlogits = p
        dlogits[np.arange(len(yb)), yb] -= 1
        dlogits /= len(yb)
        dh, dw2 = ternary_linear_backward(dlogits, h, params["w2"], group_size)
        de, dw1 = ternary_linear_backward(dh * (h_pre > 0), e, params["w1"], group_size)
        demb = np.zeros_like(params["emb"])
        np.add.at(demb, xb, de.reshape(xb.shape + (-1,)))
        grads = {"emb": demb, "w1": dw1, "w2": dw2}
        for k in params:  # Adam on the latent full-precision weights, in place
            m[k] = b1 * m[k] + (1 - b1) * grads[k]
            v2[k] = b2 * v2[k] + (1 - b2) * grads[k] ** 2
            mh, vh = m[k] / (1 - b1 ** step), v2[k] / (1 - b2 ** step)
            params[k] -= lr * mh / (np.sqrt(vh) + 1e-8)
    return model


def heldout_loss(model: ByteMLP, text: str, window: int = 64) -> float:
    """The validation figure this loop reports: mean next-byte loss (nats) over
    the non-overlapping windows of ``text`` (perplexity = exp of it)."""
    data = np.frombuffer(text.encode("utf-8"), dtype=np.uint8).astype(np.int64)
    n = (len(data) - 1) // window
    chunk = data[np.arange(n)[:, None] * window + np.arange(window + 1)]
    z = model(chunk[:, :-1])
    z = z - z.max(-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    return float(-np.take_along_axis(logp, chunk[:, 1:, None], axis=-1).mean())


def smoke_layers(model: ByteMLP) -> dict:
    """{name: (kind, layer, holder of its latent weight)} of the model's ternary layers."""
    return {"w1": ("linear", model.w1, model.w1), "w2": ("linear", model.w2, model.w2)}


# -- the named architecture: a Qwen3 decoder with ternary block projections ----

# Faults a Qwen3-style decoder is written with, each one a deviation the
# reference can take, so a mismatch is named by the fault it matches.
ARCH_FAULTS = {
    "scale_one_over_head_dim": "attention scores scaled by 1/head_dim, not 1/sqrt(head_dim)",
    "scale_missing": "attention scores not scaled by 1/sqrt(head_dim)",
    "qk_norm_after_rope": "the query/key RMSNorm applied after the rotary embedding, not before it",
    "qk_norm_missing": "no RMSNorm on the queries and keys",
    "gqa_heads_interleaved": "grouped-query heads mapped round-robin (query head h reads key/value head "
                             "h % n_kv) instead of in blocks (h // (n_heads / n_kv))",
    "rope_pairs_interleaved": "the rotary embedding rotates adjacent pairs (2i, 2i+1) instead of "
                              "(i, i + head_dim/2) (Qwen3's rotate-half layout)",
    "rope_queries_only": "the rotary embedding applied to the queries only",
    "rope_keys_only": "the rotary embedding applied to the keys only",
    "blocks_not_chained": "every block reads the embeddings instead of the block before it",
    "blocks_share_last_weights": "every block computes with one block's weights (the last one's): "
                                 "the blocks are one module repeated",
    "rope_theta_common_constant": "the rotary base is 10000, a common constant, not the configuration's "
                                  "rope_theta (Qwen3's is 1,000,000)",
}


def qwen3_weight_names(cfg: dict) -> dict:
    """{checkpoint name: shape} of a Qwen3 checkpoint (mlx_lm / Hugging Face names)."""
    d, h, kv, hd, ff = (cfg[k] for k in ("hidden_size", "num_attention_heads", "num_key_value_heads",
                                          "head_dim", "intermediate_size"))
    names = {"model.embed_tokens.weight": (cfg["vocab_size"], d), "model.norm.weight": (d,)}
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        names.update({p + "self_attn.q_proj.weight": (h * hd, d), p + "self_attn.k_proj.weight": (kv * hd, d),
                      p + "self_attn.v_proj.weight": (kv * hd, d), p + "self_attn.o_proj.weight": (d, h * hd),
                      p + "self_attn.q_norm.weight": (hd,), p + "self_attn.k_norm.weight": (hd,),
                      p + "mlp.gate_proj.weight": (ff, d), p + "mlp.up_proj.weight": (ff, d),
                      p + "mlp.down_proj.weight": (d, ff),
                      p + "input_layernorm.weight": (d,), p + "post_attention_layernorm.weight": (d,)})
    if not cfg.get("tie_word_embeddings", True):
        names["lm_head.weight"] = (cfg["vocab_size"], d)
    return names


def _rms_norm(x: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps) * weight


def _rope(x: np.ndarray, positions: np.ndarray, theta: float, interleaved: bool = False) -> np.ndarray:
    """Rotary embedding of x (..., tokens, head_dim) at ``positions`` (tokens,):
    Qwen3 rotates the pairs (i, i + head_dim/2) by positions * theta^(-2i/head_dim)."""
    half = x.shape[-1] // 2
    angle = positions[:, None] * theta ** (-np.arange(half) * 2.0 / x.shape[-1])
    cos, sin = np.cos(angle), np.sin(angle)
    a, b = (x[..., 0::2], x[..., 1::2]) if interleaved else (x[..., :half], x[..., half:])
    ra, rb = a * cos - b * sin, b * cos + a * sin
    if interleaved:
        return np.stack([ra, rb], axis=-1).reshape(x.shape)
    return np.concatenate([ra, rb], axis=-1)


def qwen3_logits(weights: dict, cfg: dict, ids: np.ndarray, group_size: int = 128, fault: str | None = None,
                 positions: np.ndarray | None = None, allowed: np.ndarray | None = None,
                 key_positions: np.ndarray | None = None) -> np.ndarray:
    """Logits (batch, tokens, vocab) of a Qwen3 decoder whose block projections
    are ternary (each latent weight projected per group of ``group_size`` by
    ternary_quantize); embeddings, head and norms as given. ``fault`` takes
    one of ARCH_FAULTS; ``positions`` (tokens,) the rotary position of each
    token's query and key (default 0..n-1), ``key_positions`` its key's where
    they differ, and ``allowed`` (tokens, tokens) which keys each query
    attends to (default causal): a cached decoder's faults, replayed."""
    w = {k: np.asarray(v, dtype=np.float64) for k, v in weights.items()}
    n_layers, h, kv, hd = (cfg[k] for k in ("num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim"))
    eps, theta = float(cfg.get("rms_norm_eps", 1e-6)), float(cfg["rope_theta"])
    theta = 10000.0 if fault == "rope_theta_common_constant" else theta
    b, n = ids.shape
    pos = np.arange(n, dtype=np.float64) if positions is None else np.asarray(positions, dtype=np.float64)
    kpos = pos if key_positions is None else np.asarray(key_positions, dtype=np.float64)
    mask = np.tril(np.ones((n, n), dtype=bool)) if allowed is None else np.asarray(allowed, dtype=bool)
    scale = {"scale_one_over_head_dim": 1.0 / hd, "scale_missing": 1.0}.get(fault or "", hd ** -0.5)
    kv_of = np.arange(h) % kv if fault == "gqa_heads_interleaved" else np.arange(h) // (h // kv)
    interleaved = fault == "rope_pairs_interleaved"

    def q(name):  # a block projection as the forward pass computes with it
        return ternary_quantize(w[name], group_size)

    embed = w["model.embed_tokens.weight"]
    x = embed[ids]
    for i in range(n_layers):
        p = f"model.layers.{n_layers - 1 if fault == 'blocks_share_last_weights' else i}."
        src = embed[ids] if fault == "blocks_not_chained" else x
        a = _rms_norm(src, w[p + "input_layernorm.weight"], eps)
        qh = (a @ q(p + "self_attn.q_proj.weight").T).reshape(b, n, h, hd).transpose(0, 2, 1, 3)
        kh = (a @ q(p + "self_attn.k_proj.weight").T).reshape(b, n, kv, hd).transpose(0, 2, 1, 3)
        vh = (a @ q(p + "self_attn.v_proj.weight").T).reshape(b, n, kv, hd).transpose(0, 2, 1, 3)
        norm_q, norm_k = w[p + "self_attn.q_norm.weight"], w[p + "self_attn.k_norm.weight"]
        if fault not in ("qk_norm_after_rope", "qk_norm_missing"):
            qh, kh = _rms_norm(qh, norm_q, eps), _rms_norm(kh, norm_k, eps)
        if fault != "rope_keys_only":
            qh = _rope(qh, pos, theta, interleaved)
        if fault != "rope_queries_only":
            kh = _rope(kh, kpos, theta, interleaved)
        if fault == "qk_norm_after_rope":
            qh, kh = _rms_norm(qh, norm_q, eps), _rms_norm(kh, norm_k, eps)
        s = np.einsum("bhqd,bhkd->bhqk", qh, kh[:, kv_of]) * scale
        s = np.where(mask, s, -np.inf)
        s = np.exp(s - s.max(axis=-1, keepdims=True))
        out = np.einsum("bhqk,bhkd->bhqd", s / s.sum(axis=-1, keepdims=True), vh[:, kv_of])
        x = src + out.transpose(0, 2, 1, 3).reshape(b, n, h * hd) @ q(p + "self_attn.o_proj.weight").T
        m = _rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
        gate, up = m @ q(p + "mlp.gate_proj.weight").T, m @ q(p + "mlp.up_proj.weight").T
        x = x + (gate / (1 + np.exp(-gate)) * up) @ q(p + "mlp.down_proj.weight").T
    head = w.get("lm_head.weight", embed)
    return _rms_norm(x, w["model.norm.weight"], eps) @ head.T


def qwen3_weights(rng: np.random.Generator, cfg: dict, group_size: int = 128) -> dict:
    """A stand-in checkpoint for ``cfg`` ({name: float32 array}): projections
    whose latent weights sit clear of the rounding ties of their ternary codes
    (|W / s| at least 0.02 from 1/2), so float32 and float64 project them
    alike; norm weights away from 1, so where a norm applies shows; embedding
    entries all +a or -a (one a for the whole table), which every ternary
    projection leaves unchanged, so a model may keep its embeddings and tied
    head full precision or make them ternary, as the prompt leaves open."""
    out = {}
    for name, shape in qwen3_weight_names(cfg).items():
        if len(shape) == 1:
            out[name] = rng.uniform(0.5, 2.0, shape)
        elif "embed_tokens" in name or name == "lm_head.weight":
            out[name] = np.where(rng.random(shape) < 0.5, -1.0, 1.0)
        else:
            w = rng.standard_normal(shape) / np.sqrt(shape[1])
            for _ in range(20):
                s = np.repeat(group_scales(w, group_size), group_size, axis=1)
                near = np.abs(np.abs(w) / s - 0.5) < 0.03
                if not near.any():
                    break
                w = np.where(near, np.sign(w) * s * np.where(np.abs(w) / s < 0.5, 0.44, 0.56), w)
            out[name] = w
    return {k: v.astype(np.float32) for k, v in out.items()}


if __name__ == "__main__":
    from pathlib import Path

    text = (Path(__file__).parent / "data" / "train_data.txt").read_text()
    held = np.frombuffer(text[-2_000:].encode("utf-8"), np.uint8)[None, :1_025].astype(np.int64)

    def loss(model):
        z = model(held[:, :-1])
        z = z - z.max(-1, keepdims=True)
        return float(-(z - np.log(np.exp(z).sum(-1, keepdims=True)))[0, np.arange(1_024), held[0, 1:]].mean())

    print("held-out loss", round(loss(smoke_run(text[:20_000], 0)), 3), "->", round(loss(smoke_run(text[:20_000], 30)), 3))
