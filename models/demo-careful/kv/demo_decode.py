"""Decode 20 steps for a ragged batch and compare with attention from scratch."""
import numpy as np

from kv_cache import KVCache


def attention_from_scratch(q, k, v):
    """Causal attention over one full sequence, (H, T, D)."""
    t = q.shape[1]
    s = q @ k.transpose(0, 2, 1) / np.sqrt(q.shape[-1])
    s = np.where(np.tril(np.ones((t, t), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


def main():
    rng = np.random.default_rng(0)
    lengths, H, D, steps = [5, 12, 3], 4, 16, 20
    B, T = len(lengths), max(lengths)
    k, v, pq = (rng.normal(size=(B, H, T, D)) for _ in range(3))
    qs, ks, vs = (rng.normal(size=(steps, B, H, D)) for _ in range(3))
    cache = KVCache(B, H, D, dtype=np.float64)
    cache.load_prompt(k, v, lengths)
    outs = np.stack([cache.step(qs[s], ks[s], vs[s]) for s in range(steps)])
    worst = 0.0
    for b, n in enumerate(lengths):
        q_full = np.concatenate([pq[b, :, :n], qs[:, b].transpose(1, 0, 2)], axis=1)
        k_full = np.concatenate([k[b, :, :n], ks[:, b].transpose(1, 0, 2)], axis=1)
        v_full = np.concatenate([v[b, :, :n], vs[:, b].transpose(1, 0, 2)], axis=1)
        want = attention_from_scratch(q_full, k_full, v_full)[:, n:].transpose(1, 0, 2)
        worst = max(worst, float(np.abs(outs[:, b] - want).max()))
    print(f"max abs error vs recompute: {worst:.2e}; cache bytes: {cache.nbytes()}")
    assert worst < 1e-10


if __name__ == "__main__":
    main()
