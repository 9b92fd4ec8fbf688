"""Batched beam search for a tiny random transformer LM (NumPy only).

Design notes
------------
* Every batch item is searched independently: its own pool of K beams, its
  own global sort over the K * 2K candidates.
* A beam keeps its *raw* cumulative log-probability. The length penalty
  ``logprob / len(new_tokens) ** alpha`` is applied only when ranking, so it
  never compounds across steps.
* A beam that emits EOS is frozen but stays in the pool, competing with the
  live beams; the search ends when all K beams are finished or when
  ``max_new_tokens`` tokens were generated.
"""
from __future__ import annotations

import numpy as np


def _log_softmax(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    shifted = x - x.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


class TinyTransformerLM:
    """Single-block decoder: embeddings, causal self-attention, MLP, LM head.

    ``model(tokens)`` takes a (B, T) int array and returns (B, T, V) logits.
    """

    def __init__(self, vocab_size: int = 1000, d_model: int = 64, n_heads: int = 4,
                 max_seq_len: int = 256, seed: int = 0):
        g = np.random.default_rng(seed)
        self.vocab_size, self.d_model, self.n_heads = vocab_size, d_model, n_heads
        std = d_model ** -0.5
        self.tok_emb = g.normal(0.0, 0.02 * 50, (vocab_size, d_model))
        self.pos_emb = g.normal(0.0, 0.02, (max_seq_len, d_model))
        self.w_qkv = g.normal(0.0, std, (d_model, 3 * d_model))
        self.w_out = g.normal(0.0, std, (d_model, d_model))
        self.w_up = g.normal(0.0, std, (d_model, 4 * d_model))
        self.w_down = g.normal(0.0, (4 * d_model) ** -0.5, (4 * d_model, d_model))
        self.w_head = g.normal(0.0, std, (d_model, vocab_size))

    @staticmethod
    def _layer_norm(x: np.ndarray) -> np.ndarray:
        mu = x.mean(axis=-1, keepdims=True)
        return (x - mu) / np.sqrt(x.var(axis=-1, keepdims=True) + 1e-5)

    def __call__(self, tokens: np.ndarray) -> np.ndarray:
        tokens = np.asarray(tokens)
        b, t = tokens.shape
        h = self.tok_emb[tokens] + self.pos_emb[:t]
        q, k, v = np.split(self._layer_norm(h) @ self.w_qkv, 3, axis=-1)
        hd = self.d_model // self.n_heads
        split = lambda a: a.reshape(b, t, self.n_heads, hd).transpose(0, 2, 1, 3)
        q, k, v = split(q), split(k), split(v)
        scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(hd)
        causal = np.triu(np.ones((t, t), dtype=bool), k=1)
        scores = np.where(causal, -np.inf, scores)
        attn = np.exp(_log_softmax(scores))
        ctx = (attn @ v).transpose(0, 2, 1, 3).reshape(b, t, self.d_model)
        h = h + ctx @ self.w_out
        h = h + np.maximum(self._layer_norm(h) @ self.w_up, 0.0) @ self.w_down
        return self._layer_norm(h) @ self.w_head


def _rank(logprob: float, n_tokens: int, alpha: float) -> float:
    return logprob / (n_tokens ** alpha)


def _search_one(model, prompt, beam_width, max_new_tokens, alpha, eos_token_id):
    prompt = [int(t) for t in prompt]
    # (new_tokens, cumulative logprob, finished)
    beams = [((), 0.0, False)]
    for _ in range(max_new_tokens):
        live = [b for b in beams if not b[2]]
        if not live:
            break
        # All live beams share one length, so they batch as a (n_live, T) array.
        batch = np.array([prompt + list(b[0]) for b in live], dtype=np.int64)
        logp = _log_softmax(model(batch)[:, -1, :])
        candidates = [b for b in beams if b[2]]  # finished beams compete as they are
        n_expand = min(2 * beam_width, logp.shape[-1])
        for row, (tokens, score, _) in zip(logp, live):
            top = np.argpartition(-row, n_expand - 1)[:n_expand]
            for tok in top[np.argsort(-row[top], kind="stable")]:
                tok = int(tok)
                candidates.append((tokens + (tok,), score + float(row[tok]), tok == eos_token_id))
        candidates.sort(key=lambda c: _rank(c[1], len(c[0]), alpha), reverse=True)
        beams = candidates[:beam_width]
    return [{"tokens": list(t), "score": _rank(s, len(t), alpha), "logprob": s, "finished": f}
            for t, s, f in beams]


def batched_beam_search(model, prompts, beam_width: int, max_new_tokens: int, alpha: float = 0.6,
                        eos_token_id: int = 0):
    """Return, for each prompt, ``beam_width`` dicts sorted best first:
    ``{"tokens": new tokens (EOS included when emitted), "score": ranking score,
    "logprob": raw log-probability, "finished": bool}``. Prompts may differ in length."""
    if beam_width < 1 or max_new_tokens < 1:
        raise ValueError("beam_width and max_new_tokens must be positive")
    return [_search_one(model, p, beam_width, max_new_tokens, alpha, eos_token_id) for p in prompts]
