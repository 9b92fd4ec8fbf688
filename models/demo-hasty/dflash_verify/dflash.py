import numpy as np


def build_tree_mask(prompt_len, tree_parents):
    """Boolean attention mask for prompt + draft tree (True = can attend)."""
    n = len(tree_parents)
    total = prompt_len + n
    mask = np.zeros((total, total), dtype=bool)
    # causal attention inside the prompt
    for i in range(prompt_len):
        mask[i, :i + 1] = True
    for i in range(n):
        row = prompt_len + i
        mask[row, :prompt_len] = True  # all tree nodes see the prompt
        # walk up the ancestors
        node = i
        while node != -1:
            mask[row, prompt_len + node] = True
            node = tree_parents[node]
    return mask


def verify_and_accept(prompt_tokens, tree_tokens, tree_parents, target_model, temperature=0):
    """Verify the whole draft tree with one forward pass of the target model.

    Returns the list of tokens to append: accepted draft tokens followed by
    the target's next token.
    """
    P = len(prompt_tokens)
    N = len(tree_tokens)
    tokens = np.array(list(prompt_tokens) + list(tree_tokens))
    mask = build_tree_mask(P, tree_parents)
    logits = target_model.forward(tokens, mask)
    preds = np.argmax(logits, axis=-1)

    accepted = set()
    path = []
    last = -1
    for i in range(N):
        parent = tree_parents[i]
        if parent != -1 and parent not in accepted:
            continue
        if parent != last:
            continue  # not on the current accepted path
        if preds[P + i] == tree_tokens[i]:
            accepted.add(i)
            path.append(int(tree_tokens[i]))
            last = i

    # bonus token from the last accepted position
    bonus_pos = P - 1 if last == -1 else P + last
    path.append(int(preds[bonus_pos]))
    return path
