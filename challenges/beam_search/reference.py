"""Trusted reference: batched beam search in NumPy over any causal LM.

The model convention used here: ``model(tokens)`` with a 1-D int array of
length T returns (T, V) logits, one row per position (causal). The search
only reads the last row. ``TinyLM`` below is the task's tiny random model.
"""
from __future__ import annotations

import numpy as np


def log_softmax(z: np.ndarray) -> np.ndarray:
    z = np.asarray(z, dtype=np.float64)
    m = z.max(axis=-1, keepdims=True)
    return z - m - np.log(np.exp(z - m).sum(axis=-1, keepdims=True))


class TinyLM:
    """One pre-norm transformer block with causal attention, random weights."""

    def __init__(self, vocab_size: int = 1000, d_model: int = 64, seed: int = 0, max_len: int = 512):
        rng = np.random.default_rng(seed)
        s = 1.0 / np.sqrt(d_model)
        self.vocab_size, self.d_model = vocab_size, d_model
        self.embed = rng.normal(0, 1, (vocab_size, d_model))
        self.pos = rng.normal(0, 0.1, (max_len, d_model))
        self.wq, self.wk, self.wv, self.wo = (rng.normal(0, s, (d_model, d_model)) for _ in range(4))
        self.w1 = rng.normal(0, s, (d_model, 4 * d_model))
        self.w2 = rng.normal(0, s / 2, (4 * d_model, d_model))
        self.unembed = rng.normal(0, s, (d_model, vocab_size))

    @staticmethod
    def _norm(x: np.ndarray) -> np.ndarray:
        return (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)

    def __call__(self, tokens) -> np.ndarray:
        tokens = np.asarray(tokens, dtype=np.int64)
        t = len(tokens)
        x = self.embed[tokens] + self.pos[:t]
        h = self._norm(x)
        q, k, v = h @ self.wq, h @ self.wk, h @ self.wv
        att = q @ k.T / np.sqrt(self.d_model)
        att = np.where(np.tril(np.ones((t, t), dtype=bool)), att, -np.inf)
        x = x + (np.exp(log_softmax(att)) @ v) @ self.wo
        x = x + np.maximum(self._norm(x) @ self.w1, 0) @ self.w2
        return self._norm(x) @ self.unembed


def ranking_score(logprob: float, length: int, alpha: float) -> float:
    """Length-normalised score; used only to rank, never accumulated."""
    return logprob / (max(length, 1) ** alpha)


def beam_search_one(model, prompt, beam_width: int, max_new_tokens: int, alpha: float,
                    eos_token_id: int, count_eos: bool = True) -> list[tuple[list[int], float]]:
    """K best continuations of one prompt as (new_tokens, score), best first.

    A beam is (new_tokens, total_logprob, finished). Finished beams stay in
    the pool and compete; unfinished beams expand by their top 2K tokens.
    """
    prompt = [int(t) for t in prompt]
    k = beam_width

    def score(beam) -> float:
        tokens, logp, finished = beam
        length = len(tokens) - (1 if finished and not count_eos else 0)
        return ranking_score(logp, length, alpha)

    beams: list[tuple[list[int], float, bool]] = [([], 0.0, False)]
    for _ in range(max_new_tokens):
        candidates = []
        for beam in beams:
            tokens, logp, finished = beam
            if finished:
                candidates.append(beam)
                continue
            lp = log_softmax(np.asarray(model(np.array(prompt + tokens, dtype=np.int64)))[-1])
            for tok in np.argsort(-lp, kind="stable")[: 2 * k]:
                tok = int(tok)
                candidates.append((tokens + [tok], logp + float(lp[tok]), tok == eos_token_id))
        # Python's sort is stable: ties keep expansion order.
        beams = sorted(candidates, key=score, reverse=True)[:k]
        if all(b[2] for b in beams):
            break
    return [(b[0], score(b)) for b in beams]


def batched_beam_search(model, prompts, beam_width: int, max_new_tokens: int, alpha: float,
                        eos_token_id: int, count_eos: bool = True) -> list[list[tuple[list[int], float]]]:
    """Each prompt searched independently: K (new_tokens, score) per item."""
    return [beam_search_one(model, p, beam_width, max_new_tokens, alpha, eos_token_id, count_eos)
            for p in prompts]


def greedy_decode(model, prompt, max_new_tokens: int, eos_token_id: int) -> list[int]:
    tokens = [int(t) for t in prompt]
    out: list[int] = []
    for _ in range(max_new_tokens):
        tok = int(np.argmax(np.asarray(model(np.array(tokens + out, dtype=np.int64)))[-1]))
        out.append(tok)
        if tok == eos_token_id:
            break
    return out


if __name__ == "__main__":
    lm = TinyLM()
    for tokens, s in batched_beam_search(lm, [[1, 2, 3]], 3, 8, 0.6, 0)[0]:
        print(round(s, 4), tokens)
