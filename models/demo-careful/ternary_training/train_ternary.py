"""Train the ternary Qwen3-style model on train_data.txt (MLX, path A).

    python train_ternary.py [--steps 300] [--batch 16] [--seq-len 64] [--out results.json]

Character-level tokens; 90/10 train/validation split by position; AdamW on
the latent weights with warm-up and cosine decay. Writes results.json with
the loss curve, validation perplexity, the ternary check and samples.
"""
from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import mlx.core as mx
import mlx.nn as nn
import mlx.optimizers as optim
import numpy as np

from qwen3_ternary import ModelConfig, TernaryQwen

HERE = Path(__file__).resolve().parent


class CharTokenizer:
    def __init__(self, text: str):
        self.chars = sorted(set(text))
        self.index = {c: i for i, c in enumerate(self.chars)}

    def encode(self, text: str) -> np.ndarray:
        return np.array([self.index.get(c, 0) for c in text], dtype=np.int32)

    @property
    def vocab_size(self) -> int:
        return len(self.chars)

    def decode(self, ids) -> str:
        return "".join(self.chars[int(i)] for i in ids)


def sample_batch(data: np.ndarray, batch: int, seq_len: int, rng: np.random.Generator):
    starts = rng.integers(0, len(data) - seq_len - 1, size=batch)
    idx = starts[:, None] + np.arange(seq_len + 1)
    chunk = data[idx]
    return mx.array(chunk[:, :-1]), mx.array(chunk[:, 1:])


def loss_fn(model: TernaryQwen, x: mx.array, y: mx.array) -> mx.array:
    return nn.losses.cross_entropy(model(x), y, reduction="mean")


def train(text: str, cfg_overrides: dict | None = None, steps: int = 300, seed: int = 0, batch: int = 16,
          seq_len: int = 64, lr: float = 3e-3, log=print, tokenizer=None):
    """Train from scratch; returns (model, tokenizer, per-step losses).
    tokenizer: anything with encode(text) -> ids and vocab_size (default: the
    characters of text)."""
    mx.random.seed(seed)
    rng = np.random.default_rng(seed)
    tok = tokenizer or CharTokenizer(text)
    data = np.asarray(tok.encode(text))
    model = TernaryQwen(ModelConfig(vocab_size=tok.vocab_size, **(cfg_overrides or {})))
    schedule = optim.join_schedules(
        [optim.linear_schedule(lr * 0.1, lr, max(1, steps // 20)), optim.cosine_decay(lr, max(1, steps), lr * 0.1)],
        [max(1, steps // 20)])
    opt = optim.AdamW(learning_rate=schedule, weight_decay=0.01)
    grad_fn = nn.value_and_grad(model, loss_fn)

    def step(x, y):
        loss, grads = grad_fn(model, x, y)
        opt.update(model, grads)
        return loss

    losses = []
    for i in range(steps):
        x, y = sample_batch(data, batch, seq_len, rng)
        loss = step(x, y)
        mx.eval(model.state, opt.state)
        losses.append(loss.item())
        if log and (i % 100 == 0 or i == steps - 1):
            log(f"step {i:5d}  loss {losses[-1]:.4f}")
    return model, tok, losses


def evaluate(model: TernaryQwen, data: np.ndarray, seq_len: int = 64, max_windows: int = 200) -> float:
    """Mean next-token cross-entropy over non-overlapping validation windows."""
    n = min(max_windows, (len(data) - 1) // seq_len)
    idx = np.arange(n)[:, None] * seq_len + np.arange(seq_len + 1)
    chunk = data[idx]
    total = 0.0
    for i in range(0, n, 32):
        x, y = mx.array(chunk[i:i + 32, :-1]), mx.array(chunk[i:i + 32, 1:])
        total += nn.losses.cross_entropy(model(x), y, reduction="sum").item()
    return total / (n * seq_len)


def ternary_report(model: TernaryQwen) -> dict:
    """Every projected weight must be exactly -s, 0 or +s of its group."""
    worst, zeros, total = 0.0, 0, 0
    for _, layer in model.bit_layers():
        w = np.array(layer.weight, dtype=np.float64)
        g = layer.group_size
        s = np.abs(w.reshape(w.shape[0], -1, g)).mean(-1, keepdims=True)
        q = np.array(layer.projected(), dtype=np.float64).reshape(w.shape[0], -1, g) / s
        worst = max(worst, float(np.abs(q - np.round(q)).max()))
        assert set(np.unique(np.round(q))) <= {-1.0, 0.0, 1.0}
        zeros += int((np.round(q) == 0).sum())
        total += q.size
    return {"layers": len(model.bit_layers()), "max_distance_from_level": worst, "zero_fraction": zeros / total}


def generate(model: TernaryQwen, tok: CharTokenizer, prompt: str, n: int = 120, temperature: float = 0.8) -> str:
    ids = [int(i) for i in tok.encode(prompt)]
    for _ in range(n):
        logits = model(mx.array([ids[-64:]]))[0, -1] / temperature
        ids.append(mx.random.categorical(logits).item())
    return tok.decode(ids)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--seq-len", type=int, default=64)
    p.add_argument("--out", default=str(HERE / "results.json"))
    args = p.parse_args()
    text = (HERE / "train_data.txt").read_text(encoding="utf-8")
    cut = int(len(text) * 0.9)
    start = time.time()
    model, tok, losses = train(text[:cut], steps=args.steps, batch=args.batch, seq_len=args.seq_len)
    val_loss = evaluate(model, tok.encode(text[cut:]), seq_len=args.seq_len)
    results = {
        "steps": args.steps,
        "batch": args.batch,
        "seq_len": args.seq_len,
        "config": vars(model.cfg),
        "final_train_loss": float(np.mean(losses[-20:])),
        "val_loss": val_loss,
        "val_perplexity": math.exp(val_loss),
        "train_seconds": round(time.time() - start, 1),
        "ternary_check": ternary_report(model),
        "samples": [generate(model, tok, s) for s in ("The ", "When the ")],
        "loss_curve": [round(x, 4) for x in losses[::25]],
    }
    Path(args.out).write_text(json.dumps(results, indent=2))
    print(json.dumps({k: v for k, v in results.items() if k != "loss_curve"}, indent=2))


if __name__ == "__main__":
    main()
