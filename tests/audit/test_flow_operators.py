"""The audit's data-flow operators (engine/audit/flow.py): each one's mutants
on a small source, what it writes and only where, and every mutant compiles."""
from __future__ import annotations

import numpy as np
from benchtui.audit.mutate import OPERATORS, mutants_of


def made(src: str, operator: str) -> dict[str, str]:
    """description -> the mutated source, for ``operator``'s mutants of ``src``."""
    out = {}
    for m in mutants_of(src, "a.py"):
        if m.operator == operator:
            compile(m.source, "a.py", "exec")
            out[m.description] = m.source
    return out


def added(src: str, mutated: str) -> list[str]:
    return [ln.strip() for ln in mutated.splitlines() if ln not in src.splitlines()]


def test_normalisation_drops_a_softmax_call_and_a_hand_written_log_softmax():
    src = ("import numpy as np\n\n\ndef step(logits, h):\n    lp = log_softmax(logits, axis=-1)\n"
           "    p = h.softmax()\n    z = logits - np.log(np.exp(logits).sum(-1, keepdims=True))\n"
           "    y = logits - scale(h)\n    norm = nn.RMSNorm(h)\n    return lp, p, z, y\n")
    got = made(src, "normalisation")
    assert {d: added(src, s) for d, s in got.items()} == {
        "drop the log_softmax": ["lp = (logits)"],
        "drop the softmax": ["p = (h)"],
        "drop the log-normaliser log(...)": ["z = logits"]}
    # logits - scale(h) normalises nothing; nn.RMSNorm(h) builds a layer


def test_one_operand_leaves_one_of_two_rotated_operands_unrotated():
    src = ("def attend(self, q, k, cos, sin):\n    q = self.rope(q, offset=0)\n    k = self.rope(k, offset=0)\n"
           "    a, b = apply_rotary(q, k, cos, sin)\n    return a @ b\n\n\ndef only(self, x):\n"
           "    return self.rope(x)\n")
    got = {d: added(src, s) for d, s in made(src, "one_operand").items()}
    assert got == {"rope left out for q only": ["q = (q)"], "rope left out for k only": ["k = (k)"],
                   "apply_rotary: q left unrotated": ["a, b = (q, apply_rotary(q, k, cos, sin)[1])"],
                   "apply_rotary: k left unrotated": ["a, b = (apply_rotary(q, k, cos, sin)[0], k)"]}
    # only(): a rotation of a single operand has no other operand to differ from


def test_one_operand_takes_the_maximum_before_the_mask_in_a_tiled_softmax():
    src = ("import numpy as np\n\n\ndef tile(s, m, rows, cols, causal):\n    if causal:\n"
           "        s = np.where(cols > rows, -np.inf, s)\n    m_new = np.maximum(m, s.max(axis=-1))\n"
           "    p = np.exp(s - m_new[..., None])\n    return p\n")
    [(description, mutated)] = made(src, "one_operand").items()
    assert description == "mask on s applied after the next statement reads it"
    ns: dict = {}
    exec(compile(mutated, "a.py", "exec"), ns)
    s = np.array([[0.0, 1000.0]])
    rows, cols = np.array([[0]]), np.array([[0, 1]])
    assert np.isfinite(np.exp(np.where(cols > rows, -np.inf, s) - 0.0)).all()
    with np.errstate(over="ignore"):
        p = ns["tile"](s, np.array([-np.inf]), rows, cols, True)
    assert p[0, 0] == 0.0  # the maximum came from the masked key: the one key left underflows to 0
    # the mutant's line is the one that now reads the unmasked value
    [m] = [m for m in mutants_of(src, "a.py") if m.operator == "one_operand"]
    assert src.splitlines()[m.line - 1].strip().startswith("m_new")


def test_one_operand_leaves_a_mask_whose_value_has_no_later_use():
    src = "import numpy as np\n\n\ndef f(s, ok):\n    s = np.where(ok, s, 0.0)\n    return s.sum()\n"
    assert made(src, "one_operand") == {}  # the swap would not compile into anything: nothing reads s after


def test_unscaled_returns_the_accumulator_before_its_division():
    src = ("def attention(acc, l, n):\n    out = acc / l\n    scale = 1.0 / n\n    return out\n\n\n"
           "def mean(xs):\n    return sum(xs) / len(xs), 1.0 / len(xs)\n\n\ndef fill(O, acc, l):\n"
           "    O[0] = acc / l\n    return O\n")
    got = {d: added(src, s) for d, s in made(src, "unscaled").items()}
    assert got == {"out = acc undivided": ["out = acc"], "return sum(xs) undivided": ["return sum(xs), 1.0 / len(xs)"],
                   "O = acc undivided": ["O[0] = acc"]}
    # scale is not returned; 1.0 / len(xs) divides a literal, not an accumulator


def test_reported_figure_reads_a_figure_from_elsewhere():
    src = ("import json\n\n\ndef report(train_loss, val_loss, out):\n    figures = {'train_loss': train_loss, "
           "'val_loss': val_loss, 'steps': 30}\n    out['val_ppl'] = 2.718 ** val_loss\n    json.dump(figures, out)\n\n\n"
           "def evaluate(model, data):\n    return model.loss(data)\n")
    got = {d: added(src, s) for d, s in made(src, "reported_figure").items()}
    assert got == {
        "figure 'train_loss' read from val_loss": [
            "figures = {'train_loss': val_loss, 'val_loss': val_loss, 'steps': 30}"],
        "figure 'train_loss' read from a constant": ["figures = {'train_loss': 1.0, 'val_loss': val_loss, 'steps': 30}"],
        "figure 'val_loss' read from train_loss": [
            "figures = {'train_loss': train_loss, 'val_loss': train_loss, 'steps': 30}"],
        "figure 'val_loss' read from a constant": ["figures = {'train_loss': train_loss, 'val_loss': 1.0, 'steps': 30}"],
        "figure 'val_ppl' set to a constant": ["out['val_ppl'] = 1.0"],
        "evaluate returns a constant": ["return 1.0"]}  # 'steps' is no figure of merit


def test_empty_branch_drops_or_widens_an_empty_input_guard():
    src = ("def pick(xs, n, a):\n    if len(xs) == 0:\n        return []\n    if not xs:\n        return None\n"
           "    if a.shape[0] == 0:\n        return a\n    if n < 1:\n        return 0\n    if n == 3:\n        return 1\n"
           "    return xs[0]\n")
    got = {d: added(src, s) for d, s in made(src, "empty_branch").items()}
    assert got == {"the empty-input branch on len(xs) dropped": ["if False:"],
                   "the empty-input branch on len(xs) taken for length one too": ["if (len(xs) <= 1):"],
                   "the empty-input branch on xs dropped": ["if False:"],
                   "the empty-input branch on xs taken for length one too": ["if (len(xs) <= 1):"],
                   "the empty-input branch on a.shape[0] dropped": ["if False:"],
                   "the empty-input branch on a.shape[0] taken for length one too": ["if (a.shape[0] <= 1):"],
                   "the empty-input branch on n dropped": ["if False:"],
                   "the empty-input branch on n taken for length one too": ["if (n <= 1):"]}
    # n == 3 is no empty-input guard


def test_empty_branch_leaves_flags_alone():
    src = ("def attend(q, causal=True, is_training=False, mask=None):\n    if not causal:\n        return q\n"
           "    if not is_training:\n        return q\n    if not mask:\n        return q\n    return q\n")
    got = {d: added(src, s) for d, s in made(src, "empty_branch").items()}
    assert got == {"the empty-input branch on mask dropped": ["if False:"],
                   "the empty-input branch on mask taken for length one too": ["if (len(mask) <= 1):"]}


def test_flow_operators_are_listed_and_named_in_the_docs():
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "audit.md").read_text(encoding="utf-8")
    for name in ("normalisation", "one_operand", "unscaled", "reported_figure", "empty_branch"):
        assert OPERATORS[name]
        assert f"| `{name}` |" in doc, name
