import numpy as np

from dflash import build_tree_mask, verify_and_accept

VOCAB = 20


class ScriptedTarget:
    """Target model that predicts a fixed token at each position."""

    def __init__(self, script):
        self.script = script

    def forward(self, tokens, mask):
        logits = np.zeros((len(tokens), VOCAB))
        for pos, tok in self.script.items():
            if pos < len(tokens):
                logits[pos, tok] = 10.0
        return logits


def test_mask_chain():
    mask = build_tree_mask(3, [-1, 0, 1])
    assert mask.shape == (6, 6)
    assert np.array_equal(mask, np.tril(np.ones((6, 6), dtype=bool)))


def test_mask_siblings_do_not_see_each_other():
    mask = build_tree_mask(2, [-1, -1])
    assert mask[2, 2] and mask[3, 3]
    assert not mask[3, 2] and not mask[2, 3]


def test_accept_all():
    prompt = [1, 2, 3]
    draft = [5, 6, 7]
    target = ScriptedTarget({3: 5, 4: 6, 5: 7})
    out = verify_and_accept(prompt, draft, [-1, 0, 1], target)
    assert out[:3] == [5, 6, 7]
    assert len(out) == 4


def test_reject_second_token():
    prompt = [1, 2, 3]
    draft = [5, 9, 7]
    target = ScriptedTarget({2: 4, 3: 5, 4: 6, 5: 7})
    out = verify_and_accept(prompt, draft, [-1, 0, 1], target)
    assert out == [5, 5]


def test_reject_everything():
    prompt = [1, 2, 3]
    target = ScriptedTarget({2: 4, 3: 8})
    out = verify_and_accept(prompt, [5, 6], [-1, 0], target)
    assert out == [4]


if __name__ == "__main__":
    for name, fn in list(globals().items()):
        if name.startswith("test_"):
            fn()
    print("all tests passed")
