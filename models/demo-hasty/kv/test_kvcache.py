import numpy as np

from kvcache_numpy import KVCache, softmax


def full_attention(q, k, v):
    d = q.shape[-1]
    T = q.shape[2]
    scores = np.einsum("bhqd,bhkd->bhqk", q, k) / np.sqrt(d)
    mask = np.triu(np.ones((T, T)), k=1).astype(bool)
    scores[..., mask] = -np.inf
    return np.einsum("bhqk,bhkd->bhqd", softmax(scores), v)


def test_matches_full_attention():
    np.random.seed(0)
    B, H, T, D, steps = 2, 4, 8, 16, 10
    q = np.random.randn(B, H, T + steps, D)
    k = np.random.randn(B, H, T + steps, D)
    v = np.random.randn(B, H, T + steps, D)
    cache = KVCache()
    cache.prefill(k[:, :, :T], v[:, :, :T], [T, T])
    ref = full_attention(q, k, v)
    for s in range(steps):
        t = T + s
        out = cache.decode_step(q[:, :, t], k[:, :, t], v[:, :, t])
        assert np.allclose(out, ref[:, :, t], atol=1e-10)


def test_memory_grows_linearly():
    cache = KVCache()
    cache.prefill(np.zeros((1, 2, 4, 8)), np.zeros((1, 2, 4, 8)), [4])
    sizes = []
    for _ in range(3):
        cache.update(np.zeros((1, 2, 8)), np.zeros((1, 2, 8)))
        sizes.append(cache.memory_bytes())
    assert sizes[1] - sizes[0] == sizes[2] - sizes[1]
