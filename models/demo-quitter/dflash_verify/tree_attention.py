"""DFlash tree verification (work in progress).

Done: the tree attention mask.
TODO: the acceptance walk. I have not settled which logits row judges a node:
the sketch in the task reads row P + i, but row t predicts the token after
position t, so for node i it should be the row of i's parent. Needs a test
with a real (mask-respecting) target before writing the walk.
"""
import numpy as np


def build_tree_mask(prompt_len, tree_parents):
    """(P + N, P + N) boolean mask, True where attention is allowed."""
    P, N = prompt_len, len(tree_parents)
    mask = np.zeros((P + N, P + N), dtype=bool)
    mask[:P, :P] = np.tril(np.ones((P, P), dtype=bool))
    mask[P:, :P] = True
    for i, parent in enumerate(tree_parents):
        mask[P + i, P + i] = True
        if parent >= 0:
            mask[P + i] |= mask[P + parent]
    return mask


def ancestors(tree_parents, i):
    """Indices of node i's ancestors, nearest first."""
    out = []
    parent = tree_parents[i]
    while parent != -1:
        out.append(parent)
        parent = tree_parents[parent]
    return out
