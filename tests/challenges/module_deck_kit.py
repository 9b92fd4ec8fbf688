"""Small deck-shaped challenges for the PyTorch module harness, written by hand
as an imported deck's challenge folder looks (engine/verify/module/suite.py),
and pure-torch answers to them: a right one and the known ways to cheat."""
from __future__ import annotations

from pathlib import Path

from benchtui.decks.challenge import CONFORMANCE  # what an import writes

# KernelBench-Hard-shaped: fp8 x fp8 GEMM with a per-channel scale, bf16 out, as 01_fp8_gemm, small.
HARD_REFERENCE = '''import torch
import torch.nn as nn

E4M3_MAX = 448.0


class Model(nn.Module):
    def __init__(self, M, N, K):
        super().__init__()
        self.M, self.N, self.K = M, N, K
        w = torch.empty(N, K, dtype=torch.bfloat16)
        nn.init.normal_(w, std=0.02)
        s = (w.float().abs().amax(dim=1, keepdim=True) / E4M3_MAX).clamp(min=1e-12)
        self.register_buffer("weight", (w.float() / s).to(torch.float8_e4m3fn))
        self.register_buffer("weight_scale", s.squeeze(1).to(torch.float32))

    def forward(self, x):
        y = (x.to(torch.bfloat16) @ self.weight.to(torch.bfloat16).T).float()
        return (y * self.weight_scale[None, :]).to(torch.bfloat16)


M = 8
N = 16
K = 32


def get_inputs():
    return [(torch.rand(M, K) * 8 - 4).to(torch.float8_e4m3fn)]


def get_init_inputs():
    return [M, N, K]
'''

HARD_SHAPES = '''SHAPES = [
    {"M": 8, "N": 16, "K": 32},
    {"M": 3, "N": 8, "K": 17},
]
'''

HARD_TOML = '''id = "{cid}"
title = "FP8 e4m3 GEMM (small)"
difficulty = "HARD"
language = "python"
backends = ["cuda", "cpu"]
display_names = ["01_fp8_gemm"]

[thresholds]
timed_calls = 3
published_warmup = 1
published_calls = 3
build_timeout_s = 60

[requirements]
correct = "solution.Model matches reference.Model on every shape, seed and stress case"
no_forbidden_ops = "do not call torch._scaled_mm"

[module]
deck = "kernelbench-hard"
deck_title = "KernelBench-Hard"
deck_commit = "c7d9221"
problem = "01_fp8_gemm"
reference = "reference.py"
shapes = "shapes.py"
answer_file = "solution.py"
answer_class = "Model"
weights = "load_state_dict"
seeds = [42, 123, 456]
atol = 1e-4
rtol = 1e-4
forbidden = ["torch._scaled_mm", "torch.ops.aten._scaled_mm"]
num_correct_trials = 3
num_perf_trials = 30
flops_formula = "2 * M * N * K"
bytes_formula = "M*K + K*N + M*N*2"
regime = "compute"
precision = "fp8_e4m3"

[module.tolerance]
bfloat16 = 0.05

[module.peak]
hardware = "H100"
bandwidth_gbps = 2039.0
tflops = 1513.0

[[module.stress]]
name = "large_input"
input_scales = {{ "0" = 4.0 }}
tolerance = {{ bfloat16 = {{ atol = 0.5, rtol = 0.05 }} }}

[[module.stress]]
name = "small_weight"
state_scales = {{ weight = 0.01 }}
tolerance = {{ bfloat16 = {{ atol = 3e-3, rtol = 0.05 }} }}
'''

# KernelBench-shaped (level 2 style: a Linear then a ReLU), small; ModelNew with seeded weights.
KB_REFERENCE = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.relu(self.gemm(x))


batch_size = 4
in_features = 24
out_features = 12


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
'''

KB_TOML = '''id = "{cid}"
title = "Gemm_ReLU (small)"
difficulty = "MEDIUM"
language = "python"
backends = ["cuda", "cpu"]

[thresholds]
timed_calls = 3
published_warmup = 1
published_calls = 3
build_timeout_s = 60

[module]
deck = "kernelbench"
deck_title = "KernelBench"
deck_commit = "423217d"
problem = "level2/small_Gemm_ReLU"
reference = "reference.py"
answer_file = "solution.py"
answer_class = "ModelNew"
weights = "seeded"
seeds = [42]
atol = 1e-4
rtol = 1e-4
forbidden = []
num_correct_trials = 5
num_perf_trials = 100
regime = "compute"
precision = "fp32"
'''

HARD_RIGHT = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, M, N, K):
        super().__init__()
        self.register_buffer("weight", torch.zeros(N, K, dtype=torch.float8_e4m3fn))
        self.register_buffer("weight_scale", torch.zeros(N, dtype=torch.float32))

    def forward(self, x):
        y = torch.einsum("mk,nk->mn", x.to(torch.bfloat16), self.weight.to(torch.bfloat16)).float()
        return (y * self.weight_scale[None, :]).to(torch.bfloat16)
'''

_HEAD, _BODY = HARD_RIGHT.split("    def forward(self, x):\n")

HARD_ANSWERS = {
    "right": HARD_RIGHT,
    # memoises on the input's identity, pointer and version: stale once the storage is rewritten in place
    "memoise": _HEAD + '''        self._memo = {}

    def forward(self, x):
        key = (id(x), x.data_ptr(), x._version)
        if key not in self._memo:
''' + _BODY.replace("        y =", "            y =").replace("        return (", "            self._memo[key] = (")
    + "        return self._memo[key]\n",
    "mutate_input": _HEAD + '''    def forward(self, x):
        y = torch.einsum("mk,nk->mn", x.to(torch.bfloat16), self.weight.to(torch.bfloat16)).float()
        x.copy_(torch.zeros_like(x))
        return (y * self.weight_scale[None, :]).to(torch.bfloat16)
''',
    "wrong_dtype": HARD_RIGHT.replace(".to(torch.bfloat16)\n", ".float()\n"),
    "subclass": "class Lying(__import__('torch').Tensor):\n    pass\n\n\n" + HARD_RIGHT.replace(
        "return (y * self.weight_scale[None, :]).to(torch.bfloat16)",
        "return (y * self.weight_scale[None, :]).to(torch.bfloat16).as_subclass(Lying)"),
    "exit_early": "import sys\nprint('PASS')\nsys.exit(0)\n" + HARD_RIGHT,
    "print_pass": _HEAD + '''    def forward(self, x):
        print("PASS")
        return torch.zeros(x.shape[0], self.weight.shape[0], dtype=torch.bfloat16)
''',
    "hidden_forbidden": HARD_RIGHT.replace(
        "import torch.nn as nn\n", "import torch.nn as nn\n\nfast = getattr(torch, '_scaled' + '_mm')\n"),
    # right, and names the forbidden op only in a comment: the deck's text search fails it, benchtui's code search does not
    "forbidden_in_comment": HARD_RIGHT.replace("import torch.nn as nn\n", "import torch.nn as nn\n\n# torch._scaled_mm is not used\n"),
    # right, but caches on the inputs' content: fast only when the same inputs come back (the deck's timing loop)
    "content_cache": "import time\n" + _HEAD + """        self._cache = {}

    def forward(self, x):
        key = x.view(torch.uint8).numpy().tobytes() + self.weight.view(torch.uint8).numpy().tobytes()
        if key not in self._cache:
            time.sleep(0.03)  # well above what a busy machine's wait for a CPU adds to a call
""" + _BODY.replace("        y =", "            y =").replace("        return (", "            self._cache[key] = (")
    + "        return self._cache[key].clone()\n",
    # does its work while the harness writes the inputs (it patches the host in its own process) and
    # returns the result ready-made: fast as a call, slow as a cycle
    "work_in_staging": "import sys\nimport time\n" + HARD_RIGHT + """

_host = sys.modules["benchtui.verify.module.host"].ModuleHost
_stage, _forward = _host.stage, Model.forward


def _stage_and_work(self, *args, **kwargs):
    staged = _stage(self, *args, **kwargs)
    time.sleep(0.03)
    self._model.ready = _forward(self._model, *self._inputs)
    return staged


_host.stage = _stage_and_work
Model.forward = lambda self, x: self.ready
""",
    # right, but slows the fetch of its output rather than its call
    "work_in_fetch": "import sys\nimport time\n" + HARD_RIGHT + """

_host = sys.modules["benchtui.verify.module.host"].ModuleHost
_output = _host.output


def _slow_output(self):
    time.sleep(0.03)
    return _output(self)


_host.output = _slow_output
""",
    # caches its result on a probe of the input (its first row): right on inputs drawn afresh,
    # stale when only the rest of the input changes (the deck's property stress)
    "probe_cache": _HEAD + """        self._cache = {}

    def forward(self, x):
        key = x[0].view(torch.uint8).numpy().tobytes() + self.weight.view(torch.uint8).numpy().tobytes()
        if key not in self._cache:
""" + _BODY.replace("        y =", "            y =").replace("        return (", "            self._cache[key] = (")
    + "        return self._cache[key].clone()\n",
    # declares no weights: load_state_dict(strict=True) refuses the reference's (the deck's identity-kernel guard)
    "no_weights": "import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    def __init__(self, M, N, K):\n"
                  "        super().__init__()\n        self.N = N\n\n    def forward(self, x):\n"
                  "        return torch.zeros(x.shape[0], self.N, dtype=torch.bfloat16)\n",
    "import_error": "import torch\nraise RuntimeError('no kernel here')\n",
    # fills its output once and returns that buffer on every call after, never written again
    "stale_buffer": _HEAD + """        self._out = None

    def forward(self, x):
        if self._out is None:
""" + _BODY.replace("        y =", "            y =").replace("        return (", "            self._out = (")
    + "        return self._out\n",
    # right at the first shape (M = 8), zeros at the second (M = 3)
    "wrong_at_shape1": HARD_RIGHT.replace("    def forward(self, x):\n", "    def forward(self, x):\n"
                                          "        if x.shape[0] == 3:\n"
                                          "            return torch.zeros(3, self.weight.shape[0], dtype=torch.bfloat16)\n"),
    "slow_build": "import time\ntime.sleep(30)\n" + HARD_RIGHT,
    "triton": "import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef k(x_ptr):\n    tl.load(x_ptr)\n\n\n" + HARD_RIGHT,
    "inline_cuda": "from torch.utils.cpp_extension import load_inline\n\nmod = load_inline(name='g', cpp_sources='', "
                   "cuda_sources='__global__ void g() {}', functions=[])\n\n\n" + HARD_RIGHT,
}

# The deck's property stress as a deck ships it (src/eval/property_stress.py, beside its
# src/__init__.py), small: the fixed case keeps the first row of x and scales the rest, as
# the deck's keeps a first-token probe nominal; generated cases vary the rows and the scale.
PROPERTY_STRESS = '''from dataclasses import dataclass

import torch
from hypothesis import Phase, example, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st


@dataclass(frozen=True)
class RowsCase:
    first_row: int
    scale: int


_CANONICAL_CASES = {"01_fp8_gemm": RowsCase(first_row=1, scale=8)}


def property_shape_index(problem_name):
    return {"01_fp8_gemm": 0}.get(problem_name)


def tolerance_for_property(problem_name, base):
    return base


def canonical_property_case(problem_name):
    return _CANONICAL_CASES[problem_name]


def generate_property_cases(problem_name, *, seed=None, max_examples=None):
    cases = []

    @hypothesis_seed(seed or 0)
    @settings(max_examples=max_examples or 2, deadline=None, database=None, phases=(Phase.explicit, Phase.generate))
    @example(case=_CANONICAL_CASES[problem_name])
    @given(case=st.builds(RowsCase, first_row=st.integers(1, 6), scale=st.integers(2, 10)))
    def plan(case):
        cases.append(case)

    plan()
    return seed, tuple(cases)


def apply_property_case(problem_name, inputs, case):
    x = inputs[0].clone()
    x[case.first_row:] = (x[case.first_row:].float() * case.scale).clamp(-448, 448).to(x.dtype)
    return [x]
'''

KB_RIGHT = '''import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.clamp_min(torch.addmm(self.gemm.bias, x, self.gemm.weight.t()), 0.0)
'''

KB_ANSWERS = {
    "right": KB_RIGHT,
    # draws its weights in another order than the reference: seeded construction gives other weights
    "other_weights": KB_RIGHT.replace("        self.gemm = nn.Linear(in_features, out_features)\n",
                                      "        torch.rand(1)\n        self.gemm = nn.Linear(in_features, out_features)\n"),
}


# KernelBench-Hard-shaped top-k (as its 05_topk_bitonic, small): (values, indices) with ties in
# every row (small integers), so several index sets are right; check.py's form of the comparison:
# the input gathered at the answer's indices against the reference's values.
TOPK_REFERENCE = """import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.k = k

    def forward(self, x):
        return torch.topk(x, self.k, dim=-1, largest=True, sorted=True)


batch = 4
n = 16
k = 5


def get_inputs():
    return [torch.randint(0, 6, (batch, n)).float()]


def get_init_inputs():
    return [k]
"""

TOPK_SHAPES = 'SHAPES = [\n    {"batch": 4, "n": 16, "k": 5},\n    {"batch": 3, "n": 9, "k": 1},\n]\n'

# the gather-and-compare of a top-k check.py, in the form the import reads (engine/decks/index_rule.py)
TOPK_CHECK = """import torch
from src.eval.correctness import check_correctness


def main():
    import reference
    import solution
    for seed in (42, 123, 456):
        torch.manual_seed(seed)
        inputs = reference.get_inputs()
        ref_values, ref_indices = ref_model(*inputs)
        sol_out = sol_model(*inputs)
        sol_values, sol_indices = sol_out
        ok, msg = check_correctness(ref_values.float(), sol_values.float(), dtype=torch.float32, override=tol)
        x = inputs[0]
        sol_idx_long = sol_indices.to(torch.int64)
        gathered = torch.gather(x, dim=-1, index=sol_idx_long)
        ok, msg = check_correctness(ref_values.float(), gathered.float(), dtype=torch.float32, override=tol)
"""

TOPK_TOML = """id = "{cid}"
title = "TopK (small)"
difficulty = "HARD"
language = "python"
backends = ["cuda", "cpu"]

[thresholds]
timed_calls = 3
published_warmup = 1
published_calls = 3
build_timeout_s = 60

[module]
deck = "kernelbench-hard"
deck_title = "KernelBench-Hard"
problem = "05_topk_bitonic"
reference = "reference.py"
shapes = "shapes.py"
answer_file = "solution.py"
answer_class = "Model"
weights = "load_state_dict"
seeds = [42, 123, 456]
atol = 1e-4
rtol = 1e-4
forbidden = []
num_correct_trials = 3
num_perf_trials = 30
bytes_formula = "batch * n * 4 + batch * k * (4 + 8)"
regime = "memory"
precision = "fp32"

[module.tolerance]
float32 = 1e-4

[module.default_tolerance]
float32 = {{ atol = 1e-4, rtol = 1e-4 }}
int64 = {{ atol = 0, rtol = 0 }}

[module.indices]
output = 1
values = 0
input = 0
dim = -1
dtype = "float32"

[module.peak]
hardware = "H100"
bandwidth_gbps = 2039.0
tflops = 51.0
"""

_TOPK_HEAD = """import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.k = k

"""

TOPK_ANSWERS = {
    "right": _TOPK_HEAD + "    def forward(self, x):\n        return torch.topk(x, self.k, dim=-1)\n",
    # right values, and of equal values the one furthest right first: another tie-break than torch.topk's
    "other_ties": _TOPK_HEAD + """    def forward(self, x):
        n = x.shape[-1]
        key = x.double() * (n + 1) + torch.arange(n, dtype=torch.float64)
        idx = torch.topk(key, self.k, dim=-1).indices
        return torch.gather(x, -1, idx), idx
""",
    # right values, indices one place off: the input's values there are not the values returned
    "wrong_indices": _TOPK_HEAD + """    def forward(self, x):
        values, idx = torch.topk(x, self.k, dim=-1)
        return values, (idx + 1) % x.shape[-1]
""",
}


def write_challenge(root: Path, cid: str, kind: str, build_timeout_s: int = 60, properties: bool = False) -> Path:
    folder = root / cid
    folder.mkdir(parents=True)
    (folder / "conformance.py").write_text(CONFORMANCE)
    (folder / "PROMPT.md").write_text(f"# {cid}\n\nWrite solution.py.\n")
    if kind == "hard":
        (folder / "reference.py").write_text(HARD_REFERENCE)
        (folder / "shapes.py").write_text(HARD_SHAPES)
        toml = HARD_TOML.format(cid=cid).replace("build_timeout_s = 60", f"build_timeout_s = {build_timeout_s}")
        if properties:
            toml += ('\n[module.property_stress]\npath = "deck_eval"\nmodule = "src.eval.property_stress"\n'
                     'problem = "01_fp8_gemm"\n')
            (folder / "deck_eval/src/eval").mkdir(parents=True)
            (folder / "deck_eval/src/__init__.py").write_text("")
            (folder / "deck_eval/src/eval/__init__.py").write_text("")
            (folder / "deck_eval/src/eval/property_stress.py").write_text(PROPERTY_STRESS)
        (folder / "challenge.toml").write_text(toml)
    elif kind == "topk":
        (folder / "reference.py").write_text(TOPK_REFERENCE)
        (folder / "shapes.py").write_text(TOPK_SHAPES)
        (folder / "challenge.toml").write_text(TOPK_TOML.format(cid=cid))
    else:
        (folder / "reference.py").write_text(KB_REFERENCE)
        (folder / "challenge.toml").write_text(KB_TOML.format(cid=cid))
    return folder


def write_answers(root: Path, answers: dict[str, str]) -> dict[str, Path]:
    out = {}
    for name, source in answers.items():
        folder = root / name
        folder.mkdir(parents=True)
        (folder / "solution.py").write_text(source)
        out[name] = folder
    return out


# Answers that rewrite benchtui's host in their own process to bend a verdict or a figure
# (engine/verify/module/host.py is theirs to patch there): each must come out as an error or
# a fail, never as a pass or a better time.
def _says_dtype(dtype: str) -> str:
    """The tail of an answer that rewrites the host's facts in its own process to say every
    output is ``dtype``."""
    return f'''

import sys  # noqa: E402

_host = sys.modules["benchtui.verify.module.host"].ModuleHost
_output = _host.output


def _says_dtype(self):
    out = _output(self)
    for fact in out["facts"]:
        fact["dtype"] = "{dtype}"
    return out


_host.output = _says_dtype
'''


_PATCH = "import sys\n" + HARD_RIGHT + '\n\n_host = sys.modules["benchtui.verify.module.host"].ModuleHost\n'

TRUST_ATTACKS = {
    # the cycle returns at once with a lazy object: the staging, the call and the output's
    # fetch would run only when the checker reads the reply, after its clock stopped
    "lazy_cycle": _PATCH + '''_cycle = _host.cycle


class Lazy:
    def __init__(self, host, args):
        self.host, self.args, self.done = host, args, None

    def __getitem__(self, key):
        if self.done is None:
            self.done = _cycle(self.host, *self.args)
        return self.done[key]

    def get(self, key, default=None):
        return self[key]


_host.cycle = lambda self, *args, **kwargs: Lazy(self, args)
''',
    # honest for the 18 verified calls of shape 0's seeds, lazy from the first timed call on
    "lazy_when_timed": _PATCH + '''_cycle = _host.cycle
_served = [0]


class Lazy:
    def __init__(self, host, args):
        self.host, self.args, self.done = host, args, None

    def __getitem__(self, key):
        if self.done is None:
            self.done = _cycle(self.host, *self.args)
        return self.done[key]


def _later(self, *args, **kwargs):
    _served[0] += 1
    return _cycle(self, *args, **kwargs) if _served[0] <= 18 else Lazy(self, args)


_host.cycle = _later
''',
    # a handle deeper in the reply: the output's values as a list subclass, read item by item later
    "lazy_values": _PATCH + '''_output = _host.output


class Later(list):
    pass


def _later(self):
    out = _output(self)
    out["values"] = Later(out["values"])
    return out


_host.output = _later
''',
    # a reply past what the reference's outputs take: 64 MiB of bytes beside the right output
    "huge_reply": _PATCH + '''import numpy as np

_output = _host.output


def _huge(self):
    out = _output(self)
    out["container"] = np.zeros(64 << 20, dtype=np.uint8)
    return out


_host.output = _huge
''',
    # the bfloat16 problem answered in float32, with the facts rewritten to say bfloat16
    "forged_dtype": HARD_RIGHT.replace(".to(torch.bfloat16)\n", ".float()\n") + _says_dtype("bfloat16"),
    # runs every call untraced: its replies to traced calls carry no record of their ops
    "untraced": _PATCH + '''_cycle = _host.cycle
_host.cycle = lambda self, slot=0, trace=False: _cycle(self, slot, False)
''',
    # writes zeros into its input, and says it changed nothing
    "hidden_in_place": "import sys\n" + HARD_ANSWERS["mutate_input"] + '''

_host = sys.modules["benchtui.verify.module.host"].ModuleHost
_host.inputs_changed = lambda self: []
''',
    # returns its first output for every later call, and calls its module on copies of the
    # inputs (new pointers each call), so the staging is not in place in its process
    "stale_on_copies": _HEAD + '''        self._first = None

    def forward(self, x):
        if self._first is None:
            y = torch.einsum("mk,nk->mn", x.to(torch.bfloat16), self.weight.to(torch.bfloat16)).float()
            self._first = (y * self.weight_scale[None, :]).to(torch.bfloat16)
        return self._first.clone()


import sys  # noqa: E402

_host = sys.modules["benchtui.verify.module.host"].ModuleHost
_stage = _host.stage


def _copies(self, *args, **kwargs):
    staged = _stage(self, *args, **kwargs)
    self._inputs = [t.clone() for t in self._inputs]
    return {**staged, "pointers": [t.data_ptr() for t in self._inputs]}


_host.stage = _copies
''',
}

# KernelBench-shaped, float32: answered in float64 with the facts rewritten to say float32
KB_FORGED_DTYPE = KB_RIGHT.replace("return torch.clamp_min(torch.addmm(self.gemm.bias, x, self.gemm.weight.t()), 0.0)",
                                   "return torch.clamp_min(torch.addmm(self.gemm.bias, x, self.gemm.weight.t()), 0.0)"
                                   ".double()") + _says_dtype("float32")


def sleeper(ms: float) -> str:
    """A right KernelBench answer that spends ``ms`` a call (sleeping), for timing figures."""
    return KB_RIGHT.replace("import torch\n", "import time\n\nimport torch\n", 1).replace(
        "    def forward(self, x):\n", f"    def forward(self, x):\n        time.sleep({ms / 1e3!r})\n", 1)


def precomputer(ms: float) -> str:
    """A right KernelBench answer whose forward costs ``ms`` (sleeping), with a thread of its
    own process that watches the pages the host reads its inputs from (found by walking the
    process's objects; nothing of benchtui's is patched) and computes each slot's output,
    in a thread per new input, as soon as its values appear there. Its forward returns that
    output if it is ready (or waits for it if it is under way). Inputs written before the
    clock starts reach it early; inputs handed over inside the window do not."""
    return f'''import gc
import threading
import time

import torch
import torch.nn as nn

COST_S = {ms / 1e3!r}


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self._made = {{}}  # an input's bytes -> (done event, [output])
        self._lock = threading.Lock()
        threading.Thread(target=self._watch, daemon=True).start()

    def _compute(self, x):
        time.sleep(COST_S)
        with torch.no_grad():
            return torch.clamp_min(torch.addmm(self.gemm.bias, x, self.gemm.weight.t()), 0.0)

    def _start(self, key, x):
        with self._lock:
            if key in self._made:
                return self._made[key]
            entry = self._made[key] = (threading.Event(), [])

        def work():
            entry[1].append(self._compute(x))
            entry[0].set()

        threading.Thread(target=work, daemon=True).start()
        return entry

    def _watch(self):
        host = None
        while host is None:
            host = next((o for o in gc.get_objects() if type(o).__name__ == "ModuleHost"), None)
            time.sleep(0.001)
        while True:
            for pages, _ in list(host._slots.values()):
                x = pages[0]
                if isinstance(x, torch.Tensor):
                    key = x.numpy().tobytes()
                    if key not in self._made:
                        self._start(key, x.clone())
            time.sleep(0.0002)

    def forward(self, x):
        done, out = self._start(x.numpy().tobytes(), x.clone())
        done.wait()
        return out[0].clone()
'''


def off_clock_worker(ms: float) -> str:
    """A right KernelBench answer whose forward costs ``ms`` (sleeping), with a thread of its
    own process that works (hashing, the GIL let go) whenever no forward is running: between
    the checker's calls, where no clock of the checker's runs."""
    return f'''import hashlib
import threading
import time

import torch
import torch.nn as nn

BLOCK = bytes(1 << 20)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self._in_call = threading.Event()
        threading.Thread(target=self._between_calls, daemon=True).start()

    def _between_calls(self):
        while True:
            if self._in_call.is_set():
                time.sleep(0.0005)
            else:
                hashlib.sha256(BLOCK).digest()

    def forward(self, x):
        self._in_call.set()
        try:
            time.sleep({ms / 1e3!r})
            return torch.clamp_min(torch.addmm(self.gemm.bias, x, self.gemm.weight.t()), 0.0)
        finally:
            self._in_call.clear()
'''


# right (5 ms a call), but its host's own clock says each call took 50 ms more than it did
OWN_TIME_INFLATED = "import sys\n" + sleeper(5.0) + '''

_host = sys.modules["benchtui.verify.module.host"].ModuleHost
_run = _host.run
_host.run = lambda self: _run(self) + 50.0
'''


# Answers that call the forbidden FP8 GEMM where the syntax tree cannot see it (its name built
# at run time) and past the torch-function layer: the dispatcher trace must name it.
_SCALED = '''import torch
import torch.nn as nn

NAME = "".join(reversed("mm_delacs_"))  # no constant string the syntax-tree rule can fold


def fp8_gemm(op, x, weight, scale):
    one = torch.ones((), dtype=torch.float32)
    y = op(x, weight.t(), scale_a=one, scale_b=one, out_dtype=torch.float32)
    return (y * scale[None, :]).to(torch.bfloat16)


def honest(x, weight, scale):
    y = torch.einsum("mk,nk->mn", x.to(torch.bfloat16), weight.to(torch.bfloat16)).float()
    return (y * scale[None, :]).to(torch.bfloat16)
'''
_SCALED_HEAD = _SCALED + _HEAD.split("import torch.nn as nn\n", 1)[1]

FORBIDDEN_ATTACKS = {
    # the torch-function layer switched off around the call
    "disable_torch_function": _SCALED_HEAD + '''    def forward(self, x):
        with torch._C.DisableTorchFunction():
            return fp8_gemm(getattr(torch, NAME), x, self.weight, self.weight_scale)
''',
    # TorchScript compiled at run time from a string
    "torchscript": _SCALED_HEAD.replace("\n\ndef fp8_gemm", '''
SCRIPT = torch.jit.CompilationUnit(
    "def f(a, b, s):\\n    return torch." + NAME + "(a, b, scale_a=s, scale_b=s, out_dtype=torch.float32)\\n")


def fp8_gemm''') + '''    def forward(self, x):
        one = torch.ones((), dtype=torch.float32)
        y = SCRIPT.f(x, self.weight.t(), one)
        return (y * self.weight_scale[None, :]).to(torch.bfloat16)
''',
    # honest whenever a torch function mode is active (the old trace), the forbidden op otherwise
    "detects_function_mode": _SCALED_HEAD + '''    def forward(self, x):
        from torch.overrides import _get_current_function_mode_stack

        if torch._C._is_torch_function_mode_enabled() or _get_current_function_mode_stack():
            return honest(x, self.weight, self.weight_scale)
        return fp8_gemm(getattr(torch, NAME), x, self.weight, self.weight_scale)
''',
    # the aten op itself
    "aten_op": _SCALED_HEAD + '''    def forward(self, x):
        return fp8_gemm(getattr(torch.ops.aten, NAME).default, x, self.weight, self.weight_scale)
''',
    # torch's C binding of the op, under another module's name
    "variable_functions": _SCALED_HEAD + '''    def forward(self, x):
        return fp8_gemm(getattr(torch._C._VariableFunctions, NAME), x, self.weight, self.weight_scale)
''',
    # the forbidden op on one call in five only
    "some_calls": _SCALED_HEAD.replace("    def __init__(self, M, N, K):\n        super().__init__()\n",
                                       "    def __init__(self, M, N, K):\n        super().__init__()\n"
                                       "        self.calls = 0\n") + '''    def forward(self, x):
        self.calls += 1
        if self.calls % 5 == 4:
            return fp8_gemm(getattr(torch, NAME), x, self.weight, self.weight_scale)
        return honest(x, self.weight, self.weight_scale)
''',
    # the forbidden op only on calls past the checker's first 18 of a build (its seeds' calls):
    # on timed calls, and on the untimed ones slipped between them
    "when_timed": _SCALED_HEAD.replace("    def __init__(self, M, N, K):\n        super().__init__()\n",
                                       "    def __init__(self, M, N, K):\n        super().__init__()\n"
                                       "        self.calls = 0\n") + '''    def forward(self, x):
        self.calls += 1
        if self.calls > 18:
            return fp8_gemm(getattr(torch, NAME), x, self.weight, self.weight_scale)
        return honest(x, self.weight, self.weight_scale)
''',
    # the forbidden op run by a worker thread: the dispatch mode watches the calling thread only
    "worker_thread": _SCALED_HEAD + '''    def forward(self, x):
        import threading

        out = []
        worker = threading.Thread(target=lambda: out.append(
            fp8_gemm(getattr(torch, NAME), x, self.weight, self.weight_scale)))
        worker.start()
        worker.join()
        return out[0]
''',
    # the forbidden op inside a custom op's Python body: the dispatch mode sees only the custom op
    "custom_op": _SCALED + '''

@torch.library.custom_op("answer::gemm", mutates_args=())
def gemm(x: torch.Tensor, weight: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    return fp8_gemm(getattr(torch, NAME), x, weight, scale)
''' + _HEAD.split("import torch.nn as nn\n", 1)[1] + '''    def forward(self, x):
        return gemm(x, self.weight, self.weight_scale)
''',
}
