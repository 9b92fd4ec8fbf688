"""Runs folders as KernelBench writes them, built from the deck's own example answers."""
from __future__ import annotations

import shutil
from pathlib import Path


def kernelbench_runs(deck: Path, runs: Path, *, results: str | None = None) -> Path:
    """A runs/ folder as KernelBench writes it, from the deck's own example answers:
    run ``demo`` with problem 1 (samples 0 and 1), problem 19 (Triton), a kernel of an
    unknown problem and one of a level the deck lacks; eval_results.json as given."""
    examples = deck / "src" / "kernelbench" / "prompts"
    run = runs / "demo"
    run.mkdir(parents=True)
    shutil.copyfile(examples / "model_new_ex_add.py", run / "level_1_problem_1_sample_0_kernel.py")
    shutil.copyfile(examples / "model_new_ex_add_cute.py", run / "level_1_problem_1_sample_1_kernel.py")
    shutil.copyfile(examples / "model_new_ex_add_triton.py", run / "level_1_problem_19_sample_0_kernel.py")
    shutil.copyfile(examples / "model_new_ex_1.py", run / "level_1_problem_999_sample_0_kernel.py")
    shutil.copyfile(examples / "model_new_ex_2.py", run / "level_3_problem_1_sample_0_kernel.py")
    if results is not None:
        (run / "eval_results.json").write_text(results, encoding="utf-8")
    return runs


# The shape eval_from_generations.py writes: problem id -> [one object per sample].
EVAL_RESULTS = """{
 "1": [
  {"sample_id": 0, "compiled": true, "correctness": true,
   "metadata": {"hardware": "NVIDIA H100", "device": "cuda:0", "correctness_trials": "(5 / 5)"},
   "runtime": 12.5, "runtime_stats": {"mean": 12.5, "std": 0.1, "min": 12.3, "max": 12.9, "num_trials": 100},
   "ref_runtime": 25.0},
  {"sample_id": 1, "compiled": false, "correctness": false,
   "metadata": {"compilation_error_name": "RuntimeError", "compilation_error": "Error building extension"},
   "runtime": -1.0, "runtime_stats": {}}
 ],
 "19": [
  {"sample_id": 0, "compiled": true, "correctness": false,
   "metadata": {"correctness_issue": "Output mismatch", "max_difference": ["0.5"], "correctness_trials": "(0 / 5)"},
   "runtime": -1.0, "runtime_stats": {}}
 ],
 "42": [
  {"sample_id": 0, "compiled": true, "correctness": true, "metadata": {}, "runtime": 3.0, "runtime_stats": {}}
 ]
}
"""
