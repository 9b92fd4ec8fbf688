"""Hidden checks for ternary_training: the quantiser (per-group absmean
ternary projection), the straight-through gradient, an optional smoke run
through an adapter, and the answer's own reported figures (info only).

MLX answers run on MLX (the CPU device when the backend is not "mlx");
NumPy answers run on NumPy."""
from __future__ import annotations

import ast
import inspect
import json
import re
from pathlib import Path

import numpy as np

from engine.verify import wire
from engine.verify.binding import python_files

QUANT_NAMES = ("ternary_quantize", "quantize_ternary", "ternarize", "absmean_quantize", "weight_quant",
               "quantize_weights", "bitnet_quantize", "ternary_quant", "quantize_weight", "quantize")
STE_MLX_NAMES = ("ste_quantize", "quantize_ste", "ternary_quantize_ste", "ternary_ste", "fake_quantize")
STE_NP_NAMES = ("ternary_quantize_backward", "quantize_backward", "ste_backward", "ternary_ste_backward",
                "ternary_quantize_grad", "ste_grad")
LINEAR_BWD_NAMES = ("ternary_linear_backward", "bitlinear_backward", "bit_linear_backward")
GROUP_PARAMS = ("group_size", "group", "gs", "block_size", "groupsize")


def uses_mlx(folder: Path) -> bool:
    for path in python_files(folder):
        try:
            tree = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            if any(n.split(".")[0] == "mlx" for n in names):
                return True
    return False


def group_kw(fn, group_size: int) -> dict:
    """Pass the group size explicitly when the function takes one."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return {}
    name = next((p for p in params if p.lower() in GROUP_PARAMS), None)
    return {name: group_size} if name else {}


def expand_scale(scale: np.ndarray, shape: tuple[int, int], g: int) -> np.ndarray:
    """A returned scale of any common layout, broadcast to the weight's shape."""
    out_f, in_f = shape
    s = np.asarray(scale, dtype=np.float64)
    if s.size == 1:
        return np.full(shape, float(s.reshape(-1)[0]))
    if s.size == out_f * (in_f // g) and s.squeeze().shape in {(out_f, in_f // g), (out_f * (in_f // g),), (out_f,)}:
        return np.repeat(s.reshape(out_f, in_f // g), g, axis=1)
    if s.squeeze().shape == (out_f // g, in_f):  # grouped along the output axis
        return np.repeat(s.reshape(out_f // g, in_f), g, axis=0)
    if s.size == out_f:
        return np.repeat(s.reshape(out_f, 1), in_f, axis=1)
    raise ValueError(f"cannot place a scale of shape {s.shape} on weights {shape}")


def projected_weights(out, shape: tuple[int, int], g: int) -> np.ndarray:
    """Normalise a quantiser result: projected weights, or (codes, scale)."""
    if isinstance(out, dict):
        out = tuple(out[k] for k in out)
    if isinstance(out, (tuple, list)):
        arrays = [np.asarray(a, dtype=np.float64) for a in out[:2]]
        a, b = arrays if len(arrays) == 2 else (arrays[0], None)
        if b is not None and b.shape == shape and a.size < b.size:
            a, b = b, a
        if a.shape != shape:
            raise ValueError(f"quantiser returned shape {a.shape}, expected {shape}")
        if b is not None and np.isin(np.unique(a), [-1.0, 0.0, 1.0]).all():
            return a * expand_scale(b, shape, g)
        return a
    a = np.asarray(out, dtype=np.float64)
    if a.shape != shape:
        raise ValueError(f"quantiser returned shape {a.shape}, expected {shape}")
    return a


def test_weights(rng: np.random.Generator, shape: tuple[int, int], g: int) -> np.ndarray:
    """Gaussian weights with a very different magnitude per input-axis group,
    so a global or wrongly-oriented scale cannot pass."""
    out_f, in_f = shape
    mags = np.exp(rng.uniform(np.log(0.01), np.log(10.0), size=(out_f, in_f // g)))
    return (rng.standard_normal(shape) * np.repeat(mags, g, axis=1)).astype(np.float32)


def group_levels(proj: np.ndarray, g: int, rtol: float) -> tuple[np.ndarray, np.ndarray]:
    """Per group: its magnitude a (max |value|) and whether it holds only -a, 0, +a."""
    grouped = np.abs(proj.reshape(proj.shape[0], -1, g))
    a = grouped.max(axis=-1)
    tol = rtol * a[..., None] + 1e-30
    ok = ((grouped <= tol) | (np.abs(grouped - a[..., None]) <= tol)).all(axis=-1)
    return a, ok


def run(suite) -> None:
    ref = suite.reference()
    g = int(suite.threshold("group_size", 128))
    rtol = float(suite.threshold("scale_rel_tol", 1e-5))
    is_mlx = uses_mlx(suite.answer_dir)
    suite.info("answer_framework", "mlx" if is_mlx else "numpy",
               message="MLX answer (path A)" if is_mlx else "NumPy answer (path B)")
    if is_mlx:
        try:
            import mlx.core as mx
        except ImportError:
            for name in ("quantize_levels", "quantize_group_scale", "quantize_rounding", "ste_gradient"):
                suite.skip(name, "the answer uses MLX and MLX is not installed here")
            report_figures(suite)
            return
        if suite.backend != "mlx":
            mx.set_default_device(mx.cpu)
    adapter = suite.adapter()
    quant = getattr(adapter, "ternary_quantize", None) if adapter else None
    quant = quant or suite.bind(*QUANT_NAMES, kind="function")

    def to_answer(x):
        if is_mlx and wire.is_proxy(x):  # staged for timing: convert on the answer's side, as before, in the timed region
            return suite.answer_side("to_mlx", x)
        return mx.array(x) if is_mlx else x

    def call_quant(w: np.ndarray) -> np.ndarray:
        out = suite.call(quant, to_answer(w), **group_kw(quant, g))
        return projected_weights(out, w.shape, g)

    shapes = [tuple(s) for s in suite.threshold("quant_shapes", [[256, 384], [128, 256]])]
    cases: list = []
    failure: list = []

    def quant_cases():
        """(w, projected) per shape, computed once; fresh data even for a
        repeated shape, so an answer that caches its output is caught."""
        if failure:
            raise failure[0]
        if not cases:
            try:
                for i, shape in enumerate(shapes):
                    w = test_weights(suite.rng(f"quant{i}"), shape, g)
                    cases.append((w, call_quant(w)))
            except Exception as exc:
                cases.clear()
                failure.append(exc)
                raise
        return cases

    with suite.check("quantize_levels", threshold=f"only -a, 0, +a per group of {g} along the input axis") as c:
        bad = total = 0
        for w, proj in quant_cases():
            _, ok = group_levels(proj, g, rtol)
            bad, total = bad + int((~ok).sum()), total + ok.size
        c.value = f"{bad}/{total} groups with other values"
        c.expect(bad == 0, f"{bad} of {total} groups hold more than three levels (group axis or size wrong?)")

    with suite.check("quantize_group_scale", threshold=rtol) as c:
        worst = 0.0
        for w, proj in quant_cases():
            a, _ = group_levels(proj, g, rtol)
            s = ref.group_scales(w.astype(np.float64), g)
            worst = max(worst, float(np.max(np.abs(a - s) / s)))
        c.value = worst
        c.expect(worst <= rtol, f"a group's level is {worst:.3g} (relative) away from its mean |W| "
                 "(global or wrongly grouped scale?)")

    with suite.check("quantize_rounding", threshold="codes = clip(round(W / s), -1, 1)") as c:
        bad = total = 0
        for w, proj in quant_cases():
            codes, s = ref.ternary_codes(w.astype(np.float64), g)
            ratio = np.abs(w.reshape(w.shape[0], -1, g) / s[..., None]).reshape(w.shape)
            got = np.sign(proj) * (np.abs(proj) > 1e-30)
            wrong = (got != codes) & (np.abs(ratio - 0.5) > 1e-3)  # exact ties may round either way
            bad, total = bad + int(wrong.sum()), total + w.size
        c.value = bad
        c.expect(bad == 0, f"{bad} of {total} weights get the wrong ternary code")

    check_ste(suite, ref, quant, is_mlx, g)
    check_smoke(suite, ref, adapter, g)
    report_figures(suite)

    def make_inputs(trial):
        return test_weights(suite.rng(f"time{trial}"), (1024, 1024), g)

    def answer_timed(w):  # forces MLX's lazy result inside the timed region
        out = quant(to_answer(w), **group_kw(quant, g))
        if wire.is_proxy(out):  # kept in the answer's process, MLX-evaluated there before the reply
            return out
        return [np.asarray(x) for x in out] if isinstance(out, (tuple, list)) else np.asarray(out)

    suite.time("quantize_speed", answer_timed, lambda w: ref.ternary_quantize(w, g), make_inputs,
               budget_s=float(suite.threshold("timing_budget_s", 0.5)))


def check_ste(suite, ref, quant, is_mlx: bool, g: int) -> None:
    tol = float(suite.threshold("grad_tol", 1e-6))
    rng = suite.rng("ste")
    w = test_weights(rng, (128, 256), g)
    upstream = rng.standard_normal(w.shape).astype(np.float32)
    adapter = suite.adapter()
    if is_mlx:
        fn = (getattr(adapter, "ste_quantize", None) if adapter else None) or suite.find(*STE_MLX_NAMES, kind="function") or quant
        with suite.check("ste_gradient", threshold=tol) as c:
            # autodiff needs the answer's function, so mx.vjp runs in the answer's process
            grad = suite.answer_side("mlx_vjp", (fn, w, upstream, group_kw(fn, g)))
            c.details["evidence_from"] = "mx.vjp run in the answer's process"
            err = float(np.max(np.abs(np.array(grad) - upstream)))
            c.value = err
            c.expect(err <= tol, f"gradient through {fn.__name__} differs from the upstream gradient by {err:.3g}")
        return
    fn = (getattr(adapter, "ternary_quantize_backward", None) if adapter else None) or suite.find(*STE_NP_NAMES, kind="function")
    if fn is not None:
        with suite.check("ste_gradient", threshold=tol) as c:
            grad = np.asarray(suite.call(fn, upstream, w, **group_kw(fn, g)), dtype=np.float64)
            err = float(np.max(np.abs(grad - upstream)))
            c.value = err
            c.expect(err <= tol, f"latent-weight gradient differs from the upstream gradient by {err:.3g}")
        return
    lin = (getattr(adapter, "ternary_linear_backward", None) if adapter else None) or suite.find(*LINEAR_BWD_NAMES, kind="function")
    if lin is None:
        suite.record("ste_gradient", "unbound", threshold=tol,
                     message=f"looked for {' / '.join(STE_NP_NAMES + LINEAR_BWD_NAMES)}")
        return
    x = rng.standard_normal((4, 8, w.shape[1])).astype(np.float32)
    dy = rng.standard_normal((4, 8, w.shape[0])).astype(np.float32)
    with suite.check("ste_gradient", threshold=tol) as c:
        dx, dw = suite.call(lin, dy, x, w, **group_kw(lin, g))
        want = dy.reshape(-1, w.shape[0]).astype(np.float64).T @ x.reshape(-1, w.shape[1])
        err = float(np.max(np.abs(np.asarray(dw, dtype=np.float64) - want)) / np.max(np.abs(want)))
        c.value = err
        c.expect(err <= 1e-4, f"dW differs from dy^T x (straight-through) by {err:.3g} relative")
    with suite.check("linear_backward_dx", threshold=1e-4) as c:
        want = dy.reshape(-1, w.shape[0]) @ ref.ternary_quantize(w.astype(np.float64), g)
        err = float(np.max(np.abs(np.asarray(dx, dtype=np.float64).reshape(want.shape) - want)) / np.max(np.abs(want)))
        c.value = err
        c.expect(err <= 1e-4, f"dx differs from dy @ Q(W) by {err:.3g} relative")


def check_smoke(suite, ref, adapter, g: int) -> None:
    smoke = getattr(adapter, "smoke_run", None) if adapter else None
    smoke = smoke or suite.find("smoke_run", kind="function")
    if smoke is None:
        suite.info("smoke_run", message="optional smoke run not bound: it needs an adapter "
                   "(.benchtui/adapters/ternary_training/<model>.py, else challenges/ternary_training/adapters/<model>.py, "
                   "with smoke_run)")
        return
    steps = int(suite.threshold("smoke_steps", 30))
    data = Path(suite.data_dir) / "train_data.txt"
    text = data.read_text(encoding="utf-8")
    start = int(suite.rng("smoke-slice").integers(0, max(1, len(text) - 60_000)))
    drop = float(suite.threshold("smoke_min_loss_drop", 0.1))
    result = {}
    with suite.check("smoke_loss_falls", threshold=f"last-5 mean < (1 - {drop}) x first-5 mean",
                     timeout_s=float(suite.threshold("smoke_timeout_s", 60))) as c:
        result = suite.call(smoke, text[start:start + 60_000], steps, int(suite.rng("smoke").integers(2**31)))
        losses = [float(x) for x in result["losses"]]
        first, last = float(np.mean(losses[:5])), float(np.mean(losses[-5:]))
        c.value = f"{first:.3f} -> {last:.3f} over {len(losses)} steps"
        c.details["losses"] = losses
        c.expect(len(losses) == steps and all(np.isfinite(losses)), f"expected {steps} finite losses")
        c.expect(last < (1 - drop) * first, f"loss did not fall enough: {first:.3f} -> {last:.3f}")
    with suite.check("smoke_weights_ternary", threshold="-s, 0, +s per group; s = mean |latent|") as c:
        pairs = result.get("weights") if isinstance(result, dict) else None
        c.expect(bool(pairs), "the smoke run returned no weights")
        worst, bad = 0.0, 0
        for latent, proj in pairs:
            latent, proj = np.asarray(latent, np.float64), np.asarray(proj, np.float64)
            a, ok = group_levels(proj, g, 1e-5)
            bad += int((~ok).sum())
            s = np.maximum(ref.group_scales(latent, g), 1e-30)  # an all-zero latent group has s = 0
            worst = max(worst, float(np.max(np.abs(a - s) / s)))
        c.value = f"{bad} bad groups, scale error {worst:.2g}"
        c.expect(bad == 0 and worst <= 1e-4, f"{bad} groups not ternary; worst scale error {worst:.3g}")


FIGURE_KEYS = (("final_loss", re.compile(r"(final|train).*loss|^loss$")),
               ("validation_perplexity", re.compile(r"val.*(ppl|perplex)|perplex")),
               ("validation_loss", re.compile(r"val.*loss")))
LOG_PATTERN = re.compile(r"(val(?:idation)?[ _]?(?:ppl|perplexity)|perplexity|val(?:idation)?[ _]loss|loss)\s*[:=]\s*([0-9]+\.?[0-9]*)", re.I)


def _flatten(d, prefix=""):
    for k, v in d.items():
        key = f"{prefix}{k}".lower()
        if isinstance(v, dict):
            yield from _flatten(v, key + ".")
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            yield key, float(v)


def report_figures(suite) -> None:
    """What the answer says about itself, shown as reported, not verified."""
    found: dict[str, tuple[float, str]] = {}
    for path in sorted(suite.answer_dir.glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, UnicodeDecodeError):
            continue
        if isinstance(data, dict):
            for key, value in _flatten(data):
                leaf = key.rsplit(".", 1)[-1]
                for label, pattern in FIGURE_KEYS:
                    if label not in found and pattern.search(leaf):
                        found[label] = (value, f"{path.name}: {key}")
    for path in sorted(suite.answer_dir.glob("*.log")) + sorted(suite.answer_dir.glob("*log*.txt")):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")[-200_000:]
        except OSError:
            continue
        for name, value in LOG_PATTERN.findall(text):
            label = "validation_perplexity" if "p" in name.lower().replace("loss", "") else \
                "validation_loss" if "val" in name.lower() else "final_loss"
            found[label + "_log"] = (float(value), f"{path.name}: last '{name}'")
    if not found:
        suite.info("reported_figures", message="the answer reports no loss or perplexity figures")
    for label, (value, where) in found.items():
        suite.info(f"reported_{label}", value, message=f"reported, not verified ({where})")
