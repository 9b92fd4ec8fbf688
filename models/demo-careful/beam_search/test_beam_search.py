"""Self-checks: greedy equivalence, batch independence, EOS handling."""
import numpy as np

from beam_search import TinyTransformerLM, batched_beam_search


class ScriptedLM:
    """Returns fixed next-token log-probs keyed by the last token."""

    def __init__(self, table, vocab=6):
        self.table, self.vocab = table, vocab

    def __call__(self, tokens):
        tokens = np.asarray(tokens)
        out = np.full(tokens.shape + (self.vocab,), -20.0)
        for i, row in enumerate(tokens):
            for tok, lp in self.table.get(int(row[-1]), {}).items():
                out[i, -1, tok] = lp
        return out


def greedy(model, prompt, n, eos):
    seq = list(prompt)
    out = []
    for _ in range(n):
        tok = int(np.argmax(model(np.array([seq + out]))[0, -1]))
        out.append(tok)
        if tok == eos:
            break
    return out


def test_width_one_is_greedy():
    lm = TinyTransformerLM(seed=1)
    for prompt in ([5, 6, 7], [1, 2, 3, 4, 5]):
        best = batched_beam_search(lm, [prompt], 1, 8, 0.0, eos_token_id=0)[0][0]
        assert best["tokens"] == greedy(lm, prompt, 8, 0)


def test_batch_items_are_independent():
    lm = TinyTransformerLM(seed=2)
    prompts = [[3, 4, 5], [9, 8, 7, 6, 5]]
    together = batched_beam_search(lm, prompts, 3, 6, 0.6, eos_token_id=0)
    for p, res in zip(prompts, together):
        assert batched_beam_search(lm, [p], 3, 6, 0.6, eos_token_id=0)[0] == res


def test_finished_beam_keeps_its_place():
    # 1 -> EOS(0) at -2 (total -3) beats 1 -> 2 -> 3 at -5
    lm = ScriptedLM({5: {1: -1.0, 4: -1.5}, 1: {0: -2.0, 2: -3.0}, 2: {3: -1.0}, 3: {0: -0.01}})
    best = batched_beam_search(lm, [[5]], 2, 6, 0.0, eos_token_id=0)[0][0]
    assert best["tokens"] == [1, 0] and best["finished"]
    assert abs(best["score"] - best["logprob"]) < 1e-12 and best["score"] > -3.01


if __name__ == "__main__":
    test_width_one_is_greedy()
    test_batch_items_are_independent()
    test_finished_beam_keeps_its_place()
    print("all beam search self-checks passed")
