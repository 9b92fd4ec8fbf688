"""The audit's operators for numerical code: each one's mutants on a small
source (what it writes, and only there), and every mutant compiles."""
from __future__ import annotations

import pytest
from benchtui.audit.mutate import OPERATORS, mutants_of


def changed(src: str, operator: str) -> dict[str, str]:
    """description -> the one new line, for ``operator``'s mutants of ``src``."""
    out = {}
    for m in mutants_of(src, "a.py"):
        if m.operator != operator:
            continue
        compile(m.source, "a.py", "exec")  # every mutant is valid Python
        plus = [ln[1:] for ln in m.diff.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
        assert len(plus) == 1, m.diff
        out[m.description] = plus[0].strip()
    return out


def test_parameter_constant_pins_a_use_to_its_default_or_a_value_the_file_passes():
    src = ("def norm(x, eps=1e-5, k=None):\n    v = x.var() + eps\n    if k is None:\n        k = 2\n"
           "    return k[0] + v\n\n\ndef demo(x):\n    norm(x, 1e-3)\n    norm(1, 2)\n")
    got = changed(src, "parameter_constant")
    assert got == {"eps -> 1e-5": "v = x.var() + 1e-5", "eps -> 1e-3": "v = x.var() + 1e-3",
                   "k -> None": "if None is None:"}
    # not the x of x.var() (no default), not 2 from the toy call norm(1, 2), not None[0]


def test_key_replaces_a_lambda_key_by_its_parts_and_an_array_by_its_neighbours():
    src = ("import numpy as np\n\n\ndef top(beams, logits, t):\n    scores = logits / t\n    probs = np.exp(scores)\n"
           "    best = sorted(beams, key=lambda b: b[1] / len(b[0]))\n    pick = max(beams, key=lambda b: b[0])\n"
           "    return best, np.argmax(probs), pick\n")
    got = changed(src, "key")
    assert got["key b[1] / len(b[0]) -> b[1]"] == "best = sorted(beams, key=lambda b: b[1])"
    assert got["key b[1] / len(b[0]) -> len(b[0])"] == "best = sorted(beams, key=lambda b: len(b[0]))"
    assert got["key b[0] -> b[1]"] == "pick = max(beams, key=lambda b: b[1])"
    assert got["argmax over scores instead of probs"] == "return best, np.argmax(scores), pick"
    assert "argmax over logits instead of probs" not in got  # two steps away is not a neighbour


def test_axis_changes_keyword_and_positional_axes():
    src = "import numpy as np\n\n\ndef f(x):\n    a = np.sum(x, axis=-1)\n    b = x.max(1)\n    c = np.mean(x, 0)\n    return a, b, c\n"
    got = changed(src, "axis")
    assert got == {"axis -1 -> 0": "a = np.sum(x, axis=0)", "axis -1 -> -2": "a = np.sum(x, axis=-2)",
                   "axis 1 -> -1": "b = x.max(-1)", "axis 1 -> 0": "b = x.max(0)",
                   "axis 0 -> -1": "c = np.mean(x, -1)", "axis 0 -> -2": "c = np.mean(x, -2)"}


def test_max_arg_keeps_one_argument_of_a_running_maximum():
    src = "import numpy as np\n\n\ndef f(m, s):\n    m_new = np.maximum(m, s.max(-1))\n    return max(m_new, 0), min(1, 2, 3)\n"
    got = changed(src, "max_arg")
    assert got == {"maximum(...) -> argument 1": "m_new = m", "maximum(...) -> argument 2": "m_new = s.max(-1)",
                   "max(...) -> argument 1": "return m_new, min(1, 2, 3)",
                   "max(...) -> argument 2": "return (0), min(1, 2, 3)"}  # min of three is left alone


def test_mask_drops_a_mask_product_a_where_condition_and_one_side_of_two_masks():
    src = ("import numpy as np\n\n\ndef f(s, p, causal_mask, valid):\n    a = p * causal_mask\n"
           "    b = np.where(s > 0, s, -np.inf)\n    c = (s < 1) & valid\n    d = p * (np.abs(s) <= 1)\n"
           "    return a, b, c, d, p * s\n")
    got = changed(src, "mask")
    assert got == {"drop the mask causal_mask": "a = p", "where(...) -> argument 2 always": "b = (s)",
                   "where(...) -> argument 3 always": "b = (-np.inf)", "keep only mask 1 of &": "c = (s < 1)",
                   "keep only mask 2 of &": "c = valid", "drop the mask np.abs(s) <= 1": "d = p"}
    # p * s multiplies two values, not a mask: no mutant


def test_dtype_lowers_precision_in_attributes_and_strings():
    src = ("import numpy as np\n\n\ndef f(x):\n    acc = np.zeros(3, dtype=np.float64)\n    y = x.astype('float32')\n"
           "    return acc + y, np.int64(1), other.float64\n")
    got = changed(src, "dtype")
    assert got == {"float64 -> float32": "acc = np.zeros(3, dtype=np.float32)",
                   "float32 -> float16": "y = x.astype('float16')",
                   "int64 -> int32": "return acc + y, np.int32(1), other.float64"}  # other.float64 is no dtype


def test_swap_arguments_swaps_same_kind_arguments_only():
    src = "def f(q, k, v, a):\n    return attn(q, k, v, 0.5, scale=a, bias=k, tile=4, n=8)\n"
    got = changed(src, "swap_arguments")
    assert got == {"swap arguments #1 and #3": "return attn(v, k, q, 0.5, scale=a, bias=k, tile=4, n=8)",
                   "swap arguments #2 and #3": "return attn(q, v, k, 0.5, scale=a, bias=k, tile=4, n=8)",
                   "swap arguments scale= and bias=": "return attn(q, k, v, 0.5, scale=k, bias=a, tile=4, n=8)"}
    # at most three per call; q with 0.5 (a name and a number) never; the first two are `arguments`'


def test_range_bound_moves_starts_and_stops_by_one():
    src = "import numpy as np\n\n\ndef f(a, b):\n    for i in range(a, b):\n        pass\n    return np.arange(a, b)\n"
    assert set(changed(src, "range_bound")) == {"range start + 1", "range start - 1", "range stop + 1",
                                                 "range stop - 1"}
    lines = {m.source.splitlines()[m.line - 1] for m in mutants_of(src, "a.py") if m.operator == "range_bound"}
    assert lines == {"    for i in range((a + 1), b):", "    for i in range((a - 1), b):", "    for i in range(a, (b + 1)):",
                     "    for i in range(a, (b - 1)):", "    return np.arange((a + 1), b)", "    return np.arange((a - 1), b)",
                     "    return np.arange(a, (b + 1))", "    return np.arange(a, (b - 1))"}


def test_gradient_condition_writes_the_clipped_straight_through_estimator():
    src = ("import mlx.core as mx\n\n\ndef fwd(w, q):\n    a = q + (w - mx.stop_gradient(w))\n"
           "    return w + mx.stop_gradient(q - w)\n\n\ndef quant_vjp(primals, cotangent, output):\n"
           "    return (cotangent,)\n\n\ndef ln_backward(dy, x):\n    dx = dy * 2\n    return dx\n")
    got = changed(src, "gradient_condition")
    assert got["gradient of w clipped to |w| <= 1"] in (
        "a = q + ((w - mx.stop_gradient(w)) * (abs(w) <= 1))",
        "return (w + mx.stop_gradient(q - w) - (w - mx.stop_gradient(w)) * (abs(w) > 1))")
    lines = {m.source for m in mutants_of(src, "a.py") if m.operator == "gradient_condition"}
    assert any("a = q + ((w - mx.stop_gradient(w)) * (abs(w) <= 1))" in s for s in lines)
    assert any("return (w + mx.stop_gradient(q - w) - (w - mx.stop_gradient(w)) * (abs(w) > 1))" in s for s in lines)
    assert got["returned gradient cotangent times (abs(primals[0]) <= 1)"] == \
        "return ((cotangent) * (abs(primals[0]) <= 1),)"
    assert got["dx times (abs(x) <= 1)"] == "dx = (dy * 2) * (abs(x) <= 1)"
    assert not any("fwd" in d for d in got)


def test_the_clipped_estimator_keeps_the_forward_value_and_clips_the_gradient():
    """The ``w + stop_gradient(q - w)`` rewrite changes no value, only the
    gradient: forward-mode dual numbers (value, d/dw) evaluate the mutant's line."""
    import libcst as cst

    class Dual:
        def __init__(self, v, d=0.0):
            self.v, self.d = v, d

        def __add__(self, o):
            o = o if isinstance(o, Dual) else Dual(o)
            return Dual(self.v + o.v, self.d + o.d)

        def __sub__(self, o):
            o = o if isinstance(o, Dual) else Dual(o)
            return Dual(self.v - o.v, self.d - o.d)

        def __rsub__(self, o):
            return Dual(o) - self

        def __mul__(self, o):  # times a condition (a plain bool)
            return Dual(self.v * o, self.d * o)

        def __abs__(self):
            return abs(self.v)

    class mx:  # noqa: N801 - stands for the module the answer imports
        @staticmethod
        def stop_gradient(x):
            return Dual(x.v)

    src = "import mlx.core as mx\n\n\ndef fwd(w, q):\n    return w + mx.stop_gradient(q - w)\n"
    [m] = [m for m in mutants_of(src, "a.py") if m.operator == "gradient_condition"]
    expr = cst.parse_module(m.source).body[1].body.body[0].body[0].value
    line = cst.Module([]).code_for_node(expr)
    for w, q in ((-2.0, -1.0), (0.5, 0.0), (3.0, 1.0)):
        out = eval(line, {"mx": mx, "abs": abs}, {"w": Dual(w, 1.0), "q": q})
        assert out.v == q and out.d == (1.0 if abs(w) <= 1 else 0.0), (w, out.v, out.d)


@pytest.mark.parametrize("name", ["parameter_constant", "key", "axis", "max_arg", "mask", "dtype", "swap_arguments",
                                  "range_bound", "gradient_condition"])
def test_every_operator_is_listed_once(name):
    assert name in OPERATORS and OPERATORS[name]


def test_every_mutant_names_a_listed_operator():
    src = ("import numpy as np\n\n\ndef f(x, w, t=2):\n    m = np.maximum(x, w) * (x > 0)\n"
           "    return sorted(m, key=lambda v: v / t)[:t], np.sum(x.astype(np.float64), axis=1)\n")
    ops = {m.operator for m in mutants_of(src, "t.py")}
    assert ops <= set(OPERATORS) and {"parameter_constant", "max_arg", "mask", "key", "dtype", "axis"} <= ops


def test_the_readme_names_every_operator_beyond_the_classics():
    from pathlib import Path

    from benchtui.audit.mutate import OPERATORS

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Suite strength"):readme.index("## The challenges")]
    classics = {"comparison", "boolean", "arithmetic", "constant", "arguments", "statement", "return"}
    missing = [name for name in OPERATORS if name not in classics and f"`{name}`" not in section]
    assert not missing, f"README's Suite strength section does not name: {missing}"
