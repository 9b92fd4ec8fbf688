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


if __name__ == "__main__":
    from pathlib import Path

    text = (Path(__file__).parent / "data" / "train_data.txt").read_text()
    held = np.frombuffer(text[-2_000:].encode("utf-8"), np.uint8)[None, :1_025].astype(np.int64)

    def loss(model):
        z = model(held[:, :-1])
        z = z - z.max(-1, keepdims=True)
        return float(-(z - np.log(np.exp(z).sum(-1, keepdims=True)))[0, np.arange(1_024), held[0, 1:]].mean())

    print("held-out loss", round(loss(smoke_run(text[:20_000], 0)), 3), "->", round(loss(smoke_run(text[:20_000], 30)), 3))
