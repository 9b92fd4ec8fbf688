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

# an additive mask's "large negative number": at most this blocks (exp(-100) ~ 4e-44)
LARGE_NEGATIVE = -100.0


def allowed_matrix(mask, T: int) -> np.ndarray:
    """A boolean (T, T) 'may attend' matrix from a mask of the two forms the
    prompt defines, read as it defines them: boolean (True = may attend), or
    additive (0 = may attend, -inf or a large negative number = blocked).
    Anything else raises ValueError saying what it is: no mask, another shape
    (a batch or head axis included), or values of neither form (a 0/1 mask of
    numbers, which the additive reading would take as 1 = blocked by a small
    amount)."""
    if mask is None:
        raise ValueError("no mask: the prompt's target is called with (tokens, mask), mask a (T, T) attention mask")
    m = np.asarray(mask)
    if m.shape != (T, T):
        raise ValueError(f"mask has shape {m.shape}, expected ({T}, {T}) for {T} tokens")
    if m.dtype == bool:
        return m
    if m.dtype.kind not in "iuf":
        raise ValueError(f"mask of dtype {m.dtype}: the prompt's masks are boolean or additive (numbers)")
    m = m.astype(np.float64)
    odd = m[(m != 0.0) & ~(m <= LARGE_NEGATIVE)]
    if odd.size:
        hint = " (a 0/1 mask of numbers: neither boolean nor additive)" if np.all(np.isin(m, (0.0, 1.0))) else ""
        raise ValueError(f"mask value {float(odd[0])!r} is neither 0 (may attend) nor -inf or a large negative "
                         f"number (blocked, <= {LARGE_NEGATIVE:g}){hint}")
    return m == 0.0


def token_ids(tokens) -> list[int]:
    """The prompt's ``tokens``: a list of ints or a 1-D integer array, nothing else."""
    arr = np.asarray(tokens)
    if arr.ndim != 1:
        raise ValueError(f"tokens of shape {arr.shape}: the prompt's target takes the sequence as a list or a 1-D "
                         "array of length T")
    if arr.size and arr.dtype.kind not in "iu":
        raise ValueError(f"tokens of dtype {arr.dtype}: token ids are integers")
    return [int(t) for t in arr.tolist()]


# logit of the ids outside a large target's support: far below every drawn one
SPARSE_FLOOR = -30.0


class TreeTarget:
    """Callable and with ``forward(tokens, mask)``, as the prompt's target is;
    returns (T, V) logits. No more lenient than that target: the mask is
    required, and tokens come as one sequence."""

    def __init__(self, rng: np.random.Generator, vocab: int = 32, buckets: int = 1024, support=None):
        self.vocab = int(vocab)
        # a large vocabulary's logits are drawn only on these ids, the rest far below
        # (one fill per row): a 152k-token target stays cheap
        self.support = None if support is None else np.asarray(support, dtype=np.int64)
        width = self.vocab if self.support is None else len(self.support)
        self.table = rng.standard_normal((int(buckets), width))
        self.salt = int(rng.integers(1 << 62))
        self.calls = 0
        self.refusals: list[str] = []

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

    def forward(self, tokens, *args, **kwargs):
        """(T, V) logits of ``tokens`` under the mask, taken exactly as the prompt's
        target takes them: ``(tokens, mask)`` or ``(tokens, mask=mask)``. A call it
        refuses raises, and is kept in ``refusals``: the suite tells the answer
        refusing an input from the answer calling the target wrongly."""
        self.calls += 1
        try:
            if len(args) == 1 and not kwargs:
                mask = args[0]
            elif not args and set(kwargs) == {"mask"}:
                mask = kwargs["mask"]
            else:
                given = ", ".join(["tokens", *("a positional argument" for _ in args), *kwargs])
                raise TypeError(f"called with ({given}): the prompt's target is called as target_model(tokens, mask) "
                                "or target_model.forward(tokens, mask)")
            toks = token_ids(tokens)
            allowed = allowed_matrix(mask, len(toks))
        except (TypeError, ValueError) as exc:
            self.refusals.append(str(exc))
            raise
        logits = np.empty((len(toks), self.vocab))
        for t in range(len(toks)):
            logits[t] = self._row(tuple(toks[j] for j in np.flatnonzero(allowed[t])))
        return logits

    __call__ = forward
