"""Nothing the answer's process says decides a verdict or a ranked figure of
the PyTorch module harness (engine/verify/module/suite.py): answers that
rewrite benchtui's host in their own process (a lazy reply, a handle in the
output, a reply past the reference's size, a forged dtype, a hidden in-place
write, a staging that is not in place) on small deck-shaped challenges, run
on the CPU through the local path; and 128-bit seeds end to end."""
from __future__ import annotations

import os
import statistics
import types

import pytest

torch = pytest.importorskip("torch", reason="the torch extra is not installed (pip install -e '.[torch]')")

from benchtui.runner.local import run_local  # noqa: E402
from benchtui.verify.module.seeds import seed_torch  # noqa: E402
from benchtui.verify.module.suite import ModuleRun  # noqa: E402

from tests.challenges import module_deck_kit as K  # noqa: E402


@pytest.fixture(scope="module")
def attacks(tmp_path_factory):
    root = tmp_path_factory.mktemp("module-trust")
    K.write_challenge(root / "challenges", "kbh_fp8", "hard")
    K.write_challenge(root / "challenges", "kb_gemm", "kb")
    answers = K.write_answers(root / "hard", K.TRUST_ATTACKS)
    answers.update(K.write_answers(root / "kb", {"kb_forged_dtype": K.KB_FORGED_DTYPE}))
    answers.update(K.write_answers(root / "forbidden", K.FORBIDDEN_ATTACKS))
    results: dict = {}

    def run(name: str) -> dict:
        if name not in results:
            os.environ.setdefault("OMP_NUM_THREADS", "1")
            cid = "kb_gemm" if name.startswith("kb_") else "kbh_fp8"
            results[name] = run_local(cid, answers[name], challenges_dir=root / "challenges", seed=7)
        return results[name]

    return run


def by_name(result: dict) -> dict:
    return {c["name"]: c for c in result["checks"]}


def explain(result: dict) -> list:
    return [(c["name"], c["verdict"], c["message"][:200]) for c in result["checks"]]


@pytest.mark.parametrize("answer, handle, check", [("lazy_cycle", "Lazy", "deck_seeds:shape0"),
                                                  ("lazy_values", "Later", "deck_seeds:shape0"),
                                                  ("lazy_when_timed", "Lazy", "timed_outputs:shape0")])
def test_a_reply_holding_a_handle_is_an_error_naming_it(attacks, answer, handle, check):
    """The host's cycle (or its output) replaced by one handing back a lazy
    object: the checker reads every reply by value, so the work cannot run
    after its clock stops; the handle is named, and no time is reported."""
    r = attacks(answer)
    checks = by_name(r)
    assert r["verdict"] == "error", explain(r)
    c = checks[check]
    assert c["verdict"] == "error" and c["details"]["requirement"] == "reply", c
    assert "handle" in c["message"] and handle in c["message"], c["message"]
    assert not any(name.startswith("time:") for name in checks)


def test_a_reply_past_the_reference_s_size_is_refused_before_it_is_read(attacks):
    """64 MiB beside the right output: refused from its announced size (the
    reference's output allows a few hundred bytes), never decoded."""
    r = attacks("huge_reply")
    c = by_name(r)["deck_seeds:shape0"]
    assert r["verdict"] == "error", explain(r)
    assert c["verdict"] == "error" and c["details"]["requirement"] == "reply"
    assert f"{(64 << 20) + 256}" in c["message"] or "bytes of arrays, over the" in c["message"], c["message"]
    assert "the reference's outputs allow" in c["message"]


@pytest.mark.parametrize("answer, got, want", [("forged_dtype", "float32", "bfloat16"),
                                               ("kb_forged_dtype", "float64", "float32")])
def test_the_dtype_is_the_decoded_tensor_s_not_the_answer_s_word(attacks, answer, got, want):
    r = attacks(answer)
    c = by_name(r)["deck_seeds:shape0"]
    assert r["verdict"] == "fail", explain(r)
    assert c["details"]["requirement"] == "output_dtype"
    assert f"output dtype {got}, the reference's is {want}" in c["message"]


def test_an_in_place_write_the_answer_does_not_report_is_seen_by_the_checker(attacks):
    r = attacks("hidden_in_place")
    c = by_name(r)["deck_seeds:shape0"]
    assert r["verdict"] == "fail", explain(r)
    assert c["details"]["requirement"] == "inputs_unchanged"
    assert "read by the checker from the pages it wrote them into" in c["message"]


def test_the_stale_result_message_says_what_was_measured(attacks):
    """The checker wrote the inputs into the same pages; the answer's process
    called its module on copies (other pointers): the message says both, and
    never claims the staging was in place in the answer's process."""
    r = attacks("stale_on_copies")
    checks = by_name(r)
    deck, secret = checks["deck_seeds:shape0"], checks["secret_seeds:shape0"]
    assert deck["details"]["requirement"] == "fresh_result" and "new input pages" in deck["message"]
    assert secret["details"]["requirement"] == "fresh_result", explain(r)
    assert "the checker wrote these inputs into the pages the previous call read" in secret["message"]
    assert "reports other pointers or versions" in secret["message"]
    assert "same objects, pointers and versions" not in secret["message"]


@pytest.mark.parametrize("answer", sorted(K.FORBIDDEN_ATTACKS))
def test_a_forbidden_op_is_seen_at_the_dispatcher_however_it_is_reached(attacks, answer):
    """The forbidden FP8 GEMM called past the torch-function layer (switched off,
    TorchScript from a string, a mode detected), as the aten op or its C binding,
    on one call in five, or only once the calls' time counts: the dispatcher trace
    of the verified calls names aten::_scaled_mm, and the run is not a pass."""
    r = attacks(answer)
    checks = by_name(r)
    assert r["verdict"] == "forbidden", explain(r)
    c = checks["forbidden_calls"]
    assert c["verdict"] == "forbidden", c
    assert c["message"].startswith("aten op aten::_scaled_mm (torch._scaled_mm)"), c["message"]
    assert {"seen": "aten::_scaled_mm", "forbidden": "torch.ops.aten._scaled_mm"} in [
        {k: h[k] for k in ("seen", "forbidden")} for h in c["details"]["hits"]]
    assert checks["forbidden_ops"]["verdict"] == "pass"  # the syntax tree cannot see these
    assert {x["id"]: x["status"] for x in r["coverage"]}["no_forbidden_ops"] == "fail"


def test_a_traced_call_s_reply_without_its_op_record_is_an_error(attacks):
    """The host's cycle patched to ignore the checker's trace: the reply is not
    the traced cycle's plain shape, an error naming it, never a pass."""
    r = attacks("untraced")
    c = by_name(r)["deck_seeds:shape0"]
    assert r["verdict"] == "error", explain(r)
    assert c["details"]["requirement"] == "reply" and "no list of the aten ops" in c["message"], c


def test_a_forbidden_op_called_only_when_timed_is_seen_on_an_untimed_call_between_windows(attacks):
    r = attacks("when_timed")
    where = by_name(r)["forbidden_calls"]["details"]["hits"][0]["where"]
    assert where["call"] == "untimed" and where["window"] == 0 and where["shape"].startswith("shape 0"), where


class _Ref:
    """A reference module's ``get_inputs`` as a deck writes it (torch's default generator)."""

    @staticmethod
    def get_inputs():
        return [torch.rand(64, 8), torch.randn(16), torch.randint(0, 1000, (32,))]


def _run_on(device: str) -> ModuleRun:
    run = ModuleRun.__new__(ModuleRun)
    run.torch, run.device, run.dtype = torch, torch.device(device), None
    return run


def _same(a: list, b: list) -> bool:
    return all(torch.equal(x, y) for x, y in zip(a, b))


def test_secret_inputs_depend_on_every_bit_of_a_128_bit_seed():
    run = _run_on("cpu")
    seed = 0x5EED_0000_0000_0000_0000_0000_0000_1234
    first = run.inputs(_Ref, seed)
    assert _same(first, run.inputs(_Ref, seed))  # the same seed: the same inputs, to replay a failure
    for other in (seed + 2**32, seed + 2**63, seed + 2**64, seed ^ (1 << 127)):
        assert not _same(first, run.inputs(_Ref, other)), hex(other)
    # the deck's own seeds are the deck's inputs, seeded as its check.py seeds them
    torch.manual_seed(42)
    deck = _Ref.get_inputs()
    assert _same(run.inputs(_Ref, 42, deck=True), deck)


@pytest.mark.gpu
def test_secret_inputs_on_the_gpu_depend_on_every_bit_of_the_seed():
    if not torch.cuda.is_available():
        pytest.skip("needs an NVIDIA GPU with CUDA torch")
    seed = 0x5EED_0000_0000_0000_0000_0000_0000_1234
    draws = []
    for s in (seed, seed, seed + 2**64, seed + 2**32):
        seed_torch(s, cuda=True)
        draws.append(torch.rand(1024, device="cuda").cpu())
    assert torch.equal(draws[0], draws[1])
    assert not torch.equal(draws[0], draws[2]) and not torch.equal(draws[0], draws[3])


def test_module_secrets_are_128_bits():
    run = ModuleRun.__new__(ModuleRun)
    run.suite = types.SimpleNamespace(seed=7)
    secrets = [run._secret("inputs", 0, i) for i in range(8)]
    assert max(secrets) >= 2**64 and len(set(secrets)) == 8


def test_a_time_the_window_cannot_resolve_is_no_figure_and_the_geomean_names_it(tmp_path, monkeypatch):
    """The empty window's jitter widened to 10 s (as on a machine far noisier
    than its calls): no trusted time for either shape, never 0 ms, and
    peak_fraction says it left both out. The resolution stands beside each."""
    from benchtui.verify.module import timing as module_timing

    measure = module_timing.EmptyWindow.measure

    def noisy(self, calls, samples=7, taken=None):
        return {**measure(self, calls, samples, taken), "iqr_s": 10.0}

    monkeypatch.setattr(module_timing.EmptyWindow, "measure", noisy)
    K.write_challenge(tmp_path / "challenges", "kbh_fp8", "hard")
    answers = K.write_answers(tmp_path / "hard", {"right": K.HARD_RIGHT})
    r = run_local("kbh_fp8", answers["right"], challenges_dir=tmp_path / "challenges", seed=7)
    checks = by_name(r)
    assert r["verdict"] == "pass", explain(r)
    for shape in ("shape0", "shape1"):
        t = checks[f"time:{shape}"]
        assert t["value"] is None and t["details"]["trusted_ms"] is None, t
        assert t["details"]["resolution_ms"] >= 10_000 / t["details"]["calls_per_window"] - 1e-6
        assert "below the resolution" in t["message"] and "no figure" in t["message"]
        assert t["details"]["peak_fraction_deck_peak"] is None
    p = checks["peak_fraction"]
    assert p["value"] is None and "left out" in p["message"] and "shape0, shape1" in p["message"]
    assert p["details"]["left_out"]["deck_peak"] == ["shape0", "shape1"]


def test_a_right_answer_s_time_stands_above_its_resolution(tmp_path, monkeypatch):
    """Its windows are also sized by the bytes they hold in the checker: here the time would
    take 4 calls a window, and the bytes cap (set to two calls' inputs and outputs, as 64 MiB
    inputs would meet the real one) keeps 2; the checker's peak memory is quoted beside it."""
    from benchtui.verify.timing import core as TT

    per_call = 2 * (4 * 24 * 4) + 2 * (4 * 12 * 4)  # inputs and reference outputs (float32), each held twice
    monkeypatch.setattr(TT, "window_calls", lambda *args, **kwargs: 4)
    monkeypatch.setattr(TT, "window_calls_by_span", lambda *args, **kwargs: 1)  # the time alone sizes them
    monkeypatch.setattr(TT, "MAX_WINDOW_BYTES", 2 * per_call + 1)
    K.write_challenge(tmp_path / "challenges", "kb_gemm", "kb")
    # 10 ms a call: well above the empty window's jitter on a busy machine
    answers = K.write_answers(tmp_path / "kb", {"slow": K.sleeper(10.0)})
    r = run_local("kb_gemm", answers["slow"], challenges_dir=tmp_path / "challenges", seed=7)
    t = by_name(r)["time:shape0"]["details"]
    assert r["verdict"] == "pass", explain(r)
    assert t["trusted_ms"] is not None and t["trusted_ms"] > t["resolution_ms"] > 0, (t["trusted_samples_ms"], t["empty_cycle"])
    assert 9.5 < t["trusted_ms"] < 60 and len(t["trusted_samples_ms"]) == 3
    assert t["trusted"]["windows"] == 3 and t["trusted"]["empty_cycle"]["calls"] == t["calls_per_window"] == 2
    assert t["window_sizing"] == {"calls_by_time": 4, "calls": 2, "bytes_per_call": per_call,
                                  "window_bytes_max": 2 * per_call + 1, "limited_by": "bytes"}, t["window_sizing"]
    assert t["checker_peak_rss_mib"] > 10 and "ru_maxrss" in t["checker_peak_read_by"]


def test_a_window_holds_at_most_its_bytes_whatever_the_answer_s_speed():
    """A fast answer on 64 MiB inputs (and 64 MiB outputs) would have the time size its windows
    at 32 calls, 8 GiB held in the checker; the bytes cap keeps one call a window."""
    from benchtui.verify.module.timed import call_bytes
    from benchtui.verify.timing import core as TT

    x = torch.empty(16 << 20)  # 64 MiB of float32
    big = call_bytes(torch, [x], x)
    assert big == 4 * (64 << 20)
    assert TT.window_calls_by_bytes(TT.MAX_WINDOW_CALLS, big) == 1
    assert TT.window_calls_by_bytes(TT.MAX_WINDOW_CALLS, big) * big <= max(TT.MAX_WINDOW_BYTES, big)
    small = call_bytes(torch, [torch.empty(8)], (torch.empty(2), torch.empty(2)))
    assert small == 2 * 32 + 2 * 16 and TT.window_calls_by_bytes(7, small) == 7
    assert TT.window_calls_by_bytes(7, 0) == 7


def test_a_call_s_inputs_reach_the_answer_only_inside_its_window(tmp_path, monkeypatch):
    """A thread of the answer's own process computes each call's output as soon as its
    inputs appear in the pages it maps (module_deck_kit.precomputer, whose forward costs
    20 ms). Had a window's inputs been written before its clock started, a window of 4
    calls would last about one forward: 5 ms a call. Handed over inside the window, just
    before each call's request, every call still costs its forward."""
    from benchtui.verify.timing import core as TT

    monkeypatch.setattr(TT, "window_calls", lambda *args, **kwargs: 4)  # as wide as a short GPU kernel's
    monkeypatch.setattr(TT, "window_calls_by_span", lambda *args, **kwargs: 1)
    K.write_challenge(tmp_path / "challenges", "kb_gemm", "kb")
    answers = K.write_answers(tmp_path / "kb", {"precompute": K.precomputer(20.0)})
    r = run_local("kb_gemm", answers["precompute"], challenges_dir=tmp_path / "challenges", seed=7)
    t = by_name(r)["time:shape0"]["details"]
    assert r["verdict"] == "pass", explain(r)
    assert t["calls_per_window"] == 4
    # what the windows read (its polling thread also works off the clock, which voids the figure)
    assert statistics.median(t["trusted_samples_ms"]) > 15, t["trusted_samples_ms"]


def test_work_while_no_call_is_in_flight_voids_the_figure(tmp_path):
    """A thread of the answer's process works whenever its forward is not running: the
    kernel's count of the process's CPU time, read around every request of the shape's
    timing, shows it spent between calls; the time is no figure ("worked off the clock"),
    the geomean leaves the shape out, and the verdict still rests on the outputs."""
    K.write_challenge(tmp_path / "challenges", "kb_gemm", "kb")
    answers = K.write_answers(tmp_path / "kb", {"off_clock": K.off_clock_worker(2.0)})
    r = run_local("kb_gemm", answers["off_clock"], challenges_dir=tmp_path / "challenges", seed=7)
    checks = by_name(r)
    t = checks["time:shape0"]
    off = t["details"]["off_clock"]
    assert r["verdict"] == "pass", explain(r)
    assert t["value"] is None and t["details"]["trusted_ms"] is None and t["details"]["worked_off_the_clock"], t
    assert "worked off the clock" in t["message"] and "never ranked" in t["message"]
    assert off["measured"] and off["off_clock_cpu_ms"] > off["allowance_ms"] > 0, off
    # what the windows read is shown beside it (a figure, or below the resolution on a busy machine)
    assert "the windows read" in t["message"] and len(t["details"]["trusted_samples_ms"]) == t["details"]["trusted"]["windows"]
    assert checks["peak_fraction"]["details"]["left_out"]["deck_peak"] == ["shape0"]


def test_a_trusted_time_below_the_answer_s_own_is_flagged(tmp_path):
    """The trusted time brackets staging, the forward and the fetch, so it stands above the
    forward the answer's own clock times in the same calls; below it (here the answer's
    host adds 50 ms to its own reading) is a flag. An honest answer's is not flagged."""
    K.write_challenge(tmp_path / "challenges", "kb_gemm", "kb")
    answers = K.write_answers(tmp_path / "kb", {"inflated": K.OWN_TIME_INFLATED, "slow": K.sleeper(5.0)})
    r = run_local("kb_gemm", answers["inflated"], challenges_dir=tmp_path / "challenges", seed=7)
    t = by_name(r)["time:shape0"]
    assert r["verdict"] == "pass", explain(r)
    below = t["details"]["below_the_answer_s_own"]
    assert "own clock on the same timed calls" in below and below["own clock on the same timed calls"] > 50, below
    assert t["details"]["flagged"] and "below the answer's own clock" in t["message"]
    honest = by_name(run_local("kb_gemm", answers["slow"], challenges_dir=tmp_path / "challenges", seed=7))
    h = honest["time:shape0"]["details"]
    assert h["below_the_answer_s_own"] == {} and not h["worked_off_the_clock"] and h["off_clock"]["measured"], h


def test_a_timed_cycle_keeps_no_copy_of_its_inputs_and_flushes_nothing(tmp_path, monkeypatch):
    """The host's timed cycle (``compare`` off) keeps no copy of its inputs and flushes no L2:
    work an answer's host could skip is not in what the empty window subtracts. Untimed
    cycles still compare (and report an input written in place)."""
    from benchtui.verify.module import tensors as T
    from benchtui.verify.module.host import ModuleHost

    class Doubles(torch.nn.Module):
        def forward(self, x):
            x.mul_(2)  # writes its input in place
            return x.clone()

    host = ModuleHost(Doubles, "cpu", 0.0, 0.0, tmp_path)
    host.build([])
    host.share(T.encode_tree([torch.ones(8)]), 0)
    flushed: list = []
    monkeypatch.setattr(host, "_flush_l2", lambda: flushed.append(1))
    timed = host.cycle(0, False, False)
    assert timed["changed"] == [] and host._clones == [] and flushed == []
    untimed = host.cycle(0)
    assert untimed["changed"] == [0] and flushed == [1]


def test_the_empty_window_skips_what_a_timed_cycle_skips_and_flushes_as_the_checker_does(monkeypatch):
    """The empty window runs its cycles as the timed ones run: no copy kept, no flush in the
    host, the checker's own flush before each call, each call's inputs written into pages
    its host reads."""
    from benchtui.verify.module import tensors as T
    from benchtui.verify.module import timing as module_timing
    from benchtui.verify.module.host import ModuleHost

    asked: list = []
    cycle = ModuleHost.cycle

    def recording(self, slot=0, trace=False, compare=True):
        asked.append(compare)
        return cycle(self, slot, trace, compare)

    monkeypatch.setattr(ModuleHost, "cycle", recording)
    flushes: list = []
    x = [torch.rand(16)]
    window = module_timing.EmptyWindow("cpu", T.encode_tree(x), x[0] * 2, lambda: flushes.append(1))
    try:
        window.measure(3, samples=2)
    finally:
        window.close()
    assert asked[1:] == [False] * 9 and len(flushes) == 9  # 3 windows (one warms) of 3 calls
    pages, writes = window.writes[0]
    assert pages is not None and len(writes) == 1


def test_what_the_checker_s_thread_waited_for_a_cpu_is_off_the_empty_window(monkeypatch):
    """The checker's timing thread queued behind other jobs is the checker's overhead: the
    scheduler's count of its wait (here 40 ms a sample, as on a busy machine) comes off each
    empty sample (and off each timed window; the answer's process's stays in its windows), and
    is what the gap floor subtracts per call."""
    from benchtui.verify.module import contention
    from benchtui.verify.module import tensors as T
    from benchtui.verify.module import timing as module_timing

    reads = iter(range(0, 10**12, 40_000_000))  # ns: 40 ms between a sample's two reads
    monkeypatch.setattr(contention, "own_wait", lambda: next(reads))
    x = [torch.rand(16)]
    window = module_timing.empty_window("cpu", T.encode_tree(x), x[0] * 2, lambda: None)
    try:
        empty = window.measure(2, samples=3)
    finally:
        window.close()
    assert empty["run_queue_wait_s"] == pytest.approx(0.02)  # 40 ms over the sample's 2 calls
    assert empty["s"] < 0  # the samples' own cost, a few microseconds, less the 40 ms counted as waiting


def test_each_timed_call_is_flushed_then_handed_its_inputs_then_requested(tmp_path, monkeypatch):
    """Inside a window, for every call: the checker's own L2 flush, then the call's inputs
    written into its slot's pages, then its request (a timed cycle: no compare in the host)."""
    from benchtui.verify import wire
    from benchtui.verify.module.timed import Timed
    from benchtui.verify.module.timing import EmptyWindow

    events: list = []
    flush, hand_over, call_plain = Timed.flush_l2, Timed.hand_over, wire.call_plain
    sample = EmptyWindow.sample
    monkeypatch.setattr(EmptyWindow, "sample", lambda self, calls: events.append("empty") or sample(self, calls))
    monkeypatch.setattr(Timed, "flush_l2", lambda self: events.append("flush") or flush(self))
    monkeypatch.setattr(Timed, "hand_over", staticmethod(lambda record: events.append("inputs") or hand_over(record)))
    monkeypatch.setattr(wire, "call_plain", lambda proxy, *a, **k: events.append(("call", a)) or call_plain(proxy, *a, **k))
    K.write_challenge(tmp_path / "challenges", "kb_gemm", "kb")
    answers = K.write_answers(tmp_path / "kb", {"slow": K.sleeper(1.0)})
    r = run_local("kb_gemm", answers["slow"], challenges_dir=tmp_path / "challenges", seed=7)
    assert r["verdict"] == "pass", explain(r)
    timed = [i for i, e in enumerate(events) if e == "inputs"]
    windows = by_name(r)["time:shape0"]["details"]["trusted"]["windows"]
    calls = by_name(r)["time:shape0"]["details"]["calls_per_window"]
    assert len(timed) == 3 + windows * calls  # the probes' and the windows' calls
    for i in timed:
        assert events[i - 1] == "flush" and events[i + 1][0] == "call", events[i - 1:i + 2]
        assert events[i + 1][1][1:] == (False, False), events[i + 1]  # no trace, no compare
    # the empty window sampled after every timed window, before the next one's calls: both see the same machine
    starts = timed[3::calls]
    for k in range(len(starts)):
        end = timed[3 + (k + 1) * calls - 1]
        following = events[end:starts[k + 1]] if k + 1 < len(starts) else events[end:]
        assert "empty" in following, (k, following[:6])
