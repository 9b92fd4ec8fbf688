"""Hidden checks for paged_attention (decode attention over a paged KV cache, in CUDA).

Without a GPU: every .cu file of the answer is compiled on its own with nvcc
(engine/verify/cuda/suite.py), as for fuse. With a GPU (backend "cuda"): the
reviewer's shim ``adapters/<model>.cu`` is built with the answer by nvcc in
the answer's sandbox and called there (engine/verify/cuda/device.py); host
arrays come back and are checked here against the float64 reference on
shapes chosen for the defects that separate decode kernels: a context of one
token, contexts ending exactly on a block boundary, one sequence, physical
blocks in reverse and shared between sequences, multi-query and multi-head
groups, scores of magnitude 10^3. Unused cache slots hold NaN, so a kernel
that reads past a sequence's last token returns NaN. Timing runs on bfloat16
caches the answer's process makes from this side's seeds, several launches
per timed window (widened where the empty cycle's jitter needs it), and is reported as bandwidth and roofline figures against
the device's peak as this process read it.
"""
from __future__ import annotations

import numpy as np
from benchtui.api import (
    CheckFailed,
    CudaFault,
    InputMutated,
    V,
    bf16_bits,
    bf16_to_float32,
    build_in_answer_process,
    compile_cuda_answer,
    derive_seed,
    device_info,
    error_text,
    gpu_preamble,
    roofline_figures,
    seeded_values,
    timed_cycles,
    timing_details,
)

SYMBOL = "benchtui_paged_attention"
SIGNATURE = (f"extern \"C\" int {SYMBOL}(const __nv_bfloat16* q, const __nv_bfloat16* k_cache, "
             "const __nv_bfloat16* v_cache, const int* block_tables, const int* context_lens, float* out, "
             "int num_seqs, int num_heads, int num_kv_heads, int head_dim, int block_size, "
             "int max_blocks_per_seq, int num_blocks, float scale)")
# The entry point's arguments, as cuda_device.KernelHost passes them.
PARAMS = ["in", "in", "in", "in", "in", "out", "int", "int", "int", "int", "int", "int", "int", "float"]
GPU_LOCK_LATE = True  # the run's GPU lock is taken after nvcc's compile checks (CPU only)
GUARD = 64  # sentinel slots after the output, to catch writes past the end
NAN_BITS = 0x7FC00000  # float32 NaN: the output's unwritten slots
NAN_BF16 = 0x7FC0  # bfloat16 NaN: every cache slot no sequence attends to
EVENTS_AGREE = 0.8  # the answer's events' median below this fraction of the checker's is said
FIGURES = ("bandwidth", "roofline")

# (num_heads, num_kv_heads, head_dim, block_size) of the random cases: multi-head,
# grouped, multi-query; every head_dim and block_size the prompt allows
SHAPES = [(8, 8, 64, 16), (32, 8, 128, 16), (16, 1, 128, 32), (8, 2, 256, 8)]
FIXED = ("context_len_1", "block_boundary", "one_sequence", "blocks_out_of_order", "shared_blocks", "large_scores")
REQUIRES = {"build_library": ("compiles",), "context_len_1": ("context_lengths", "accuracy"),
            "block_boundary": ("context_lengths", "accuracy"), "one_sequence": ("block_table", "accuracy"),
            "blocks_out_of_order": ("block_table", "accuracy"), "shared_blocks": ("block_table", "accuracy"),
            "large_scores": ("stable", "accuracy"),
            "timed_outputs": ("block_table", "context_lengths", "accuracy")}


def run(suite) -> None:
    compile_cuda_answer(suite, requires=("compiles",))
    gpu_checks(suite)


def shape_name(shape) -> str:
    h, kvh, d, bs = shape
    return f"attention[H={h},KVH={kvh},D={d},bs={bs}]"


def requires_of(name: str) -> tuple:
    if name.startswith("nvcc_compile"):
        return ("compiles",)
    if name.startswith("attention["):
        return ("block_table", "context_lengths", "gqa", "shapes", "accuracy")
    return REQUIRES.get(name, ())


def gpu_check_names() -> list[str]:
    return ["build_library", *[shape_name(s) for s in SHAPES], *FIXED, "timed_outputs", *FIGURES]


def skip_gpu(suite, names: list[str], reason: str) -> None:
    for name in names:
        suite.skip(name, reason, requires=requires_of(name))


def gpu_checks(suite) -> None:
    names = gpu_check_names()
    device = gpu_preamble(suite, names, SIGNATURE, requires_of)
    if device is None:
        return
    host = build_in_answer_process(suite, SYMBOL, PARAMS, requires=("compiles",))
    if host is None:
        skip_gpu(suite, names[1:], "not run: the answer's library did not build")
        return
    checks = PagedChecks(suite, host, device)
    checks.run_correctness()
    checks.timing()


# -- inputs ---------------------------------------------------------------------------------

class Case:
    """One call's inputs: bfloat16 bits for q and the caches (host form), int32
    tables and lengths; every cache slot no sequence attends to is NaN, and
    table entries past a sequence's last block name an all-NaN block."""

    def __init__(self, q, k_cache, v_cache, tables, lens, scale):
        self.q, self.k_cache, self.v_cache, self.tables, self.lens = q, k_cache, v_cache, tables, lens
        self.scale = float(scale)

    @property
    def dims(self) -> tuple[int, int, int, int, int, int, int]:
        """(num_seqs, num_heads, num_kv_heads, head_dim, block_size, max_blocks_per_seq, num_blocks)."""
        (s, h, d), (nb, bs, kvh, _), mb = self.q.shape, self.k_cache.shape, self.tables.shape[1]
        return s, h, kvh, d, bs, mb, nb

    def floats(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return tuple(bf16_to_float32(a) for a in (self.q, self.k_cache, self.v_cache))


def make_case(rng: np.random.Generator, lens, shape, *, order: str = "shuffled", q_amp: float = 4.0,
              k_amp: float = 1.0, share: int = 0) -> Case:
    """``lens`` tokens per sequence; blocks handed out from a pool in ``order``
    ("shuffled", "reversed" (each sequence's blocks in descending physical
    order) or "in_order"); ``share`` leading blocks of sequence 0 also head
    sequence 1's table (a shared prefix)."""
    num_heads, num_kv_heads, head_dim, block_size = shape
    lens = np.asarray(lens, dtype=np.int32)
    need = [-(-int(n) // block_size) for n in lens]
    num_blocks = sum(need) + 3
    pool = {"shuffled": rng.permutation(num_blocks), "reversed": np.arange(num_blocks)[::-1],
            "in_order": np.arange(num_blocks)}[order]
    nan_block = int(pool[-1])  # never handed out
    tables = np.full((len(lens), max(need) + 1), nan_block, dtype=np.int32)
    live = np.zeros((num_blocks, block_size), dtype=bool)
    at = 0
    for s, n in enumerate(need):
        shared = min(share, n, need[0]) if s == 1 else 0
        tables[s, :shared] = tables[0, :shared]
        tables[s, shared:n] = pool[at:at + n - shared]
        at += n - shared
        t = np.arange(int(lens[s]))
        live[tables[s][t // block_size], t % block_size] = True

    def cache(amp):
        x = bf16_bits(rng.uniform(-1, 1, (num_blocks, block_size, num_kv_heads, head_dim)) * amp)
        x[~live] = NAN_BF16
        return x

    q = bf16_bits(rng.uniform(-1, 1, (len(lens), num_heads, head_dim)) * q_amp)
    return Case(q, cache(k_amp), cache(1.0), tables, lens, 1.0 / np.sqrt(head_dim))


def random_lens(rng: np.random.Generator, num_seqs: int, block_size: int) -> np.ndarray:
    """Lengths from 1 to 20 blocks; never a multiple of the block size, which
    ``block_boundary`` tests on its own (so its verdict names the defect)."""
    n = rng.integers(1, 20 * block_size, size=num_seqs)
    return np.where(n % block_size == 0, n + 1, n)


def fixed_case(name: str, rng: np.random.Generator) -> Case:
    """The case that targets one defect each."""
    if name == "context_len_1":  # every sequence one token: its output is that token's value row
        return make_case(rng, [1, 1, 1, 1, 1], (8, 2, 128, 16))
    if name == "block_boundary":  # contexts ending exactly on a block boundary (one block, two, five)
        return make_case(rng, [16, 32, 80, 16, 48], (8, 2, 128, 16))
    if name == "one_sequence":
        return make_case(rng, [1000], (32, 8, 128, 16))
    if name == "blocks_out_of_order":  # every table descends through the pool
        return make_case(rng, [70, 45, 130], (8, 8, 128, 16), order="reversed")
    if name == "shared_blocks":  # sequence 1's first 3 blocks are sequence 0's
        return make_case(rng, [60, 75, 33], (8, 4, 64, 16), share=3)
    if name == "large_scores":  # scores up to about 10^3: exp without the maximum overflows
        return make_case(rng, [37, 90, 5], (8, 2, 128, 16), q_amp=100.0, k_amp=10.0)
    raise KeyError(name)


# -- the checks --------------------------------------------------------------------------------

class PagedChecks:
    """The GPU checks. ``host`` serves the answer's entry point (a proxy for a
    cuda_device.KernelHost in the answer's process; tests pass a NumPy
    stand-in); every value it returns is verified here. ``device`` is this
    process's own view of the GPU (cuda_device.CheckerDevice)."""

    def __init__(self, suite, host, device=None):
        self.suite, self.host, self.device = suite, host, device
        self.ref = suite.reference()
        self.atol = float(suite.threshold("atol", 2e-3))

    def call(self, case: Case) -> np.ndarray:
        """One call; fail on a mutated input or a write past the end of the output."""
        s, h, kvh, d, bs, mb, nb = case.dims
        n = s * h * d
        inputs = [case.q, case.k_cache, case.v_cache, case.tables, case.lens]
        got = self.host.call([*inputs, ("float32", n + GUARD, NAN_BITS), s, h, kvh, d, bs, mb, nb, case.scale])
        if got.get("error"):
            raise CudaFault(f"the kernel failed on the device: {got['error']}")
        if got.get("rc"):
            raise CudaFault(f"{SYMBOL} returned {got['rc']} ({got.get('rc_name') or 'not a CUDA error code'})")
        out = np.asarray(got["outputs"][0])
        if out.shape != (n + GUARD,) or len(got["inputs"]) != len(inputs):
            raise CheckFailed("the answer's process returned buffers of the wrong size")
        for before, after in zip(inputs, got["inputs"]):
            if not np.array_equal(np.asarray(after).reshape(-1).view(before.dtype), before.reshape(-1)):
                raise InputMutated("the kernel modified an input in place")
        if not (out[n:].view(np.uint32) == NAN_BITS).all():
            raise CheckFailed("wrote past the end of the [num_seqs, num_heads, head_dim] output")
        return out[:n].reshape(s, h, d)

    def compare(self, c, case: Case) -> None:
        out = self.call(case)
        q, k, v = case.floats()
        want = self.ref.paged_attention(q, k, v, case.tables, case.lens, case.scale)
        err = self.ref.relative_error(out, want, self.ref.value_scale(v, case.tables, case.lens))
        c.value = float(f"{err.max():.4g}")
        s, h, kvh, d, bs, mb, nb = case.dims
        c.details.update(num_seqs=s, num_heads=h, num_kv_heads=kvh, head_dim=d, block_size=bs,
                         context_lens=case.lens.tolist())
        bad = np.argwhere(~(err <= self.atol))
        if len(bad):
            seq, head = (int(x) for x in bad[0])
            got = out[seq, head, :3].tolist()
            c.fail(f"{len(bad)}/{err.size} (sequence, head) outputs wrong; first: sequence {seq} "
                   f"(context {int(case.lens[seq])}, block size {bs}), head {head}: error {err[seq, head]:.3g} "
                   f"of its largest |V|, got {np.round(got, 5).tolist()}... want {np.round(want[seq, head, :3], 5).tolist()}...")
        c.message = f"{err.size} (sequence, head) outputs, contexts {case.lens.tolist()[:6]}, max error {c.value:.2e}"

    def run_correctness(self) -> None:
        s = self.suite
        for shape in SHAPES:
            name = shape_name(shape)
            with s.check(name, threshold=self.atol, requires=requires_of(name)) as c:
                rng = s.rng(name)
                self.compare(c, make_case(rng, random_lens(rng, 7, shape[3]), shape))
        for name in FIXED:
            with s.check(name, threshold=self.atol, requires=requires_of(name)) as c:
                self.compare(c, fixed_case(name, s.rng(name)))

    # -- timing -------------------------------------------------------------------------------
    def timing_plan(self) -> dict:
        th = self.suite.threshold
        p = {n: int(th(f"timing_{n}", d)) for n, d in (("seqs", 64), ("heads", 32), ("kv_heads", 8), ("head_dim", 128),
                                                        ("block_size", 16), ("max_context", 4096), ("launches", 2),
                                                        ("warmup", 3), ("trials", 20))}
        p["max_blocks"] = -(-p["max_context"] // p["block_size"])
        p["num_blocks"] = p["seqs"] * p["max_blocks"]
        p["scale"] = float(1.0 / np.sqrt(p["head_dim"]))
        return p

    def timed_inputs(self, p: dict) -> list:
        """(dtype, count, a, b) of each input as the harness makes it from a seed:
        q in [-1, 1), keys in [-4, 4), values in [-8, 8), any block of the pool,
        contexts of 1 to max_context tokens."""
        s, h, kvh, d = p["seqs"], p["heads"], p["kv_heads"], p["head_dim"]
        cache = p["num_blocks"] * p["block_size"] * kvh * d
        return [("bfloat16", s * h * d, -3, 0), ("bfloat16", cache, -1, 0), ("bfloat16", cache, 0, 0),
                ("int32", s * p["max_blocks"], 0, p["num_blocks"]), ("int32", s, 1, p["max_context"] + 1)]

    def seeded_case(self, p: dict, launch_seeds: list, seq: int, head: int) -> tuple[Case, np.ndarray]:
        """The one (sequence, head) of a timed launch, regenerated here from its
        seeds (``seeded_values``): a Case of one sequence whose cache holds
        just its tokens, and the table row and length it came from."""
        q_seed, k_seed, v_seed, t_seed, n_seed = launch_seeds
        h, kvh, d, bs, mb = p["heads"], p["kv_heads"], p["head_dim"], p["block_size"], p["max_blocks"]
        (q_in, k_in, v_in, t_in, n_in) = self.timed_inputs(p)
        ctx = int(seeded_values(n_seed, [seq], "int32", n_in[2], n_in[3])[0])
        table = seeded_values(t_seed, seq * mb + np.arange(-(-ctx // bs)), "int32", t_in[2], t_in[3])
        t = np.arange(ctx)
        kv_head = head // (h // kvh)
        rows = ((table[t // bs].astype(np.int64) * bs + t % bs) * kvh + kv_head)[:, None] * d + np.arange(d)
        k = seeded_values(k_seed, rows, "bfloat16", k_in[2]).reshape(ctx, 1, 1, d)
        v = seeded_values(v_seed, rows, "bfloat16", v_in[2]).reshape(ctx, 1, 1, d)
        q = seeded_values(q_seed, (seq * h + head) * d + np.arange(d), "bfloat16", q_in[2]).reshape(1, 1, d)
        one = Case(q, k, v, np.arange(ctx, dtype=np.int32)[None, :], np.array([ctx], dtype=np.int32), p["scale"])
        return one, table

    @staticmethod
    def timed_where(p: dict) -> str:
        return (f"{p['launches']} launches of {p['seqs']} sequences x {p['heads']} heads ({p['kv_heads']} KV heads), "
                f"head_dim {p['head_dim']}, block size {p['block_size']}, contexts up to {p['max_context']}")

    def timing(self) -> None:
        s, p = self.suite, self.timing_plan()
        try:
            info = device_info(self.device)
            run, moved = self.time_answer(p, info)
        except Exception as exc:
            for name in ("timed_outputs", *FIGURES):
                s.record(name, V.ERROR if name == "timed_outputs" else V.INFO,
                         message=f"timing ({self.timed_where(p)}) failed: {error_text(exc)}",
                         requires=requires_of(name))
            return
        where = self.timed_where(p)  # the windows' width as timed (widened above the empty cycle's jitter)
        with s.check("timed_outputs", requires=requires_of("timed_outputs")) as c:
            c.value, c.threshold = run["rows_wrong"], 0
            c.details.update(windows=p["warmup"] + p["trials"], outputs_checked=run["rows_checked"], plan=p)
            if run["rows_wrong"]:
                c.fail(f"{run['rows_wrong']}/{run['rows_checked']} sampled (sequence, head) outputs of the timed "
                       f"calls wrong; {run['why']}")
            c.message = f"{run['rows_checked']} sampled (sequence, head) outputs of the timed calls ({where}) verified"
        details, flags, said = timing_details(run, info, moved, EVENTS_AGREE)
        details.update(plan=p, launches_per_window=p["launches"])
        figures = roofline_figures(details, f"{where} on {info.get('name', 'the GPU')}")
        for name, (value, message) in figures.items():
            message += said
            d = dict(details)
            if flags:  # shown, never ranked
                d["would_be"] = value
                value, message = None, "flagged, not ranked: " + "; ".join(flags) + f" ({message})"
            s.info(name, value=None if value is None else float(f"{value:.5g}"), message=message, details=d)

    def time_answer(self, p: dict, info: dict) -> tuple[dict, int]:
        """Timed windows of ``launches`` launches each on fresh seeded inputs
        (engine/verify/cuda/suite.py's ``timed_cycles``); one (sequence, head)
        of every launch is verified here from the seeds. Returns the run and
        the bytes one window must move at least (the mean over the timed
        windows: each has its own tables and lengths)."""
        s = self.suite
        inputs = self.timed_inputs(p)
        n_out = p["seqs"] * p["heads"] * p["head_dim"]
        outputs = [("float32", n_out, NAN_BITS)]
        scratch = max(4 * int(info.get("l2_bytes") or 0), 256 * 2**20)
        cycles = p["warmup"] + p["trials"]

        def reseed(launches: int) -> list:  # the same first launches at any width: windows may be widened
            return [[[derive_seed(s.seed, f"paged-timing-{t}-{launch}-{i}") for i in range(len(inputs))]
                     for launch in range(launches)] for t in range(cycles)]
        pick = s.rng("timing-outputs")
        scalars = [p["seqs"], p["heads"], p["kv_heads"], p["head_dim"], p["block_size"], p["max_blocks"],
                   p["num_blocks"], p["scale"]]

        def verify(trial, cycle_seeds, got):
            wrong, why = 0, None
            for launch, launch_seeds in enumerate(cycle_seeds):
                seq, head = int(pick.integers(p["seqs"])), int(pick.integers(p["heads"]))
                one, _ = self.seeded_case(p, launch_seeds, seq, head)
                out = np.asarray(got[launch][0]).reshape(p["seqs"], p["heads"], p["head_dim"])[seq, head]
                q, k, v = one.floats()
                want = self.ref.paged_attention(q, k, v, one.tables, one.lens, one.scale)[0, 0]
                err = self.ref.relative_error(out[None, None], want[None, None],
                                              self.ref.value_scale(v, one.tables, one.lens))[0, 0]
                if not err <= self.atol:
                    wrong += 1
                    why = why or (f"launch {launch}, sequence {seq} (context {int(one.lens[0])}), head {head}: "
                                  f"error {err:.3g} of its largest |V|")
            return len(cycle_seeds), wrong, why

        run = timed_cycles(s, self.host, self.device, inputs, outputs, scratch, reseed(p["launches"]),
                                      p["warmup"], scalars, verify, launches=p["launches"], reseed=reseed)
        p["launches"] = run["launches"]  # as wide as the windows were timed
        moved = [sum(self.window_bytes(p, launch_seeds) for launch_seeds in cycle)
                 for cycle in run["seeds"][p["warmup"]:]]
        return run, int(np.mean(moved))

    def window_bytes(self, p: dict, launch_seeds: list) -> int:
        _, _, _, (_, nt, ta, tb), (_, nn, na, nb) = self.timed_inputs(p)
        tables = seeded_values(launch_seeds[3], np.arange(nt), "int32", ta, tb).reshape(p["seqs"], p["max_blocks"])
        lens = seeded_values(launch_seeds[4], np.arange(nn), "int32", na, nb)
        return self.ref.bytes_read(tables, lens, p["block_size"], p["heads"], p["kv_heads"], p["head_dim"])
