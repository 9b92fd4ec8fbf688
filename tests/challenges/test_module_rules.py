"""The deck rules the module harness reproduces, and benchtui's reading of
the code (engine/verify/module/rules.py), and tensors on the wire
(engine/verify/module/tensors.py)."""
from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest
from benchtui.verify.module import rules as R

FORBIDDEN = ["torch._scaled_mm", "torch.ops.aten._scaled_mm", "torch.nn.functional.linear", "from sonic_moe"]


@pytest.mark.parametrize("source, expect", [
    ("import torch\ny = torch._scaled_mm(a, b)\n", "calls torch._scaled_mm"),
    ("import torch as t\nf = t._scaled_mm\n", "is torch._scaled_mm"),
    ("from torch import _scaled_mm as mm\nmm(a, b)\n", "is torch._scaled_mm"),
    ("import torch\nf = getattr(torch, '_scaled' + '_mm')\n", "is torch._scaled_mm"),
    ("import torch\nf = getattr(torch.ops.aten, ''.join(['_scaled', '_mm']))\n", "torch.ops.aten._scaled_mm"),
    ("import importlib\nF = importlib.import_module('torch.nn.functional')\nF.linear(x, w)\n", "torch.nn.functional.linear"),
    ("from torch.nn import functional as F\ny = F.linear(x, w)\n", "F.linear is torch.nn.functional.linear"),
    ("src = 'return at::_scaled_mm(a, b);'\n", "named in a string"),
    ("import sonic_moe.ops\n", "imports sonic_moe.ops"),
])
def test_forbidden_ops_resolved_through_the_code(source, expect):
    hits, unparsed = R.forbidden_in_code({"solution.py": source}, FORBIDDEN)
    assert unparsed == []
    assert any(expect in str(h) for h in hits), [str(h) for h in hits]


def test_prose_and_other_names_are_not_forbidden():
    source = ('"""Does not use torch._scaled_mm."""\nimport torch\n# torch._scaled_mm would be faster\n'
              'class M(torch.nn.Module):\n    def forward(self, x):\n        return self.linear(x)\n')
    hits, _ = R.forbidden_in_code({"solution.py": source}, FORBIDDEN)
    assert hits == []
    assert R.deck_grep(source, FORBIDDEN) == ["torch._scaled_mm"]  # the deck's text search would fail it


def test_matmul_disguises():
    forward = "import torch\nclass M(torch.nn.Module):\n    def forward(self, x, w):\n        y = x @ w\n        return x.matmul(w)\n"
    hits, _ = R.forbidden_in_code({"s.py": forward}, ["torch.matmul"])
    assert [(h.how, h.certain) for h in hits] == [("the @ operator on a tensor is torch.matmul", True),
                                                  ("the tensor method .matmul() is torch.matmul (x is a tensor)", True)]
    # operands the code does not show to be tensors: could be, never certain
    hits, _ = R.forbidden_in_code({"s.py": "import torch\ny = x @ w\nz = x.matmul(w)\n"}, ["torch.matmul"])
    assert [h.certain for h in hits] == [False, False] and all(h.how.startswith("could be torch.matmul") for h in hits)
    # NumPy's @ runs BLAS's GEMM, the routine torch.matmul stands for; an array has no .matmul()
    import_np = "import numpy as np\na = np.ones((2, 2))\nb = a @ a\nc = a.matmul(a)\n"
    hits, _ = R.forbidden_in_code({"s.py": import_np}, ["torch.matmul"])
    assert [(h.line, h.how, h.certain) for h in hits] == [
        (3, "the @ operator on a NumPy array is a BLAS GEMM, the routine torch.matmul runs", True)]


SORT_TOPK = ["torch.sort", "torch.topk", "torch.max", "torch.nn.functional.scaled_dot_product_attention"]


def _module(body: str, head: str = "import torch\n") -> str:
    """``body`` as the lines of a ModelNew.forward(self, x)."""
    lines = "".join(f"        {line}\n" for line in body.strip().splitlines())
    return f"{head}class ModelNew(torch.nn.Module):\n    def forward(self, x):\n{lines}"


@pytest.mark.parametrize("source", [
    # Python lists and dicts: their methods are not torch's
    _module("configs = [(2, 'a'), (1, 'b')]\nconfigs.sort(key=lambda c: c[0])\nreturn x"),
    _module("timings = []\nfor _ in range(3):\n    timings.append(1.0)\ntimings.sort()\nreturn x"),
    _module("best = sorted([3, 1])\nbest.sort(reverse=True)\nreturn x"),
    _module("scores = {'a': 1}\nm = max(scores.values())\nitems = list(scores.items())\n"
            "items.sort(key=lambda kv: kv[1])\nreturn x"),
    _module("names = list(('a', 'b'))\nnames.sort()\nreturn x"),
    _module("cfgs = [c for c in (1, 2)]\ncfgs.sort()\nreturn x"),
    # Triton's language: tl.topk and tl.sort are Triton ops
    "import triton\nimport triton.language as tl\n@triton.jit\ndef k(x_ptr, o_ptr):\n"
    "    v = tl.load(x_ptr + tl.arange(0, 16))\n    tl.store(o_ptr, tl.topk(v, 4))\n    s = tl.sort(v)\n",
    "from triton import language as tl\ndef k(v):\n    return tl.topk(v, 4)\n",
    # numpy: its functions and its arrays' methods
    "import numpy as np\nimport torch\ndef f():\n    a = np.array([3, 1, 2])\n    a.sort()\n    b = np.sort(a)\n"
    "    a.max()\n    return torch.from_numpy(b)\n",
    "import numpy\nx = numpy.zeros(4)\nx.sort()\ny = x[1:]\ny.sort()\n",
    # the answer's own functions and methods named like the op
    _module("return topk(x, 4)", head="import torch\ndef topk(v, k):\n    return v[:k]\n"),
    "import torch\nclass ModelNew(torch.nn.Module):\n    def sort(self, v):\n        return v\n"
    "    def forward(self, x):\n        return self.sort(x)\n",
    "import torch\nclass Plan:\n    def sort(self):\n        return 1\nplan = Plan()\nplan.sort()\n",
    # a torch function a file imports from elsewhere is not torch's
    "from mylib import topk\ntopk([1, 2], 1)\n",
    # a string naming another op that starts with the same letters
    "ALLOWED = ['torch.max_pool2d', 'torch.topk_like', 'mytorch.sort']\n",
])
def test_methods_and_functions_that_are_not_torchs_are_not_forbidden(source):
    hits, unparsed = R.forbidden_in_code({"solution.py": source}, SORT_TOPK)
    assert unparsed == [] and hits == [], [str(h) for h in hits]


@pytest.mark.parametrize("source, expect", [
    ("import torch\ny = torch.topk(x, 2)\n", "calls torch.topk"),
    ("import torch as t\ny = t.topk(x, 2)\n", "t.topk is torch.topk"),
    ("from torch import topk\ny = topk(x, 2)\n", "topk is torch.topk"),
    ("from torch import topk as tk\ny = tk(x, 2)\n", "tk is torch.topk"),
    ("import torch\ny = torch.Tensor.sort(x)\n", "torch.Tensor.sort is torch.sort"),
    ("import torch.nn.functional as F\ny = F.scaled_dot_product_attention(q, k, v)\n",
     "F.scaled_dot_product_attention is torch.nn.functional.scaled_dot_product_attention"),
    ("from torch.nn import functional as fn\ny = fn.scaled_dot_product_attention(q, k, v)\n",
     "is torch.nn.functional.scaled_dot_product_attention"),
    ("from torch.nn.functional import scaled_dot_product_attention as sdpa\ny = sdpa(q, k, v)\n",
     "sdpa is torch.nn.functional.scaled_dot_product_attention"),
    (_module("return x.topk(4)"), "the tensor method .topk() is torch.topk (x is a tensor)"),
    (_module("y = torch.relu(x) + 1\nvalues, idx = y.sort()\nreturn idx.topk(2)"), "(y is a tensor)"),
    (_module("values, idx = x.topk(4)\nreturn idx.sort()"), "(idx is a tensor)"),
    (_module("return getattr(x, 'so' + 'rt')()"), "the tensor method .sort() is torch.sort"),
    ("import torch\nimport torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
     "        self.w = nn.Parameter(torch.randn(8))\n    def g(self):\n        return self.w.max()\n",
     "the tensor method .max() is torch.max (self.w is a tensor)"),
    ("import torch\ndef f(v: torch.Tensor):\n    return v.sort()\n", "(v is a tensor)"),
    ("import torch\nclass M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
     "        self.register_buffer('table', torch.arange(8))\n    def forward(self, x):\n        return self.table.sort()\n",
     "(self.table is a tensor)"),
])
def test_torch_ops_still_caught_through_aliases_and_tensors(source, expect):
    hits, _ = R.forbidden_in_code({"solution.py": source}, SORT_TOPK)
    certain = [str(h) for h in hits if h.certain]
    assert any(expect in h for h in certain), [str(h) for h in hits]


@pytest.mark.parametrize("source, expect", [
    ("import torch\ndef helper(v):\n    return v.sort()\n", ".sort() on v"),  # a helper's parameter: anything
    ("import torch\ndef f(rows):\n    for r in rows:\n        r.topk(2)\n", ".topk() on r"),
    ("from torch import *\ny = topk(x, 2)\n", "topk, a name this file never binds"),  # a * import may bring it
    ("from consts import TABLE\nTABLE.sort()\n", ".sort() on TABLE"),  # another file's name: a tensor or not
    ("import numpy as np\ndef f(w):\n    return (np.ones(3) * w).sort()\n", ".sort() on np.ones(3) * w"),  # w a tensor?
])
def test_what_the_code_cannot_resolve_is_a_could_be_never_certain(source, expect):
    hits, _ = R.forbidden_in_code({"solution.py": source}, SORT_TOPK)
    assert hits and not any(h.certain for h in hits), [str(h) for h in hits]
    assert any(expect in h.how and h.how.startswith("could be torch.") for h in hits), [str(h) for h in hits]


def test_a_bare_forbidden_name_is_the_imported_function_not_the_answers_own():
    forbidden = ["chunk_kda", "fla.ops.kda"]
    own = "def chunk_kda(q, k):\n    return q\nclass M:\n    def chunk_kda(self):\n        return 1\ny = chunk_kda(1, 2)\n"
    assert R.forbidden_in_code({"s.py": own}, forbidden) == ([], [])
    hits, _ = R.forbidden_in_code({"s.py": "from fla.ops.kda import chunk_kda as ck\ny = ck(q, k)\n"}, forbidden)
    assert {(h.how, h.certain) for h in hits} == {("ck is chunk_kda", True), ("ck is fla.ops.kda", True)}


def test_gpu_needs():
    assert R.gpu_needs({"s.py": "import torch\ny = torch.relu(x)\n"}) == []
    assert "imports Triton" in R.gpu_needs({"s.py": "import triton\n"})[0]
    assert "names the device 'cuda'" in R.gpu_needs({"s.py": "import torch\nx = torch.ones(1, device='cuda')\n"})[0]


def test_formulas_and_peaks():
    assert R.eval_formula("M*K + (K/128)*N*2", {"M": 2, "K": 256, "N": 3}) == 2 * 256 + 2 * 3 * 2
    with pytest.raises(ValueError):
        R.eval_formula("__import__('os')", {})
    assert R.peak_fraction("compute", 2e12, None, 1000.0, None, 2.0) == pytest.approx(1.0)
    assert R.peak_fraction("memory", None, 2e9, 1.0, 2000.0, None) == pytest.approx(1.0)
    assert R.device_peak("NVIDIA H100 80GB HBM3", "fp8_e4m3")[1:] == (3350.0, 1979.0)
    assert R.device_peak("NVIDIA H100 PCIe", "bf16")[1:] == (2039.0, 756.0)
    assert R.tolerance(R.HARD, "bfloat16", 1e-4, 1e-4) == (1e-2, 1e-2)
    assert R.tolerance(R.HARD, "bfloat16", 1e-4, 1e-4, {"bfloat16": 0.2}) == (0.2, 0.2)
    assert R.tolerance(R.HARD, "bfloat16", 1e-4, 1e-4, {"bfloat16": 0.2}, {"bfloat16": {"atol": 5, "rtol": 0.1}}) == (5, 0.1)
    assert R.tolerance(R.KB, "float32", 1e-4, 1e-4) == (1e-4, 1e-4)
    assert R.tolerance(R.HARD, "bfloat16", 1e-4, 1e-4, {"torch.bfloat16": "5e-2"}) == (0.05, 0.05)  # 02_kda_cutlass's spelling


def test_the_decks_defaults_come_from_the_challenge():
    """KernelBench-Hard's defaults are the table the challenge holds (its correctness.py's),
    unknown dtypes taking its float32 entry; the harness's own table only where it holds none.
    KernelBench's tolerance is its precision's, whatever the output's dtype."""
    defaults = {"bfloat16": {"atol": 0.5, "rtol": 0.25}, "float32": {"atol": 3e-3, "rtol": 2e-3}}
    assert R.tolerance(R.HARD, "bfloat16", 1e-4, 1e-4, None, None, defaults) == (0.5, 0.25)
    assert R.tolerance(R.HARD, "int16", 1e-4, 1e-4, None, None, defaults) == (3e-3, 2e-3)
    assert R.tolerance(R.HARD, "bfloat16", 1e-4, 1e-4, {"bfloat16": 0.2}, None, defaults) == (0.2, 0.2)
    assert R.tolerance(R.HARD, "int64", 1e-4, 1e-4, None, None, {}) == (0.0, 0.0)
    # the case's entries over the problem's, as numeric_stress.tolerance_for_case merges them
    assert R.tolerance(R.HARD, "bfloat16", 1e-4, 1e-4, {"bfloat16": 0.2}, {"torch.bfloat16": 0.3}) == (0.3, 0.3)
    assert R.precision_dtype("fp32") == "float32" and R.precision_dtype("bf16") == "bfloat16"


def test_each_decks_comparison():
    torch = pytest.importorskip("torch", reason="the torch extra is not installed")
    inf = float("inf")
    ref, out = torch.tensor([1.0, inf]), torch.tensor([1.0, inf])
    # correctness.py fails any Inf in the answer's output; KernelBench's allclose takes Inf as close to Inf
    assert not R.compare(ref, out, 1e-4, 1e-4, R.HARD)[0] and R.compare(ref, out, 1e-4, 1e-4, R.KB)[0]
    assert not R.compare(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.1]), 1e-4, 1e-4, R.KB)[0]
    # KernelBench compares an index output as any other: allclose on the integers
    assert R.compare(torch.tensor([3, 7]), torch.tensor([3, 7]), 1e-4, 1e-4, R.KB)[0]
    assert not R.compare(torch.tensor([3, 7]), torch.tensor([3, 8]), 1e-4, 1e-4, R.KB)[0]


def test_an_index_output_is_judged_by_the_values_it_gathers():
    """Indices into rows with ties: any index of an equal value is right; an index of
    another value is not; out of range, or (benchtui's own rule) one index twice, neither."""
    torch = pytest.importorskip("torch", reason="the torch extra is not installed")
    x = torch.tensor([[5.0, 1.0, 5.0, 3.0], [2.0, 2.0, 0.0, 9.0]])
    values = torch.tensor([[5.0, 5.0], [9.0, 2.0]])
    assert R.gathered_indices(x, values, torch.tensor([[0, 2], [3, 0]]), -1, 1e-4, 1e-4)[0]
    assert R.gathered_indices(x, values, torch.tensor([[2, 0], [3, 1]]), -1, 1e-4, 1e-4)[0]  # ties broken the other way
    ok, msg = R.gathered_indices(x, values, torch.tensor([[0, 3], [3, 1]]), -1, 1e-4, 1e-4)
    assert not ok and msg.startswith("the input's values at the returned indices: 1/4 elements beyond")
    ok, msg = R.gathered_indices(x, values, torch.tensor([[0, 4], [3, 1]]), -1, 1e-4, 1e-4)
    assert not ok and msg == "indices out of range [0, 4] for a dimension of 4"
    twice = torch.tensor([[0, 0], [3, 1]])
    assert R.gathered_indices(x, values, twice, -1, 1e-4, 1e-4)[0]  # the deck's check.py lets it through
    assert R.gathered_indices(x, values, twice, -1, 1e-4, 1e-4, distinct=True) == (False, "1 row(s) name an index twice")


def test_kernelbench_trial_seeds_as_its_eval_draws_them():
    torch = pytest.importorskip("torch", reason="the torch extra is not installed")
    torch.manual_seed(42)
    expected = [torch.randint(0, 2**32 - 1, (1,)).item() for _ in range(3)]
    assert R.kernelbench_trial_seeds(42, 3) == expected


def test_tensors_cross_the_wire_bit_for_bit(tmp_path):
    torch = pytest.importorskip("torch", reason="the torch extra is not installed")
    from benchtui.runner.local import local_answer_process
    from benchtui.verify.module import tensors as T

    g = torch.Generator().manual_seed(1)
    big = torch.randn(4096, 4096, generator=g)  # 64 MB
    values = [big, big[:7, :5].to(torch.bfloat16), (big[:9] * 8).to(torch.float8_e4m3fn),
              big[:3].to(torch.float8_e5m2), (big[:4] * 100).to(torch.int8), big[:2].to(torch.float16),
              torch.arange(5, dtype=torch.int64), torch.zeros(0, 3, dtype=torch.bfloat16)]
    with local_answer_process(tmp_path) as (peer, _):
        back = peer.call_op("keep", T.encode_tree(values))
    out = T.decode_tree(back)
    for a, b in zip(values, out):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert torch.equal(a.view(torch.uint8) if a.numel() else a, b.view(torch.uint8) if b.numel() else b)
    with pytest.raises(ValueError):
        T.decode({T.TAG: "object", "shape": [1], "data": np.zeros(1, np.uint8)})


def test_gpu_runs_keep_each_answers_build_cache_keyed_by_its_hash(tmp_path, monkeypatch):
    from benchtui.runner.bundle import module_build_cache
    from benchtui.verify.module import host as module_host

    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "tmp"))
    deck, plain = tmp_path / "deck", tmp_path / "plain"
    for folder, text in ((deck, 'id = "deck"\n[module]\ndeck = "kernelbench"\n'), (plain, 'id = "plain"\n')):
        folder.mkdir()
        (folder / "challenge.toml").write_text(text)
    a, b = tmp_path / "a", tmp_path / "b"
    for folder, body in ((a, "x = 1\n"), (b, "x = 2\n")):
        folder.mkdir()
        (folder / "solution.py").write_text(body)
    first = module_build_cache(deck, a)
    assert first is not None and first.is_dir() and first.is_relative_to(tmp_path / "tmp")
    assert module_build_cache(deck, a) == first and module_build_cache(deck, b) != first
    assert module_build_cache(plain, a) is None
    monkeypatch.setenv("BENCHTUI_BUILD_CACHE", str(first))
    assert module_host.build_cache({"answer_hash": "ignored"}) == first
    assert (first / "torch_extensions").is_dir() and (first / "triton").is_dir()


def test_without_torch_a_deck_answer_is_skipped_with_the_extra_named(tmp_path, monkeypatch):
    import sys

    from benchtui.runner.local import run_local

    from tests.challenges import module_deck_kit as K

    K.write_challenge(tmp_path / "challenges", "kbh_fp8", "hard")
    answer = K.write_answers(tmp_path / "answers", {"right": K.HARD_RIGHT})["right"]
    monkeypatch.setitem(sys.modules, "torch", None)  # this checker without torch
    out = run_local("kbh_fp8", answer, challenges_dir=tmp_path / "challenges")
    checks = {c["name"]: c for c in out["checks"]}
    assert out["verdict"] == "skipped" and checks["module"]["verdict"] == "skipped"
    assert "benchtui[torch]" in checks["module"]["message"]
    assert checks["forbidden_ops"]["verdict"] == "pass"  # read from the code, torch or not


REPO = Path(__file__).resolve().parents[2]
RUNS = next((p for p in (base / "shared" / "kernelbench-hard" / "public" / "runs" / "h100" for base in (REPO.parent, REPO.parent.parent))
             if p.is_dir()), None)


@pytest.mark.skipif(RUNS is None, reason="no KernelBench-Hard deck beside the repository (shared/kernelbench-hard)")
def test_published_runs_read_as_the_harness_reads_them():
    grok = (RUNS / "20260709_040836_grok_grok-4.5_07_w4a16_gemm_solution.py.txt").read_text()
    needs = R.gpu_needs({"solution.py": grok})  # its .cu sidecar is appended: not Python as a whole
    assert needs and "read as text" in needs[0]
    hy3 = (RUNS / "20260707_121003_hy3-claude_tencent_hy3-preview_06_sonic_moe_swiglu_solution.py.txt").read_text()
    forbidden = ["torch.matmul", "torch.bmm", "torch.nn.functional.linear", "F.linear", "from sonic_moe", "import sonic_moe"]
    assert R.deck_grep(hy3, forbidden) == ["torch.matmul"]  # a comment: "avoids torch.matmul"; published as failed
    hits, unparsed = R.forbidden_in_code({"solution.py": hy3}, forbidden)
    assert unparsed == [] and not [h for h in hits if h.certain]
    # its torch.einsum runs the GEMM the deck forbids: a could-be the run-time trace settles, never the verdict
    assert {(h.line, h.forbidden) for h in hits} == {(line, f) for line in (47, 48)
                                                     for f in ("torch.matmul", "torch.nn.functional.linear", "F.linear")}
    assert R.gpu_needs({"solution.py": hy3}) == []  # plain torch: it runs on the CPU too


def test_code_that_feeds_itself_or_nests_deep_is_read_in_bounded_work():
    from benchtui.verify.module import receivers

    # twelve names, each given the sum of all the others in a loop: exponential work to read exactly
    names = [f"a{i}" for i in range(12)]
    body = [f"        {n} = x" for n in names] + ["        for _ in range(3):"]
    body += [f"            {n} = " + " + ".join(m for m in names if m != n) for n in names]
    source = "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n" + "\n".join(body) + "\n        return a0.sort()\n"
    tree = ast.parse(source)
    resolver = R._Resolver("s.py", tree)
    hits = resolver.hits(["torch.sort"])
    assert receivers.STEPS < resolver.kinds.steps < 2 * receivers.STEPS  # it stopped at its budget
    assert [h.forbidden for h in hits] == ["torch.sort"]  # certain or could be: found either way
    deep = "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        return (" + " + ".join(["x"] * 900) + ").sort()\n"
    assert [h.forbidden for h in R.forbidden_in_code({"s.py": deep}, ["torch.sort"])[0]] == ["torch.sort"]
    too_deep = "import torch\ny = (" + " + ".join(["x"] * 5000) + ").sort()\n"  # past the parser's own stack
    assert R.forbidden_in_code({"s.py": too_deep}, ["torch.sort"]) == ([], ["s.py"])


# -- the same op however it is reached, and its library routine through NumPy, SciPy, BLAS and C++ -----

TOPK_MATMUL = ["torch.topk", "torch.matmul", "torch.nn.functional.linear"]


@pytest.mark.parametrize("source, forbidden", [
    ("import torch\ny = torch._C._VariableFunctions.topk(x, 2)\n", "torch.topk"),
    ("import torch\ny = torch._VF.topk(x, 2)\n", "torch.topk"),
    ("import torch\ny = torch._ops.ops.aten.topk.default(x, 2)\n", "torch.topk"),
    ("from torch._C import _VariableFunctions as VF\ny = VF.topk(x, 2)\n", "torch.topk"),
    ("import torch\nVF = getattr(torch._C, '_Variable' + 'Functions')\ny = VF.topk(x, 2)\n", "torch.topk"),
    ("import torch\ny = torch._C.TensorBase.topk(x, 2)\n", "torch.topk"),
    ("import torch\ny = torch._C._VariableFunctions.matmul(a, b)\n", "torch.matmul"),
    ("import torch\ny = torch.Tensor.__matmul__(a, b)\n", "torch.matmul"),
    ("import torch\ny = torch._C._nn.linear(x, w)\n", "torch.nn.functional.linear"),
    ("import torch\ny = torch.ops.aten.linear.default(x, w)\n", "torch.nn.functional.linear"),
])
def test_the_same_op_through_torch_s_other_namespaces_is_the_op(source, forbidden):
    hits, _ = R.forbidden_in_code({"solution.py": source}, TOPK_MATMUL)
    assert [h.forbidden for h in hits if h.certain] == [forbidden], [str(h) for h in hits]


@pytest.mark.parametrize("source, expect", [
    ("import numpy as np\nimport torch\ndef f(x, w):\n    return torch.from_numpy(np.dot(x.numpy(), w.numpy()))\n",
     "np.dot is numpy.dot"),
    ("import torch\nclass M(torch.nn.Module):\n    def forward(self, x, w):\n        return torch.from_numpy(x.numpy() @ w.numpy())\n",
     "the @ operator on a NumPy array is a BLAS GEMM"),
    ("import torch\nclass M(torch.nn.Module):\n    def forward(self, x, w):\n        a = x.numpy()\n        return a.dot(w.numpy())\n",
     "NumPy's .dot() on a is a BLAS GEMM"),
    ("from numpy import matmul as mul\ny = mul(a, b)\n", "mul is numpy.matmul"),
    ("import numpy\ny = numpy.linalg.multi_dot([a, b, c])\n", "is numpy.multi_dot"),
    ("from scipy.linalg import blas\ny = blas.sgemm(1.0, a, b)\n", "is SciPy's BLAS sgemm"),
    ("import scipy.linalg.blas as B\ny = B.dgemm(1.0, a, b)\n", "is SciPy's BLAS dgemm"),
    ("import ctypes, ctypes.util\nlib = ctypes.CDLL(ctypes.util.find_library('openblas'))\nlib.cblas_sgemm(101, 111)\n",
     "calls the BLAS routine cblas_sgemm"),
    ("import ctypes\nlib = ctypes.CDLL('libblas.so.3')\nf = getattr(lib, 'sg' + 'emm_')\n", "names the BLAS routine sgemm_"),
])
def test_a_gemm_through_another_library_is_the_forbidden_gemm(source, expect):
    hits, _ = R.forbidden_in_code({"solution.py": source}, ["torch.matmul"])
    certain = [str(h) for h in hits if h.certain]
    assert any(expect in h for h in certain), [str(h) for h in hits]


CPP_MM = '''
#include <torch/extension.h>
// at::matmul would be the easy way; this comment is not code
torch::Tensor gemm(torch::Tensor a, torch::Tensor b) {
    return at::cpu::mm(a, b);
}
'''


@pytest.mark.parametrize("body, expect", [
    ("return at::cpu::mm(a, b);", "C++ calls at::cpu::mm, the same GEMM as torch.matmul"),
    ("return torch::matmul(a, b);", "C++ calls torch::matmul, torch.matmul"),
    ("return at::_ops::mm::call(a, b);", "C++ calls at::_ops::mm, the same GEMM as torch.matmul"),
    ("at::native::cpublas::gemm(t, t, m, n, k, 1.f, pa, m, pb, k, 0.f, pc, m);", "C++ calls at::native::cpublas::gemm"),
    ("cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, pa, m, pb, k, &zero, pc, m);",
     "C++ calls cuBLAS's cublasSgemm, the GEMM torch.matmul runs"),
    ("cublasLtMatmul(lt, desc, &one, pa, la, pb, lb, &zero, pc, lc, pc, lc, 0, 0, 0, 0);", "cuBLAS's cublasLtMatmul"),
    ("cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.f, pa, k, pb, n, 0.f, pc, n);",
     "C++ calls BLAS's cblas_sgemm"),
])
def test_cpp_sources_are_read_for_the_forbidden_routine(body, expect):
    cpp = CPP_MM.replace("return at::cpu::mm(a, b);", body)
    inline = f"from torch.utils.cpp_extension import load_inline\nSRC = '''{cpp}'''\next = load_inline('g', SRC)\n"
    hits, _ = R.forbidden_in_code({"solution.py": inline}, ["torch.matmul"])
    assert [h.line for h in hits if h.certain and expect in h.how] == [6], [str(h) for h in hits]
    hits, _ = R.forbidden_in_code({"solution.py": "import torch\n"}, ["torch.matmul"], {"csrc/gemm.cu": cpp})
    assert [(h.file, h.line) for h in hits if h.certain and expect in h.how] == [("csrc/gemm.cu", 5)], \
        [str(h) for h in hits]


def test_cpp_the_forbidden_routine_is_named_by_what_it_stands_for():
    # a comment is not a call; another routine is not the forbidden one
    assert R.native_hits("k.cu", "// at::cpu::mm is what we avoid\n/* cublasSgemm */\n", ["torch.matmul"]) == []
    assert R.native_hits("k.cu", "auto y = at::relu(x);\nauto s = at::softmax(x, 1);\n", ["torch.matmul"]) == []
    # a bf16 cuBLAS GEMM is not the FP8 one; with FP8 operand types it is
    bf16 = "cublasLtMatmul(lt, d, &a, A, la, B, lb, &b, C, lc, C, lc, 0, 0, 0, 0); // CUDA_R_16BF\n"
    assert R.native_hits("k.cu", bf16, ["torch._scaled_mm"]) == []
    fp8 = bf16.replace("// CUDA_R_16BF", "auto t = CUDA_R_8F_E4M3;")
    assert [h.forbidden for h in R.native_hits("k.cu", fp8, ["torch._scaled_mm"])] == ["torch._scaled_mm"]
    # a forbidden convolution is cuDNN's; a forbidden top-k is at::topk in any namespace
    conv = "cudnnConvolutionForward(h, &a, xd, x, wd, w, cd, algo, ws, wss, &b, yd, y);\n"
    assert [h.forbidden for h in R.native_hits("k.cu", conv, ["torch.nn.functional.conv2d"])] == ["torch.nn.functional.conv2d"]
    assert [h.how for h in R.native_hits("k.cpp", "auto r = at::cpu::topk(x, 4);\n", ["torch.topk"])] == [
        "C++ calls at::cpu::topk, torch.topk"]
    # names that are no GEMM, in Python: torch's settings, NumPy's other functions, the answer's own binding
    for source in ["import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\ntorch.set_float32_matmul_precision('high')\n",
                   "import numpy as np\na = np.ones(3)\nb = np.sort(a) + np.outer(a, a).sum()\n",
                   "from torch.utils.cpp_extension import load_inline\next = load_inline('g', 'void f() {}')\ny = ext.sgemm(a, b)\n",
                   "import numpy as np\nfrom my_lib import dot\ny = dot(a, b)\n"]:
        hits, unparsed = R.forbidden_in_code({"solution.py": source}, ["torch.matmul"])
        assert unparsed == [] and not [h for h in hits if h.certain], [str(h) for h in hits]


def test_another_torch_op_running_the_same_routine_is_a_could_be_the_trace_settles():
    source = "import torch\nclass M(torch.nn.Module):\n    def forward(self, x, w):\n        return torch.mm(x, w) + x.bmm(w)\n"
    hits, _ = R.forbidden_in_code({"solution.py": source}, ["torch.matmul"])
    assert hits and not [h for h in hits if h.certain]
    assert all("which the run-time trace counts as it" in h.how for h in hits), [str(h) for h in hits]
    einsum = "import numpy as np\ny = np.einsum('ij,jk->ik', a, b, optimize=True)\n"  # BLAS only when it optimises
    assert [h.certain for h in R.forbidden_in_code({"s.py": einsum}, ["torch.matmul"])[0]] == [False]


def test_native_sources_are_the_answer_s_cpp_and_cuda_files(tmp_path):
    (tmp_path / "csrc").mkdir()
    (tmp_path / "csrc" / "k.cu").write_text("at::mm(a, b);\n")
    (tmp_path / "k.h").write_text("#pragma once\n")
    (tmp_path / "solution.py").write_text("import torch\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "x.c").write_text("")
    assert sorted(R.native_sources(tmp_path)) == ["csrc/k.cu", "k.h"]
