"""Train a small ternary MLP language model on train_data.txt (NumPy)."""
import math
import time

import numpy as np

from ternary_numpy import BitLinear

CONTEXT, EMB, HIDDEN = 8, 16, 256


def batches(data, batch, rng):
    while True:
        s = rng.integers(0, len(data) - CONTEXT - 1, size=batch)
        idx = s[:, None] + np.arange(CONTEXT + 1)
        yield data[idx[:, :-1]], data[idx[:, -1]]


def main(steps=1500, lr=2e-3, log_path="train_log.txt"):
    rng = np.random.default_rng(0)
    text = open("train_data.txt", encoding="utf-8").read()
    chars = sorted(set(text))
    data = np.array([chars.index(c) for c in text])
    split = int(0.9 * len(data))
    train, val = data[:split], data[split:]
    V = len(chars)
    emb = rng.normal(0, 1, (V, EMB))
    l1, l2 = BitLinear(CONTEXT * EMB, HIDDEN, rng), BitLinear(HIDDEN, V, rng)
    log = open(log_path, "w")
    t0 = time.time()

    def forward(xb):
        e = emb[xb].reshape(len(xb), -1)
        h = l1.forward(e)
        a = np.maximum(h, 0)
        logits = l2.forward(a)
        z = logits - logits.max(1, keepdims=True)
        p = np.exp(z)
        return e, h, p / p.sum(1, keepdims=True)

    for step, (xb, yb) in zip(range(1, steps + 1), batches(train, 64, rng)):
        e, h, p = forward(xb)
        loss = -np.log(p[np.arange(len(yb)), yb]).mean()
        d = p.copy()
        d[np.arange(len(yb)), yb] -= 1
        d /= len(yb)
        dh = l2.backward(d) * (h > 0)
        de = l1.backward(dh)
        demb = np.zeros_like(emb)
        np.add.at(demb, xb, de.reshape(len(xb), CONTEXT, EMB))
        emb -= lr * 10 * demb
        for layer in (l1, l2):
            layer.m = 0.9 * layer.m + 0.1 * layer.dW
            layer.v = 0.999 * layer.v + 0.001 * layer.dW ** 2
            layer.W -= lr * (layer.m / (1 - 0.9 ** step)) / (np.sqrt(layer.v / (1 - 0.999 ** step)) + 1e-8)
        if step % 100 == 0:
            print(f"step {step} loss: {loss:.4f}", file=log, flush=True)
    vx, vy = next(batches(val, 4096, np.random.default_rng(1)))
    _, _, p = forward(vx)
    val_loss = -np.log(p[np.arange(len(vy)), vy]).mean()
    print(f"val_loss: {val_loss:.4f}", file=log)
    print(f"val_ppl: {math.exp(val_loss):.3f}", file=log)
    print(f"time: {time.time() - t0:.1f}s", file=log)
    log.close()


if __name__ == "__main__":
    main()
