"""The target model the dflash_verify suite injects into answers.

Its logits at a position are a seeded function of the ordered tuple of tokens
that position may attend to (itself included), and of nothing else: no
positions, no other rows. So it is cheap, position-independent, and any
mask mistake (a sibling seen, the prompt unseen, the diagonal missing)
changes what a node predicts. A node that sees exactly prompt + its path
predicts what the target would after that sequence, which is what makes the
greedy continuation ``g`` of a prompt well defined.
"""
from __future__ import annotations

import numpy as np


def allowed_matrix(mask, T: int) -> np.ndarray:
    """A boolean (T, T) 'may attend' matrix from a boolean, 0/1 or additive mask."""
    if mask is None:
        return np.tril(np.ones((T, T), dtype=bool))
    m = np.asarray(mask)
    while m.ndim > 2 and m.shape[0] == 1:
        m = m[0]
    if m.shape != (T, T):
        raise ValueError(f"mask has shape {np.asarray(mask).shape}, expected ({T}, {T}) for {T} tokens")
    if m.dtype == bool:
        return m
    m = m.astype(np.float64)
    values = np.unique(m[np.isfinite(m)])
    if values.size and values.max() > 0 and np.all(np.isin(values, (0.0, 1.0))):
        return m == 1.0  # a 0/1 mask: 1 means attend
    return m > -1.0  # additive: 0 attends, -inf or a large negative blocks


# logit of the ids outside a large target's support: far below every drawn one
SPARSE_FLOOR = -30.0


class TreeTarget:
    """Callable and with ``forward(tokens, mask)``; returns (T, V) logits
    (or (1, T, V) when the tokens come as a (1, T) batch)."""

    def __init__(self, rng: np.random.Generator, vocab: int = 32, buckets: int = 1024, support=None):
        self.vocab = int(vocab)
        # a large vocabulary's logits are drawn only on these ids, the rest far below
        # (one fill per row): a 152k-token target stays cheap
        self.support = None if support is None else np.asarray(support, dtype=np.int64)
        width = self.vocab if self.support is None else len(self.support)
        self.table = rng.standard_normal((int(buckets), width))
        self.salt = int(rng.integers(1 << 62))
        self.calls = 0

    def _drawn(self, seq: tuple) -> np.ndarray:
        # hash() of a tuple of ints is deterministic (no per-process salt).
        return self.table[hash((self.salt, seq)) % len(self.table)]

    def _row(self, seq: tuple) -> np.ndarray:
        drawn = self._drawn(seq)
        if self.support is None:
            return drawn
        row = np.full(self.vocab, SPARSE_FLOOR)
        row[self.support] = drawn
        return row

    def next_token(self, seq) -> int:
        """The target's greedy token after the sequence ``seq``."""
        best = int(self._drawn(tuple(int(t) for t in seq)).argmax())
        return best if self.support is None else int(self.support[best])

    def continuation(self, prompt, n: int) -> list[int]:
        """Greedy continuation g of ``prompt``, n tokens long."""
        seq, out = [int(t) for t in prompt], []
        for _ in range(n):
            out.append(self.next_token(seq))
            seq.append(out[-1])
        return out

    def forward(self, tokens, mask=None, attention_mask=None, attn_mask=None, **_ignored):
        self.calls += 1
        arr = np.asarray(tokens)
        batched = arr.ndim == 2 and arr.shape[0] == 1
        toks = [int(t) for t in arr.reshape(-1).tolist()]
        T = len(toks)
        chosen = next((m for m in (mask, attention_mask, attn_mask) if m is not None), None)
        allowed = allowed_matrix(chosen, T)
        logits = np.empty((T, self.vocab))
        for t in range(T):
            logits[t] = self._row(tuple(toks[j] for j in np.flatnonzero(allowed[t])))
        return logits[None] if batched else logits

    __call__ = forward
