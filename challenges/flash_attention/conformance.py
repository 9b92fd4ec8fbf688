"""Hidden checks for `flash_attention`: tiled attention forward in NumPy.

Contract: flash_attention_fwd(Q, K, V, tile_size, causal) -> O, all (B, H, N, D).
Oracle: naive float64 attention (reference.naive_attention). Speed baseline:
the reference's own tiled implementation on the same inputs.
"""
from __future__ import annotations

import inspect
import math

import numpy as np
from benchtui.api import CheckFailed

NAMES = ("flash_attention_fwd", "flash_attention_forward", "flash_attn_fwd", "flash_attn_forward",
         "flash_attention", "flash_forward", "tiled_attention", "flash_attn")
TILE_PARAMS = ("tile_size", "tile", "block_size", "block", "Br", "Bc", "br", "bc", "tile_q", "tile_k",
               "block_q", "block_k", "blk")
CAUSAL_PARAMS = ("causal", "is_causal", "use_causal_mask", "causal_mask")


class Answer:
    """Calls the bound function with tile size and causal flag always explicit,
    by keyword when the answer names them recognisably, else positionally."""

    def __init__(self, fn):
        self.fn = fn
        try:
            params = inspect.signature(fn).parameters
        except (TypeError, ValueError):
            params = {}
        self.tile_names = [p for p in TILE_PARAMS if p in params]
        self.causal_name = next((p for p in CAUSAL_PARAMS if p in params), None)

    def args(self, tile: int, causal: bool) -> tuple[tuple, dict]:
        if self.tile_names and self.causal_name:
            return (), {**{n: tile for n in self.tile_names}, self.causal_name: causal}
        return (tile, causal), {}

    def __call__(self, Q, K, V, tile, causal):
        extra, kwargs = self.args(tile, causal)
        return self.fn(Q, K, V, *extra, **kwargs)


def bind(suite) -> Answer:
    adapter = suite.adapter()
    if adapter is not None:
        for name in NAMES:
            if callable(getattr(adapter, name, None)):
                return Answer(getattr(adapter, name))
    return Answer(suite.bind(*NAMES, kind="function"))


def output(result, shape) -> np.ndarray:
    """Normalise (O, extras...) tuples and lists to an (B, H, N, D) ndarray."""
    if isinstance(result, (tuple, list)) and len(result) and np.asarray(result[0]).shape == shape:
        result = result[0]
    arr = np.asarray(result)
    if arr.shape != shape:
        raise CheckFailed(f"output shape {arr.shape}, expected {shape}")
    return arr


def rel_err(got, want) -> float:
    got = np.asarray(got, dtype=np.float64)
    if not np.all(np.isfinite(got)):
        return math.inf
    return float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-300))


def inputs(rng, shape, dtype=np.float64, q_scale=1.0):
    q, k, v = (rng.normal(size=shape) for _ in range(3))
    return (q * q_scale).astype(dtype), k.astype(dtype), v.astype(dtype)


def accuracy_check(suite, ans, ref, name, cases, tol, requires=()) -> None:
    """cases: (shape, tile, causal, dtype, q_scale); value is the worst error."""
    causal = ("causal",) if any(case[2] for case in cases) else ()
    with suite.check(name, threshold=tol, requires=("matches_naive", "inputs_unchanged", *causal, *requires)) as c:
        worst, where, dtypes = -1.0, "", set()
        for i, (shape, tile, causal, dtype, q_scale) in enumerate(cases):
            Q, K, V = inputs(suite.rng(f"{name}{i}"), shape, dtype, q_scale)
            got = output(suite.call(ans, Q, K, V, tile, causal), shape)
            dtypes.add(str(got.dtype))
            err = rel_err(got, ref.naive_attention(Q, K, V, causal))
            if not err <= worst:
                worst = err
                where = f"{shape} tile {tile} causal={causal} {np.dtype(dtype).name}" + (f" Q x{q_scale:g}" if q_scale != 1 else "")
        c.value = worst
        c.message = f"worst at {where}; output dtype {', '.join(sorted(dtypes))}"
        if not worst <= tol:
            c.fail(f"relative error {worst:.3g} at {where}" if math.isfinite(worst) else f"non-finite output at {where}")


def run(suite) -> None:
    ans = bind(suite)
    ref = suite.reference()
    tol = float(suite.threshold("tol", 1e-4))
    f64, f32 = np.float64, np.float32
    scale = float(suite.threshold("score_scale", 100.0))
    huge = float(suite.threshold("huge_score_scale", 1000.0))

    accuracy_check(suite, ans, ref, "causal_256_tile64", [((1, 1, 256, 64), 64, True, f64, 1.0)], tol)
    accuracy_check(suite, ans, ref, "uneven_tiles", [((2, 3, 300, 32), 97, True, f64, 1.0),
                                                     ((1, 2, 300, 32), 97, False, f64, 1.0)], tol, ("any_n", "non_causal"))
    accuracy_check(suite, ans, ref, "non_causal", [((2, 2, 200, 32), 64, False, f64, 1.0)], tol, ("non_causal",))
    accuracy_check(suite, ans, ref, "n_equals_1", [((1, 2, 1, 16), 64, True, f64, 1.0),
                                                   ((1, 2, 1, 16), 64, False, f64, 1.0)], tol, ("any_n",))
    accuracy_check(suite, ans, ref, "n_smaller_than_tile", [((1, 2, 40, 16), 128, True, f64, 1.0),
                                                            ((1, 2, 40, 16), 128, False, f64, 1.0)], tol, ("any_n",))
    # the smallest inputs the contract allows: one position of head dim 1, tiles of
    # one row, N equal to the tile, and a last tile of a single row
    accuracy_check(suite, ans, ref, "smallest_inputs", [((1, 1, 1, 1), 1, True, f64, 1.0),
                                                        ((1, 1, 1, 1), 1, False, f64, 1.0),
                                                        ((1, 1, 5, 1), 1, True, f64, 1.0),
                                                        ((1, 2, 7, 3), 1, False, f64, 1.0),
                                                        ((1, 1, 64, 8), 64, True, f64, 1.0),
                                                        ((2, 1, 65, 8), 64, True, f64, 1.0)], tol, ("any_n",))
    # every remainder of N against the tile (N = 1 .. 2 * tile + 1, tile 4), both masks: the
    # last tile's bounds and the causal diagonal inside a partial tile are built on purpose
    accuracy_check(suite, ans, ref, "tile_remainders", [((1, 1, n, 3), 4, causal, f64, 1.0)
                                                        for n in range(1, 10) for causal in (True, False)],
                   tol, ("any_n", "non_causal"))
    # scores ~100x larger: exp overflows in float32 without the running max; at
    # ~1000x, scores of a few thousand overflow exp in float64 too, so a running
    # max that is not the row's maximum (or none) gives inf / NaN on every run
    accuracy_check(suite, ans, ref, "large_scores", [((1, 2, 256, 64), 64, True, f64, scale),
                                                     ((1, 2, 256, 64), 64, False, f64, scale),
                                                     ((1, 2, 128, 64), 32, True, f64, huge)], tol,
                   ("large_scores_float32",))
    # float32 scores of ~300 carry ~1e-5 rounding; exp overflows there without the running max
    accuracy_check(suite, ans, ref, "large_scores_float32", [((1, 2, 256, 64), 64, True, f32, scale)],
                   float(suite.threshold("float32_large_tol", 1e-3)), ("large_scores_float32",))
    accuracy_check(suite, ans, ref, "float32", [((2, 2, 256, 64), 64, True, f32, 1.0)], tol, ("large_scores_float32",))
    causal_default(suite, ans, ref, tol)
    memory(suite, ans)
    speed(suite, ans, ref)


def run_stages(suite, stages) -> None:
    """Some stages of run() alone (tests run the checks a case is about, exactly as in a whole run)."""
    for stage in stages:
        {"causal_default": lambda: causal_default(suite, bind(suite), suite.reference(),
                                                  float(suite.threshold("tol", 1e-4)))}[stage]()


def causal_default(suite, ans, ref, tol) -> None:
    """The published prompt delivers `flash_attention_fwd(Q, K, V, tile_size, causal=True)`:
    a caller that leaves ``causal`` out gets causal attention. Every other check passes it
    explicitly (this repository's prompt asks callers to), so only this call meets the
    default; a verdict under the published prompt, a figure under this one."""
    with suite.check("causal_default", threshold=tol, requires=("causal_default",)) as c:
        Q, K, V = inputs(suite.rng("causal_default"), (1, 2, 70, 16))
        tile = 32  # 70 = 2 tiles and a remainder: the causal diagonal crosses each
        by_name = {n: tile for n in ans.tile_names}
        try:
            got = suite.call(ans.fn, Q, K, V, **by_name) if by_name else suite.call(ans.fn, Q, K, V, tile)
        except TypeError as exc:
            raise CheckFailed(f"it cannot be called without causal ({exc}): the prompt's flash_attention_fwd(Q, K, V, "
                              "tile_size, causal=True) defaults to causal") from exc
        got = output(got, Q.shape)
        c.value = rel_err(got, ref.naive_attention(Q, K, V, True))
        if not c.value <= tol:
            what = "non-causal attention" if rel_err(got, ref.naive_attention(Q, K, V, False)) <= tol else \
                "not causal attention"
            c.fail(f"called without causal, it returns {what} (relative error {c.value:.3g} against causal "
                   "attention): the prompt's flash_attention_fwd(Q, K, V, tile_size, causal=True) defaults to causal")


def memory(suite, ans) -> None:
    n, d = int(suite.threshold("memory_n", 4096)), int(suite.threshold("memory_head_dim", 64))
    tile = int(suite.threshold("memory_tile", 128))
    limit = float(suite.threshold("memory_fraction", 0.2)) * n * n * 8
    with suite.check(f"memory_{n}_tile{tile}", threshold=int(limit), requires=("no_nxn",)) as c:
        Q, K, V = inputs(suite.rng("memory"), (1, 1, n, d))
        # called directly: inputs are throwaway, and copies would count as peak
        result, peak = suite.peak_memory(ans, Q, K, V, tile, True)
        output(result, Q.shape)
        c.value = peak
        c.message = f"peak {peak / 2**20:.1f} MiB = {peak / (n * n * 8):.1%} of one {n}x{n} float64 matrix"
        if not peak < limit:
            c.fail("materialises too much: " + c.message)


def speed(suite, ans, ref) -> None:
    shape = tuple(suite.threshold("speed_shape", [1, 4, 1024, 64]))
    tile = int(suite.threshold("speed_tile", 128))
    base = inputs(suite.rng("speed"), shape, np.float32)

    def make_inputs(trial):
        Q, K, V = base
        return Q + np.float32(0.001 * trial), K, np.ascontiguousarray(V[:, :, ::-1])

    suite.time("speed_" + "x".join(map(str, shape)) + "_float32",
               lambda qkv: ans(*qkv, tile, True), lambda qkv: ref.flash_attention_fwd(*qkv, tile, True), make_inputs,
               warmup=1, min_trials=3)
