"""The audit's contract operators (engine/audit/kernel.py): the bugs models write
against what a prompt states (a default, a remainder tile, a dtype, a kept
dimension, a tie, a max-shift, a configuration value, a ragged batch, a
special token). Each one's mutants on a small source, only where they belong,
every mutant compiling; `--operators kernel` selects them alone."""
from __future__ import annotations

from pathlib import Path

import numpy as np
from benchtui.audit.core import pick
from benchtui.audit.kernel import KERNEL
from benchtui.audit.mutate import FAMILIES, OPERATORS, Source, mutants_of


def made(src: str, operator: str) -> dict[str, str]:
    out = {}
    for m in mutants_of(src, "a.py"):
        if m.operator == operator:
            compile(m.source, "a.py", "exec")
            out[m.description] = m.source
    return out


def added(src: str, mutated: str) -> list[str]:
    return [ln.strip() for ln in mutated.splitlines() if ln not in src.splitlines()]


def run(source: str, fn: str, *args):
    scope: dict = {"np": np}
    exec(compile(source, "a.py", "exec"), scope)
    return scope[fn](*args)


def test_default_flip_changes_a_literal_default_on_the_line_a_call_reaches():
    src = "def quantize(w, group_size=128, alpha=0.6, causal=True, name='x', eps=None):\n    return w\n"
    got = {d: added(src, s) for d, s in made(src, "default_flip").items()}
    assert set(got) == {"default group_size=128 -> 64", "default alpha=0.6 -> 1.0", "default causal=True -> False"}
    # placed on the first statement: the def line runs at import, the body when a check calls it
    assert {m.line for m in mutants_of(src, "a.py") if m.operator == "default_flip"} == {2}
    documented = src.replace("    return w", '    """Docs."""\n    return w')
    assert {m.line for m in mutants_of(documented, "a.py") if m.operator == "default_flip"} == {3}


def test_remainder_tile_drops_the_last_partial_tile_only():
    src = ("def tiles(n, t):\n    a = list(range(0, n, t))\n    b = (n + t - 1) // t\n    c = -(-n // t)\n"
           "    return a, b, c\n")
    got = made(src, "remainder_tile")
    assert len(got) == 3
    for mutated in got.values():
        assert run(mutated, "tiles", 8, 4) == run(src, "tiles", 8, 4)  # no remainder: the same
        assert run(mutated, "tiles", 9, 4) != run(src, "tiles", 9, 4)  # a remainder of 1: one tile short


def test_narrow_dtype_allocates_in_float32_and_drops_a_returned_cast():
    src = ("import numpy as np\n\n\ndef f(x):\n    acc = np.zeros(x.shape)\n    out = np.empty_like(x)\n"
           "    typed = np.zeros(3, dtype=np.float64)\n    out[...] = x + acc\n    return out.astype(x.dtype)\n")
    got = {d: added(src, s) for d, s in made(src, "narrow_dtype").items()}
    assert got == {"np.zeros(...) allocated in float32": ["acc = np.zeros(x.shape, dtype=np.float32)"],
                   "np.empty_like(...) allocated in float32": ["out = np.empty_like(x, dtype=np.float32)"],
                   "the returned .astype(...) dropped": ["return out"]}


def test_kept_dim_keeps_a_reduced_axis_or_a_squeezed_one():
    src = ("import numpy as np\n\n\ndef f(x, a, b):\n    s = x.sum(axis=(0, 1))\n    m = np.max(x, -1)\n"
           "    k = x.mean(-1, keepdims=True)\n    t = x.sum()\n    q = x.squeeze(0)\n    return min(a, b)\n")
    got = {d: added(src, s) for d, s in made(src, "kept_dim").items()}
    assert got == {"sum(...) keeps the reduced axis": ["s = x.sum(axis=(0, 1), keepdims=True)"],
                   "max(...) keeps the reduced axis": ["m = np.max(x, -1, keepdims=True)"],
                   "a squeeze dropped (the length-1 axis kept)": ["q = x"]}
    # keepdims already given, a reduction over everything, the builtin min: nothing


def test_tie_break_reverses_ties_and_keeps_the_order():
    p, q = np.array([0.1, 0.4, 0.4, 0.1]), np.array([0.1, 0.5, 0.3])  # a tie, and none
    cases = {"order": ("    return np.argsort(-p, axis=-1, kind='stable')", p, q),
             "best": ("    return int(np.argmax(p))", p, q),
             "ranked": ("    return sorted(p, key=lambda t: round(t, 1), reverse=True)", [0.11, 0.12, 0.5], [0.1, 0.5])}
    for fn, (body, tie, no_tie) in cases.items():
        src = f"import numpy as np\n\n\ndef {fn}(p):\n{body}\n"
        [mutated] = made(src, "tie_break").values()
        assert str(run(mutated, fn, tie)) != str(run(src, fn, tie)), fn  # the tie goes the other way
        assert str(run(mutated, fn, no_tie)) == str(run(src, fn, no_tie)), fn  # the order itself is kept


def test_max_shift_drops_the_shift_of_a_softmax():
    src = ("import numpy as np\n\n\ndef softmax(s):\n    z = s - s.max(axis=-1, keepdims=True)\n"
           "    e = np.exp(z - 0.0)\n    return e / e.sum(-1, keepdims=True)\n")
    got = {d: added(src, s) for d, s in made(src, "max_shift").items()}
    assert got == {"the row maximum not subtracted": ["z = s"], "exp(z - 0.0) without its shift": ["e = np.exp(z)"]}


def test_config_constant_reads_a_common_constant_for_the_named_value():
    src = ("def block(cfg, x):\n    theta = cfg.rope_theta\n    cfg.head_dim = 64\n    h = cfg.n_kv_heads\n"
           "    return np.pi, theta, h\n")
    got = {d: added(src, s) for d, s in made(src, "config_constant").items()}
    assert got == {"cfg.rope_theta -> 10000.0": ["theta = 10000.0"], "cfg.n_kv_heads -> 8": ["h = 8"]}
    # an assignment's target is not a read


def test_ragged_full_weights_a_short_batch_as_a_full_one():
    src = ("import numpy as np\n\n\ndef mean_loss(losses, mask, batches, batch_size):\n"
           "    masked = (losses * mask).sum() / mask.sum()\n    n = 0\n    for b in batches:\n        n += len(b)\n"
           "    return masked, n\n")
    got = {d: added(src, s) for d, s in made(src, "ragged_full").items()}
    assert got == {"a masked mean divided by every position, padding included":
                   ["masked = (losses * mask).sum() / (np.size(mask))"],
                   "len(b) counted as a full batch (batch_size)": ["n += batch_size"]}


def test_special_end_starts_a_prompt_ending_in_eos_finished():
    src = ("def search(model, prompts, k, eos_token_id):\n"
           "    beams = [[{'tokens': list(p), 'done': False}] for p in prompts]\n"
           "    flags = [False for _ in range(k)]\n    return beams, flags\n")
    [(description, mutated)] = made(src, "special_end").items()
    assert added(src, mutated) == [
        "beams = [[{'tokens': list(p), 'done': (len(p) > 0 and p[-1] == eos_token_id)}] for p in prompts]"]
    assert run(mutated, "search", None, [[3, 7]], 1, 7)[0][0][0]["done"] is True
    assert run(src, "search", None, [[3, 7]], 1, 7)[0][0][0]["done"] is False
    # a statement over several lines: the mutant sits on its first, the line a tracer records
    multi = src.replace("'done': False}]", "\n        'done': False,\n    }]")
    assert [m.line for m in mutants_of(multi, "a.py") if m.operator == "special_end"] == [2]


def test_operators_kernel_selects_the_contract_operators_alone():
    assert FAMILIES["kernel"] == set(KERNEL) and FAMILIES["kernel"] | FAMILIES["classic"] == set(OPERATORS)
    src = ("import numpy as np\n\n\ndef f(x, t=4):\n    out = np.zeros(x.shape)\n    for i in range(0, len(x), t):\n"
           "        out[i:i + t] = np.exp(x[i:i + t] - x.max())\n    return out\n")
    kernel = pick([Source(src, "a.py")], None, FAMILIES["kernel"])
    assert kernel and {m.operator for m in kernel} <= set(KERNEL)
    assert {m.operator for m in pick([Source(src, "a.py")], None)} - set(KERNEL)  # all: the classic ones too


def test_kernel_operators_are_listed_and_described_in_the_docs():
    doc = (Path(__file__).resolve().parents[2] / "docs" / "audit.md").read_text(encoding="utf-8")
    for name in KERNEL:
        assert OPERATORS[name] == KERNEL[name]
        assert f"| `{name}` |" in doc, name
    assert "--operators kernel" in doc
