"""Trusted reference for dflash_verify: tree mask and greedy tree verification.

Conventions: ``tree_parents[i]`` is the index of node i's parent, -1 meaning
"child of the last prompt token"; nodes are in topological order (parent
index < own index). The mask is boolean, True where a row may attend.
"""
from __future__ import annotations

import numpy as np


def build_tree_mask(prompt_len, tree_parents):
    """(P + N, P + N) boolean mask: the prompt is causal; node i sees the
    whole prompt, its ancestors and itself, and nothing else."""
    P = int(prompt_len)
    parents = [int(p) for p in tree_parents]
    N = len(parents)
    mask = np.zeros((P + N, P + N), dtype=bool)
    mask[:P, :P] = np.tril(np.ones((P, P), dtype=bool))
    mask[P:, :P] = True
    for i, parent in enumerate(parents):
        if not -1 <= parent < i:
            raise ValueError(f"node {i} has parent {parent}: nodes must be in topological order")
        mask[P + i, P + i] = True
        if parent >= 0:
            # Topological order: the parent's row already holds all its ancestors.
            mask[P + i, P:P + N] |= mask[P + parent, P:P + N]
    return mask


def verify_and_accept(prompt_tokens, tree_tokens, tree_parents, target_model, temperature=0):
    """Greedy verification: the tokens this cycle appends (accepted path plus
    the target's own next token). One target call for the whole tree."""
    if temperature != 0:
        raise NotImplementedError("the reference verifies greedily (temperature=0) only")
    prompt = [int(t) for t in prompt_tokens]
    tree = [int(t) for t in tree_tokens]
    parents = [int(p) for p in tree_parents]
    P, N = len(prompt), len(tree)
    logits = np.asarray(target_model.forward(np.array(prompt + tree, dtype=np.int64), build_tree_mask(P, parents)))
    predicted = logits.reshape(P + N, -1).argmax(axis=-1)
    children = [[] for _ in range(N + 1)]  # children[parent + 1], in index order
    for i, parent in enumerate(parents):
        children[parent + 1].append(i)
    out = []
    node = -1
    while True:
        # What the target says follows `node` sits at node's own position
        # (P - 1 for the virtual root): it is the prediction its children face.
        want = int(predicted[P + node])
        out.append(want)
        match = next((c for c in children[node + 1] if tree[c] == want), None)
        if match is None:
            return out
        node = match


class MinimalLM:
    """A small target model of the kind the published prompt asks answers to
    write: one attention block over token embeddings, no positions (so a node
    that sees exactly prompt + its path predicts what greedy decoding would),
    logits for every position with the tree mask applied (boolean, or
    additive: 0 attends, -inf or a large negative blocks)."""

    def __init__(self, vocab_size: int = 1000, d_model: int = 64, seed: int = 0):
        rng = np.random.default_rng(seed)
        self.vocab_size = vocab_size
        self.emb = rng.normal(size=(vocab_size, d_model))
        self.wq, self.wk, self.wv = (rng.normal(size=(d_model, d_model)) / np.sqrt(d_model) for _ in range(3))
        self.head = rng.normal(size=(d_model, vocab_size)) / np.sqrt(d_model)

    def forward(self, tokens, mask):
        x = self.emb[np.asarray(tokens, dtype=np.int64)]
        allowed = np.asarray(mask)
        allowed = allowed if allowed.dtype == bool else allowed > -1.0
        s = (x @ self.wq) @ (x @ self.wk).T / np.sqrt(x.shape[1])
        s = np.where(allowed, s, -np.inf)
        w = np.exp(s - s.max(axis=-1, keepdims=True))
        return (x + (w / w.sum(axis=-1, keepdims=True)) @ (x @ self.wv)) @ self.head

    __call__ = forward
