"""Tests against plain greedy decoding with a small mask-respecting target."""
import numpy as np

from tree_verify import build_tree_mask, verify_and_accept

V = 11


class ToyTarget:
    """Logits of row t = f(ordered tokens row t attends to): sensitive to any mask error."""

    def __init__(self, seed=0):
        rng = np.random.default_rng(seed)
        self.E = rng.standard_normal((V, 16))
        self.W = rng.standard_normal((16, V))

    def forward(self, tokens, mask):
        tokens = np.asarray(tokens)
        ok = np.asarray(mask) == 0
        out = []
        for t in range(len(tokens)):
            seen = tokens[ok[t]]
            weights = 0.7 ** np.arange(len(seen))[::-1]     # recency-weighted bag
            out.append((weights @ self.E[seen]) @ self.W)
        return np.array(out)

    def greedy(self, prompt, n):
        seq = list(prompt)
        for _ in range(n):
            m = build_tree_mask(len(seq), [])
            seq.append(int(self.forward(seq, m)[-1].argmax()))
        return seq[len(prompt):]


def appended(result):
    accepted, new = result
    return list(accepted) + [new]


def test_mask_small_tree():
    m = build_tree_mask(2, [-1, 0, 0, -1]) == 0
    expected = np.array([
        [1, 0, 0, 0, 0, 0],
        [1, 1, 0, 0, 0, 0],
        [1, 1, 1, 0, 0, 0],
        [1, 1, 1, 1, 0, 0],
        [1, 1, 1, 0, 1, 0],
        [1, 1, 0, 0, 0, 1],
    ], dtype=bool)
    assert (m == expected).all()


def test_full_chain_gets_bonus():
    t = ToyTarget()
    prompt = [1, 2, 3]
    g = t.greedy(prompt, 5)
    assert appended(verify_and_accept(prompt, g[:4], [-1, 0, 1, 2], t, 0)) == g[:5]


def test_branches():
    t = ToyTarget(1)
    prompt = [4, 4, 7]
    g = t.greedy(prompt, 4)
    bad = (g[0] + 1) % V
    bad1 = (g[1] + 1) % V
    # wrong first root, right second root, wrong sibling before the right child
    tokens = [bad, g[0], bad1, g[1], g[2]]
    parents = [-1, -1, 1, 1, 3]
    assert appended(verify_and_accept(prompt, tokens, parents, t, 0)) == g[:4]
    # rejected root: its children are never considered
    assert appended(verify_and_accept(prompt, [bad, g[1]], [-1, 0], t, 0)) == g[:1]


def test_random_trees_follow_greedy():
    t = ToyTarget(2)
    rng = np.random.default_rng(3)
    for _ in range(200):
        prompt = list(rng.integers(0, V, size=rng.integers(1, 6)))
        n = int(rng.integers(1, 10))
        parents = [-1] + [int(rng.integers(-1, i)) for i in range(1, n)]
        tokens = [int(x) for x in rng.integers(0, V, size=n)]
        out = appended(verify_and_accept(prompt, tokens, parents, t, 0))
        assert out == t.greedy(prompt, len(out))


if __name__ == "__main__":
    test_mask_small_tree()
    test_full_chain_gets_bonus()
    test_branches()
    test_random_trees_follow_greedy()
    print("tree verification tests passed")
