"""Hidden checks for `backwards`: layer norm forward/backward in NumPy.

Contract: forward(x, gamma, beta, eps) -> (y, cache); backward(dy, cache) ->
(dx, dgamma, dbeta). The oracle is reference.py run in float64; for rows with
a huge mean it runs on rows shifted by their first element (layer norm is
shift-invariant), which keeps the oracle itself exact.
"""
from __future__ import annotations

import inspect
import math

import numpy as np
from benchtui.api import CheckFailed

FORWARD_NAMES = ("forward", "layer_norm_forward", "layernorm_forward", "layer_norm_fwd", "layernorm_fwd",
                 "ln_forward", "ln_fwd")
BACKWARD_NAMES = ("backward", "layer_norm_backward", "layernorm_backward", "layer_norm_bwd", "layernorm_bwd",
                  "ln_backward", "ln_bwd")
CLASS_NAMES = ("LayerNorm", "LayerNormFunction", "LayerNormManual", "LayerNormNumpy")
SHAPES = ((2, 3, 8), (4, 16, 64), (3, 5, 1), (4, 1, 32), (1, 7, 33))
# the smallest inputs the contract allows, smallest first (fixed, the same on every run)
SMALLEST_SHAPES = ((1, 1, 1), (1, 1, 2), (1, 2, 1), (2, 1, 2))


class Answer:
    """The bound forward/backward pair, called with every argument explicit."""

    def __init__(self, suite, fwd, bwd):
        self.suite, self.fwd, self.bwd = suite, fwd, bwd
        self.eps_name = _eps_parameter(fwd)

    def forward(self, x, gamma, beta, eps):
        if self.eps_name:
            out = self.suite.call(self.fwd, x, gamma, beta, **{self.eps_name: eps})
        else:
            out = self.suite.call(self.fwd, x, gamma, beta, eps)
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise CheckFailed(f"forward must return (y, cache), got {type(out).__name__}")
        return out[0], out[1]

    def backward(self, dy, cache):
        out = self.suite.call(self.bwd, dy, cache)
        if isinstance(out, dict):
            out = tuple(_pick(out, keys) for keys in (("dx", "grad_x"), ("dgamma", "grad_gamma", "dg"),
                                                       ("dbeta", "grad_beta", "db")))
        if not isinstance(out, (tuple, list)) or len(out) != 3:
            raise CheckFailed(f"backward must return (dx, dgamma, dbeta), got {type(out).__name__}")
        return tuple(out)

    def both(self, x, gamma, beta, dy, eps):
        y, cache = self.forward(x, gamma, beta, eps)
        return (y, *self.backward(dy, cache))


def _pick(d: dict, keys):
    for k in keys:
        if k in d:
            return d[k]
    raise CheckFailed(f"backward's dict lacks any of {keys}")


def _eps_parameter(fn) -> str | None:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return None
    return next((n for n in ("eps", "epsilon") if n in params), None)


def bind(suite) -> Answer:
    adapter = suite.adapter()
    if adapter is not None and hasattr(adapter, "forward") and hasattr(adapter, "backward"):
        return Answer(suite, adapter.forward, adapter.backward)
    fwd = suite.find(*FORWARD_NAMES, kind="function")
    bwd = suite.find(*BACKWARD_NAMES, kind="function")
    if fwd is not None and bwd is not None:
        return Answer(suite, fwd, bwd)
    cls = suite.find(*CLASS_NAMES, kind="class", methods=("forward", "backward"))
    if cls is None:
        found = suite.binder.classes_with(("forward", "backward"))
        cls = suite.binder.load(found[0]) if found else None
    if cls is not None:
        try:
            inst = cls()
        except TypeError as exc:
            raise suite.unbound(list(FORWARD_NAMES[:3]) + list(BACKWARD_NAMES[:3]),
                                f"class {cls.__name__} needs constructor arguments ({exc}); write an adapter") from exc
        return Answer(suite, inst.forward, inst.backward)
    raise suite.unbound(list(FORWARD_NAMES) + list(BACKWARD_NAMES) + ["class with forward, backward"])


def rel_err(got, want) -> float:
    """Norm-wise relative error (absolute when the reference is all zeros)."""
    want = np.asarray(want, dtype=np.float64)
    got = np.asarray(got)
    if got.shape != want.shape:
        if got.size != want.size:
            raise CheckFailed(f"shape {got.shape}, expected {want.shape}")
        got = got.reshape(want.shape)
    got = got.astype(np.float64)
    if not np.all(np.isfinite(got)):
        return math.inf
    denom = float(np.linalg.norm(want))
    diff = float(np.linalg.norm(got - want))
    return diff / denom if denom > 0 else diff


OUTPUTS = ("y", "dx", "dgamma", "dbeta")


def make_case(rng, shape, dtype=np.float64):
    d = shape[-1]
    x = rng.normal(size=shape) * rng.uniform(0.5, 3.0) + rng.normal()
    gamma = rng.normal(size=d) + 1.0
    beta = rng.normal(size=d)
    dy = rng.normal(size=shape)
    return tuple(a.astype(dtype) for a in (x, gamma, beta, dy))


def oracle(ref, x, gamma, beta, dy, eps, shift=False):
    x, gamma, beta, dy = (np.asarray(a, dtype=np.float64) for a in (x, gamma, beta, dy))
    if shift:  # exact for rows whose entries are within a factor 2 of each other
        x = x - x[..., :1]
    y, cache = ref.forward(x, gamma, beta, eps)
    return (y, *ref.backward(dy, cache))


def compare(got, want) -> tuple[float, str]:
    errs = {name: rel_err(g, w) for name, g, w in zip(OUTPUTS, got, want)}
    worst = max(errs, key=errs.get)
    return errs[worst], ", ".join(f"{k} {v:.2e}" for k, v in errs.items()) + f" (worst {worst})"


def array_bytes(obj) -> int:
    """Bytes of every distinct ndarray reachable from a cache object."""
    seen: set[int] = set()
    total = 0
    stack = [obj]
    depth_guard = 0
    while stack and depth_guard < 10_000:
        depth_guard += 1
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, np.ndarray):
            total += item.nbytes
        elif isinstance(item, (tuple, list, set)):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif hasattr(item, "__dict__") and not isinstance(item, type):
            stack.extend(vars(item).values())
    return total


def run(suite) -> None:
    ans = bind(suite)
    ref = suite.reference()
    eps = float(suite.threshold("eps", 1e-5))
    tol64 = float(suite.threshold("float64_tol", 1e-7))

    outputs_vs_oracle(suite, ans, ref, eps, tol64)
    smallest_inputs(suite, ans, ref, eps, tol64)
    output_shapes(suite, ans, eps)
    eps_far_from_default(suite, ans, ref, tol64)
    huge_mean_tiny_variance(suite, ans, ref, eps)
    constant_rows(suite, ans, ref, eps)
    float32_inputs(suite, ans, ref, eps)
    cache_bytes(suite, ans, eps)
    speed(suite, ans, ref, eps)


def outputs_vs_oracle(suite, ans, ref, eps: float, tol64: float) -> None:
    """The forward and each gradient against the float64 oracle on several shapes (D=1 and T=1 included)."""
    cases = [make_case(suite.rng(f"shape{i}"), shape) for i, shape in enumerate(SHAPES)]
    for index, name in enumerate(OUTPUTS):
        check_name = "forward" if name == "y" else f"backward_{name}"
        needs = ("forward",) if name == "y" else ("gradients",)
        with suite.check(check_name, threshold=tol64, requires=needs + ("edge_shapes", "inputs_unchanged")) as c:
            worst, where = 0.0, ""
            for shape, (x, gamma, beta, dy) in zip(SHAPES, cases):
                got = ans.forward(x, gamma, beta, eps)[0] if index == 0 else ans.both(x, gamma, beta, dy, eps)[index]
                want = oracle(ref, x, gamma, beta, dy, eps)[index]
                err = rel_err(got, want)
                if not err <= worst:
                    worst, where = err, "x".join(map(str, shape))
            c.value = worst
            c.details["worst_shape"] = where
            if not worst <= tol64:
                c.fail(f"{name} relative error {worst:.3g} at shape {where}")


def smallest_inputs(suite, ans, ref, eps: float, tol64: float) -> None:
    """The smallest inputs the contract allows: a single row of one or two
    features, one row per batch item, one batch item of one-feature rows."""
    with suite.check("smallest_inputs", threshold=tol64, requires=("forward", "gradients", "edge_shapes")) as c:
        c.value = 0.0
        for i, shape in enumerate(SMALLEST_SHAPES):
            x, gamma, beta, dy = make_case(np.random.default_rng(20261127 + i), shape)
            err, errs = compare(ans.both(x, gamma, beta, dy, eps), oracle(ref, x, gamma, beta, dy, eps))
            c.value = max(c.value, err)
            if not err <= tol64:
                c.fail(f"on the smallest shape {'x'.join(map(str, shape))}: {errs}", value=err)
        c.message = "shapes " + ", ".join("x".join(map(str, s)) for s in SMALLEST_SHAPES)


def output_shapes(suite, ans, eps: float) -> None:
    """The shapes and dtype the prompt fixes, compared exactly (the error checks reshape an
    output of the right size): y and dx shaped as x, y of x's dtype, dgamma and dbeta (D,).
    Shapes where a kept or dropped axis shows: D = 1, T = 1, B = 1."""
    with suite.check("output_shapes", requires=("forward", "gradients")) as c:
        for i, shape in enumerate(((3, 5, 1), (4, 1, 6), (1, 2, 5))):
            x, gamma, beta, dy = make_case(np.random.default_rng(20261201 + i), shape)
            got = [np.asarray(g) for g in ans.both(x, gamma, beta, dy, eps)]
            want = {"y": shape, "dx": shape, "dgamma": (shape[-1],), "dbeta": (shape[-1],)}
            wrong = [f"{n} {g.shape}, expected {want[n]}" for n, g in zip(OUTPUTS, got) if g.shape != want[n]]
            if got[0].dtype != x.dtype:
                wrong.append(f"y of dtype {got[0].dtype} for x of dtype {x.dtype}")
            if wrong:
                c.fail(f"at x of shape {shape}: {'; '.join(wrong)}")
        c.message = "y and dx shaped as x (and y of its dtype), dgamma and dbeta (D,), at D = 1, T = 1, B = 1"


def eps_far_from_default(suite, ans, ref, tol64: float) -> None:
    """eps far from its usual 1e-5 on rows of variance ~1, fixed inputs: an answer
    that ignores the eps it is given (a constant) is off by ~10% on every run."""
    far = float(suite.threshold("eps_far", 0.5))
    with suite.check("eps_far_from_default", threshold=tol64, requires=("forward", "gradients")) as c:
        x, gamma, beta, dy = make_case(np.random.default_rng(20261126), (2, 3, 16))
        x = (x - x.mean(axis=-1, keepdims=True)) / x.std(axis=-1, keepdims=True)
        c.value, c.message = compare(ans.both(x, gamma, beta, dy, far), oracle(ref, x, gamma, beta, dy, far))
        if not c.value <= c.threshold:
            c.fail(f"with eps={far:g} (rows of variance 1): " + c.message)


def huge_mean_tiny_variance(suite, ans, ref, eps: float) -> None:
    """Rows with a mean of ~1e5 and a spread of ~1e-2, against the oracle on shifted rows."""
    with suite.check("huge_mean_tiny_variance", threshold=suite.threshold("stable_tol", 1e-6),
                     requires=("huge_mean_rows", "numerically_stable")) as c:
        rng = suite.rng("huge_mean")
        shape = (2, 4, 64)
        x = suite.threshold("huge_mean", 1e5) * (1 + rng.uniform(0, 0.5, size=(2, 4, 1))) \
            + suite.threshold("tiny_std", 1e-2) * rng.normal(size=shape)
        _, gamma, beta, dy = make_case(rng, shape)
        c.value, c.message = compare(ans.both(x, gamma, beta, dy, eps), oracle(ref, x, gamma, beta, dy, eps, shift=True))
        if not c.value <= c.threshold:
            c.fail("inaccurate on rows with a huge mean and tiny variance: " + c.message)


def constant_rows(suite, ans, ref, eps: float) -> None:
    """Zero-variance rows: finite outputs that match the oracle."""
    with suite.check("constant_rows", threshold=suite.threshold("stable_tol", 1e-6),
                     requires=("constant_rows", "numerically_stable")) as c:
        rng = suite.rng("constant")
        x, gamma, beta, dy = make_case(rng, (3, 4, 16))
        for row, value in zip([(0, 0), (0, 3), (1, 1), (2, 2), (2, 3)], [0.0, 2.5, -999.9, 1e4, rng.normal()]):
            x[row] = value
        got = ans.both(x, gamma, beta, dy, eps)
        bad = [n for n, g in zip(OUTPUTS, got) if not np.all(np.isfinite(np.asarray(g, dtype=np.float64)))]
        if bad:
            c.value = math.inf
            c.fail(f"non-finite values (NaN/inf) in {', '.join(bad)} for zero-variance rows")
        c.value, c.message = compare(got, oracle(ref, x, gamma, beta, dy, eps))
        if not c.value <= c.threshold:
            c.fail("wrong on zero-variance rows: " + c.message)


def float32_inputs(suite, ans, ref, eps: float) -> None:
    """float32 inputs give float32 outputs, within float32's tolerance."""
    with suite.check("float32", threshold=suite.threshold("float32_tol", 1e-4), requires=("float32",)) as c:
        x, gamma, beta, dy = make_case(suite.rng("float32"), (4, 8, 128), np.float32)
        got = ans.both(x, gamma, beta, dy, eps)
        dtypes = [str(np.asarray(g).dtype) for g in got]
        c.details["dtypes"] = dict(zip(OUTPUTS, dtypes))
        c.value, c.message = compare(got, oracle(ref, x, gamma, beta, dy, eps))
        wrong = [f"{n}={d}" for n, d in zip(OUTPUTS, dtypes) if d != "float32"]
        if wrong:
            c.fail(f"float32 inputs must give float32 outputs, got {', '.join(wrong)}")
        if not c.value <= c.threshold:
            c.fail("float32 results off: " + c.message)


def cache_bytes(suite, ans, eps: float) -> None:
    """A figure: the forward's cache size against the least it needs."""
    with suite.check("cache_bytes") as c:
        x, gamma, beta, _ = make_case(suite.rng("cache"), (4, 16, 64))
        _, cache = ans.forward(x, gamma, beta, eps)
        held = array_bytes(cache)
        minimum = x.nbytes + x.nbytes // x.shape[-1] + gamma.nbytes  # x-hat, 1/std per row, gamma
        c.verdict, c.value = "info", round(held / minimum, 3)
        c.threshold = 1.0
        c.message = f"cache holds {held} bytes, minimum {minimum} (x-hat, 1/std, gamma): ratio {held / minimum:.2f}"


def speed(suite, ans, ref, eps) -> None:
    shape = tuple(suite.threshold("speed_shape", [8, 512, 1024]))
    rng = suite.rng("speed")
    base = make_case(rng, shape, np.float32)

    def make_inputs(trial):
        # cheap fresh inputs: permute rows and add a per-trial offset
        x, gamma, beta, dy = base
        return x + np.float32(trial * 0.01), gamma, beta, dy[::-1].copy()

    def run_answer(inp):
        return _plain(ans, *inp, eps)

    def run_reference(inp):
        x, gamma, beta, dy = inp
        return ref.backward(dy, ref.forward(x, gamma, beta, eps)[1])

    suite.time("speed_" + "x".join(map(str, shape)) + "_float32", run_answer, run_reference, make_inputs)


def _plain(ans, x, gamma, beta, dy, eps):
    """fwd+bwd without the copy-and-hash guard, so timing measures the answer."""
    out = ans.fwd(x, gamma, beta, **{ans.eps_name: eps}) if ans.eps_name else ans.fwd(x, gamma, beta, eps)
    return ans.bwd(dy, out[1])
