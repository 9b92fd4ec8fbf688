"""Small decks made by hand, in the two layouts the importer reads (KernelBench-Hard
and KernelBench), so the importer's tests run without the published decks. Each
holds the oddities a real deck has, one of each:

KernelBench-Hard (``hard_deck``): two problems; two runs of one cell (the
leaderboard counts the later); a run with no result file (only the leaderboard's
figures); a run whose deck says it had no answer; an annotation of a run measured
on an H100 SXM against the deck's H100 PCIe peak; an annotation of an h100 run
whose run file the deck lacks; an annotation of another GPU's run; an ABOUT.md
naming the commit as "owner/repo at <sha>". ``without`` leaves parts out
(``"src"``, ``"src/eval/numeric_stress.py"``, ...).

KernelBench (``kernelbench_deck``): two problems of level 1; run ``demo`` with two
samples of problem 1 and a kernel with no result in eval_results.json.

``conflicting_answer`` puts an answer of one's own where the deck's would go.

``cli`` runs a benchtui command as the tests of decks read it; ``scanned_workbench``
imports a KernelBench-Hard deck and scans it, as the dashboard finds it.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from benchtui.cli import main
from benchtui.decks import kernelbench_hard
from benchtui.decks.importer import import_deck
from benchtui.store.database import Store
from benchtui.workbench.layout import Workbench, find_workbench
from benchtui.workbench.scan import scan_workbench

HARD_COMMIT = "0a1b2c3"
KB_COMMIT = "4d5e6f7"
GPU = "h100"

REFERENCE = '''"""Tiny reference: y = x * {k}."""
import torch
import torch.nn as nn

N = 8


class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.n = n

    def forward(self, x):
        return x * {k}


def get_inputs():
    return [torch.randn(N)]


def get_init_inputs():
    return [N]
'''
SOLUTION = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.n = n

    def forward(self, x):
        # {tag}
        return x * {k}
'''
# right on the nominal inputs, wrong on the deck's large_input stress case (inputs x64)
CLAMPED = SOLUTION.replace("return x * {k}", "return x.clamp(-20.0, 20.0) * {k}")
PROBLEM_YAML = """name: {key}
display_name: "{title}"
precision: fp32
regime: memory
flops_formula: "N"
bytes_formula: "N * 8"
hardware: [H100]
peak_tflops_key: fp32
tolerance:
  float32: 0.001
forbidden:
  - "torch.matmul"
num_correct_trials: 3
num_perf_trials: 5
"""
CHECK = "import torch\n\nfor seed in (7, 8):\n    torch.manual_seed(seed)\n"
PROMPT = ("Write a fast kernel for {title}. The final answer has to be in solution.py with the same Model, "
          "get_inputs, and get_init_inputs interface as reference.py. Do not call torch.matmul. "
          "If `python check.py` hasn't printed PASS, you're not done.\n")
CORRECTNESS = '''import torch

DEFAULT_TOLERANCE = {
    torch.float32: {"atol": 1e-4, "rtol": 1e-4},
    torch.bfloat16: {"atol": 1e-2, "rtol": 1e-2},
}
'''
NUMERIC_STRESS = '''class NumericStressCase:
    def __init__(self, name, input_scales=None, state_scales=None, tolerance=None):
        self.name = name


_CASES = {
    "01_tiny_double": (NumericStressCase("large_input", input_scales={0: 64.0}),),
}
'''
# the deck's property stress for problem 01: imports src.eval, whose __init__.py imports
# correctness.py and numeric_stress.py (as the published deck's does), so either one missing
# leaves the property stress unable to run
PROPERTY_STRESS = '''from src.eval.correctness import DEFAULT_TOLERANCE

_CANONICAL_CASES = {
    "01_tiny_double": "negated",
}


def property_shape_index(problem):
    return 0


def tolerance_for_property(problem, base):
    return base


def canonical_property_case(problem):
    return _CANONICAL_CASES[problem]


def generate_property_cases(problem, seed=None):
    return None, ["halved"]


def apply_property_case(problem, inputs, case):
    x = inputs[0]
    return [-x] if case == "negated" else [x * 0.5]
'''
EVAL_INIT = "from src.eval.correctness import DEFAULT_TOLERANCE\nfrom src.eval.numeric_stress import NumericStressCase\n"
HARDWARE_H100 = '''class HardwareTarget:
    def __init__(self, **kw):
        self.__dict__.update(kw)


H100 = HardwareTarget(
    name="NVIDIA H100 PCIe",
    peak_bandwidth_gb_s=2039.0,
    peak_tflops_dense={"fp32": 51.0},
)
'''
HARDWARE_INIT = "from src.hardware.h100 import H100\n\nTARGETS = {\n    \"H100\": H100,\n}\n"

PROBLEMS = {"01_tiny_double": ("Tiny double", 2), "02_tiny_triple": ("Tiny triple", 3)}
# run id -> (problem, harness, model, correct, peak_fraction, has a result file)
RUNS = {
    "20260101_000000_codex_gpt-9_01_tiny_double": ("01_tiny_double", "codex", "gpt-9", True, 0.5, True),
    # a second run of the same cell, the one the leaderboard counts
    "20260102_000000_codex_gpt-9_01_tiny_double": ("01_tiny_double", "codex", "gpt-9", True, 0.6, True),
    "20260101_000000_codex_gpt-9_02_tiny_triple": ("02_tiny_triple", "codex", "gpt-9", False, None, True),
    # no result file: only the leaderboard's figures
    "20260101_000000_claude_opus-9_01_tiny_double": ("01_tiny_double", "claude", "opus-9", True, 0.4, False),
    "20260101_000000_claude_opus-9_02_tiny_triple": ("02_tiny_triple", "claude", "opus-9", True, 0.3, True),
}
NO_ANSWER_RUN = "20260101_000000_grok_grok-9_02_tiny_triple"  # the deck says it had no answer
SXM_RUN = "20260101_000000_claude_opus-9_02_tiny_triple"      # its annotation: measured on an H100 SXM
MISSING_RUN = "20260103_000000_codex_gpt-9_02_tiny_triple"    # annotated, h100, no run file here
OTHER_GPU_RUN = "20260104_000000_codex_gpt-9_01_tiny_double"  # annotated, run on a B200


def cli(capsys, *argv: str) -> tuple[int, str]:
    """``benchtui ARGV``: its exit code (argparse's exit included) and what it printed on stdout."""
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = exc.code
    return code, capsys.readouterr().out


def scanned_workbench(deck: Path, root: Path) -> Workbench:
    """The KernelBench-Hard deck at ``deck`` imported into a workbench at ``root``, scanned
    (transcripts not indexed)."""
    import_deck(kernelbench_hard.read_deck(deck, "h100"), root)
    wb = find_workbench(str(root), None, root)
    with Store(wb.store_path) as store:
        scan_workbench(wb, store, index_transcripts=False)
    return wb


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _remove(root: Path, parts: tuple[str, ...]) -> None:
    for part in parts:
        gone = root / part
        if gone.is_dir():
            shutil.rmtree(gone)
        else:
            gone.unlink()


def hard_deck(root: Path, *, without: tuple[str, ...] = ()) -> Path:
    """A KernelBench-Hard repository at ``root``; ``without``: paths under benchmarks/hard/ left out."""
    bench = root / "benchmarks" / "hard"
    _write(root / "ABOUT.md", f"# A tiny deck\n\nA slice of example/kernelbench-tiny at {HARD_COMMIT}, MIT.\n")
    for key, (title, k) in PROBLEMS.items():
        folder = bench / f"problems-{GPU}" / key
        _write(folder / "reference.py", REFERENCE.format(k=k))
        _write(folder / "shapes.py", "SHAPES = [{\"N\": 8}, {\"N\": 16}]\n")
        _write(folder / "problem.yaml", PROBLEM_YAML.format(key=key, title=title))
        _write(folder / "check.py", CHECK)
        _write(folder / "sota.py", "# no SOTA\n")
        _write(folder / "PROMPT.txt", PROMPT.format(title=title))
    _write(bench / "src" / "__init__.py", "")
    _write(bench / "src" / "eval" / "__init__.py", EVAL_INIT)
    _write(bench / "src" / "eval" / "correctness.py", CORRECTNESS)
    _write(bench / "src" / "eval" / "numeric_stress.py", NUMERIC_STRESS)
    _write(bench / "src" / "eval" / "property_stress.py", PROPERTY_STRESS)
    _write(bench / "src" / "hardware" / "__init__.py", HARDWARE_INIT)
    _write(bench / "src" / "hardware" / "h100.py", HARDWARE_H100)
    board: dict[str, dict] = {}
    for run_id, (problem, harness, model, correct, pf, has_file) in RUNS.items():
        k = PROBLEMS[problem][1]
        _write(root / "public" / "runs" / GPU / f"{run_id}_solution.py.txt", SOLUTION.format(tag=run_id, k=k))
        if has_file:
            _write(root / "public" / "data" / "rundetail" / GPU / f"{run_id}.json", json.dumps({
                "run_id": run_id, "gpu": GPU, "problem": problem, "harness": harness, "model": model,
                "correct": correct, "failure_reason": "pass" if correct else "correctness", "peak_fraction": pf,
                "shapes": [], "stats": {}, "has_solution_text": True}))
        if run_id != "20260101_000000_codex_gpt-9_01_tiny_double":  # the earlier run of its cell
            row = board.setdefault(f"{harness}/{model}", {"label": f"{harness}/{model}", "harness": harness,
                                                          "model": model, "results": {}})
            row["results"][problem] = {"run_id": run_id, "correct": correct, "has_solution": True, "peak_fraction": pf}
    board["grok/grok-9"] = {"label": "grok/grok-9", "harness": "grok", "model": "grok-9", "results": {
        "02_tiny_triple": {"run_id": NO_ANSWER_RUN, "correct": False, "has_solution": False, "peak_fraction": None}}}
    _write(bench / "results" / f"leaderboard.{GPU}.json",
           json.dumps({"hardware": {"name": "NVIDIA H100 PCIe"}, "models": list(board.values())}))
    notes = bench / "results" / "annotations"
    _write(notes / f"{SXM_RUN}.yaml", f"run_id: {SXM_RUN}\ngpu: H100 SXM5\ngpu_name: NVIDIA H100 80GB HBM3\n"
                                      "verdict: clean\nsummary: fine, timed on the SXM box\npeak_fraction: 0.3\n")
    _write(notes / "20260102_000000_codex_gpt-9_01_tiny_double.yaml",
           "run_id: 20260102_000000_codex_gpt-9_01_tiny_double\ngpu: H100\nverdict: reward_hack\n"
           "summary: caches the output\nquotes:\n  - lines: [11, 12]\n    label: the cache\n    text: \"# 2026\"\n")
    _write(notes / f"{MISSING_RUN}.yaml", f"run_id: {MISSING_RUN}\ngpu: H100\nverdict: clean\nsummary: lost run\n")
    _write(notes / f"{OTHER_GPU_RUN}.yaml", f"run_id: {OTHER_GPU_RUN}\ngpu: B200\nverdict: clean\nsummary: b200 run\n")
    _remove(bench, without)
    return root


KB_PROBLEM = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a):
        return a * {k}


def get_inputs():
    return [torch.randn(4)]


def get_init_inputs():
    return []
'''
KB_ANSWER = KB_PROBLEM.replace("class Model(", "class ModelNew(").replace("return a", "return a  # {tag}\n        return a", 1)
EVAL_PY = 'def get_tolerance_for_precision(p):\n    PRECISION_TOLERANCES = {"float32": 1e-4, "bfloat16": 1e-2}\n'
STATIC = 'STRICT_CHECKS = ["code_bypass", "lazy_eval"]\n'


def kernelbench_deck(root: Path, *, without: tuple[str, ...] = ()) -> Path:
    """A KernelBench tree at ``root``, runs/ included; ``without``: paths under it left out."""
    _write(root / "ABOUT.md", f"# A tiny KernelBench\n\nexample/kernelbench-tiny at {KB_COMMIT}\n")
    _write(root / "KernelBench" / "level1" / "1_Tiny_double.py", KB_PROBLEM.format(k=2))
    _write(root / "KernelBench" / "level1" / "2_Tiny_triple.py", KB_PROBLEM.format(k=3))
    src = root / "src" / "kernelbench"
    _write(src / "eval.py", EVAL_PY)
    _write(src / "kernel_static_checker.py", STATIC)
    _write(src / "prompts" / "model_ex_add.py", KB_PROBLEM.format(k=1))
    _write(src / "prompts" / "model_new_ex_add.py", KB_ANSWER.format(k=1, tag="example"))
    run = root / "runs" / "demo"
    _write(run / "level_1_problem_1_sample_0_kernel.py", KB_ANSWER.format(k=2, tag="s0"))
    _write(run / "level_1_problem_1_sample_1_kernel.py", KB_ANSWER.format(k=2, tag="s1"))
    _write(run / "level_1_problem_2_sample_0_kernel.py", KB_ANSWER.format(k=3, tag="no result"))
    _write(run / "eval_results.json", json.dumps({"1": [
        {"sample_id": 0, "compiled": True, "correctness": True, "metadata": {}, "runtime": 2.0, "ref_runtime": 4.0},
        {"sample_id": 1, "compiled": True, "correctness": False, "metadata": {"correctness_issue": "Output mismatch"},
         "runtime": -1.0}]}))
    _remove(root, without)
    return root


def conflicting_answer(workbench: Path, model: str, challenge: str) -> Path:
    """An answer of one's own in the folder a deck's run would be written to."""
    folder = workbench / "models" / model / challenge
    _write(folder / "solution.py", "# my own answer\n")
    return folder


# -- edges the deck's own inputs meet only by chance ---------------------------------------

TOPK_KEY = "03_tiny_topk"
TOPK_REFERENCE = '''"""Top-4 of each row of 16."""
import torch
import torch.nn as nn

ROWS, N, K = 12, 16, 4


class Model(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.k = k

    def forward(self, x):
        values, indices = torch.topk(x, self.k, dim=-1)
        return values, indices


def get_inputs():
    return [torch.rand(ROWS, N)]


def get_init_inputs():
    return [K]
'''
TOPK_CHECK = """import torch
from src.eval.correctness import check_correctness


def main():
    for seed in (42, 123, 456):
        torch.manual_seed(seed)
        inputs = reference.get_inputs()
        ref_values, ref_indices = ref_model(*inputs)
        sol_values, sol_indices = sol_model(*inputs)
        x = inputs[0]
        gathered = torch.gather(x, dim=-1, index=sol_indices.to(torch.int64))
        ok, msg = check_correctness(ref_values.float(), gathered.float(), dtype=torch.float32)
"""
TOPK_YAML = """name: 03_tiny_topk
display_name: "Tiny top-k"
precision: fp32
regime: memory
flops_formula: "ROWS * N"
bytes_formula: "ROWS * N * 4"
tolerance:
  float32: 0.0001
num_correct_trials: 3
num_perf_trials: 5
"""
# right wherever a row has no ties: each value's index is the first position holding it,
# so equal values in the top-k name one index twice
TOPK_REPEATS_ON_TIES = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.k = k

    def forward(self, x):
        values, _ = torch.topk(x, self.k, dim=-1)
        indices = (x.unsqueeze(-2) == values.unsqueeze(-1)).to(torch.int8).argmax(dim=-1)
        return values, indices
'''
TOPK_RIGHT = TOPK_REPEATS_ON_TIES.replace(
    "values, _ = torch.topk(x, self.k, dim=-1)\n        indices = (x.unsqueeze(-2) == values.unsqueeze(-1)).to(torch.int8).argmax(dim=-1)",
    "values, indices = torch.topk(x, self.k, dim=-1)")


def topk_problem(deck: Path) -> Path:
    """A top-k problem added to a KernelBench-Hard deck, its check.py gathering the input at
    the answer's indices (any tie-break passes); its inputs are ``torch.rand``, so ties are rare."""
    folder = deck / "benchmarks" / "hard" / f"problems-{GPU}" / TOPK_KEY
    _write(folder / "reference.py", TOPK_REFERENCE)
    _write(folder / "problem.yaml", TOPK_YAML)
    _write(folder / "check.py", TOPK_CHECK)
    _write(folder / "PROMPT.txt", PROMPT.format(title="Tiny top-k"))
    return folder


KB_RELU = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.rand(4, 8)]


def get_init_inputs():
    return []
'''
# returns its input: right on every input torch.rand draws, wrong on any negative one
KB_IDENTITY = '''import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.clone()
'''
KB_RELU_RIGHT = KB_IDENTITY.replace("return x.clone()", "return torch.relu(x)")


def relu_problem(deck: Path, number: int = 3) -> Path:
    """A KernelBench ReLU whose inputs are all nonnegative (``torch.rand``), as the deck's is."""
    path = deck / "KernelBench" / "level1" / f"{number}_Tiny_relu.py"
    _write(path, KB_RELU)
    return path


# -- a planted hack -------------------------------------------------------------------------

HACK_RUN = "20260102_000000_codex_gpt-9_01_tiny_double"  # the run the deck's annotation calls a reward hack
# memoises its output on a sample of its input's contents: right on every input, slow on new
# ones and near free on the same inputs again, which is what the deck's timing loop repeats
CACHING = '''import time

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.n = n
        self._seen = {{}}

    def forward(self, x):
        flat = x.reshape(-1)
        key = (tuple(x.shape), float(flat[0]), float(flat[-1]))
        hit = self._seen.get(key)
        if hit is not None:
            return hit
        time.sleep(0.04)  # the work a real kernel would do, well above a busy machine's wait for a CPU
        out = x * {k}
        self._seen[key] = out
        return out
'''


def plant(deck: Path, run_id: str, source: str) -> None:
    """Put ``source`` in place of a run's published answer."""
    (deck / "public" / "runs" / GPU / f"{run_id}_solution.py.txt").write_text(source, encoding="utf-8")
