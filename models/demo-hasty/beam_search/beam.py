"""Batched beam search with a tiny random NumPy language model."""
import numpy as np

VOCAB_SIZE = 1000
D_MODEL = 64


class TinyLM:
    """Tiny one-block transformer LM with random weights."""

    def __init__(self, vocab_size=VOCAB_SIZE, d_model=D_MODEL, seed=42):
        rng = np.random.default_rng(seed)
        self.vocab_size = vocab_size
        self.E = rng.standard_normal((vocab_size, d_model)) * 0.5
        self.P = rng.standard_normal((512, d_model)) * 0.1
        self.Wq = rng.standard_normal((d_model, d_model)) / np.sqrt(d_model)
        self.Wk = rng.standard_normal((d_model, d_model)) / np.sqrt(d_model)
        self.Wv = rng.standard_normal((d_model, d_model)) / np.sqrt(d_model)
        self.W1 = rng.standard_normal((d_model, 4 * d_model)) / np.sqrt(d_model)
        self.W2 = rng.standard_normal((4 * d_model, d_model)) / np.sqrt(4 * d_model)
        self.Wout = rng.standard_normal((d_model, vocab_size)) / np.sqrt(d_model)

    def next_token_logits(self, tokens):
        """tokens: 1-D sequence -> logits (vocab,) for the next token."""
        x = self.E[tokens] + self.P[: len(tokens)]
        q, k, v = x @ self.Wq, x @ self.Wk, x @ self.Wv
        s = q @ k.T / np.sqrt(x.shape[-1])
        s = s + np.triu(np.full(s.shape, -1e9), 1)
        a = np.exp(s - s.max(-1, keepdims=True))
        a /= a.sum(-1, keepdims=True)
        x = x + a @ v
        x = x + np.maximum(x @ self.W1, 0) @ self.W2
        return x[-1] @ self.Wout


MODEL = TinyLM()


def log_softmax(x):
    x = x - np.max(x)
    return x - np.log(np.sum(np.exp(x)))


def batched_beam_search(prompts, beam_width, max_new_tokens, alpha=0.6, eos_token_id=0):
    """Beam search for each prompt in the batch.

    Returns a list (one per prompt) of beam_width (tokens, score) tuples,
    best first, where tokens are the newly generated tokens.
    """
    results = []
    for prompt in prompts:
        beams = [([], 0.0, False)]  # (tokens, score, done)
        for step in range(max_new_tokens):
            candidates = []
            for tokens, score, done in beams:
                if done:
                    continue
                logp = log_softmax(MODEL.next_token_logits(list(prompt) + tokens))
                top = np.argsort(logp)[::-1][: 2 * beam_width]
                for t in top:
                    new_tokens = tokens + [int(t)]
                    # length-normalised score
                    new_score = (score + logp[t]) / (len(new_tokens) ** alpha)
                    candidates.append((new_tokens, float(new_score), int(t) == eos_token_id))
            if not candidates:
                break
            candidates.sort(key=lambda c: c[1], reverse=True)
            beams = candidates[:beam_width]
            if all(done for _, _, done in beams):
                break
        results.append([(tokens, score) for tokens, score, _ in beams])
    return results
