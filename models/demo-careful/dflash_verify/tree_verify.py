"""Greedy verification of a draft tree with one tree-masked target pass.

Key indexing fact: logits row t predicts the token that FOLLOWS position t.
So the target's verdict on node i is read at the row of i's parent
(P - 1 for a root, P + parent otherwise) -- not at row P + i, which is the
prediction for i's children.
"""
import numpy as np

NEG_INF = np.float32(-np.inf)


def build_tree_mask(prompt_len, tree_parents):
    """Additive (P+N, P+N) float32 mask: 0 where attention is allowed, -inf elsewhere."""
    P, N = int(prompt_len), len(tree_parents)
    allowed = np.zeros((P + N, P + N), dtype=bool)
    allowed[:P, :P] = np.tri(P, dtype=bool)            # causal prompt
    allowed[P:, :P] = True                             # every node sees the prompt
    for i, par in enumerate(tree_parents):
        par = int(par)
        assert -1 <= par < i, f"tree_parents must be topologically ordered (node {i} -> {par})"
        row = P + i
        if par >= 0:
            allowed[row, P:] = allowed[P + par, P:]    # inherit the parent's ancestors
        allowed[row, row] = True                       # and see itself
    return np.where(allowed, np.float32(0.0), NEG_INF)


def _logits(target_model, tokens, mask):
    fwd = getattr(target_model, "forward", target_model)
    out = np.asarray(fwd(tokens, mask))
    return out.reshape(len(tokens), -1)


def verify_and_accept(prompt_tokens, tree_tokens, tree_parents, target_model, temperature=0):
    """Returns (accepted_tokens, new_token).

    accepted_tokens: the longest root-to-node path whose every token equals
    the target's greedy choice; new_token: the target's greedy token after
    that path (bonus on full acceptance, correction otherwise).
    """
    if temperature != 0:
        raise NotImplementedError("only greedy verification (temperature=0) is implemented")
    prompt = [int(t) for t in prompt_tokens]
    tree = [int(t) for t in tree_tokens]
    parents = [int(p) for p in tree_parents]
    P = len(prompt)
    if P == 0:
        raise ValueError("need at least one prompt token to condition on")

    logits = _logits(target_model, np.asarray(prompt + tree, dtype=np.int64), build_tree_mask(P, parents))
    greedy = logits.argmax(axis=-1)

    kids = {}
    for i, par in enumerate(parents):
        kids.setdefault(par, []).append(i)

    def row_of(node):          # row whose logits predict node's children
        return P - 1 if node < 0 else P + node

    accepted, node = [], -1
    while True:
        nxt = int(greedy[row_of(node)])
        match = [c for c in kids.get(node, []) if tree[c] == nxt]
        if not match:          # nothing drafted here agrees: stop, nxt is the correction/bonus
            return accepted, nxt
        node = match[0]        # siblings with the same token are interchangeable here
        accepted.append(nxt)
