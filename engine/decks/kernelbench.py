"""A KernelBench tree, as its repository lays it out:

- ``KernelBench/level<L>/<P>_<Name>.py``: the problems (``Model``,
  ``get_inputs()``, ``get_init_inputs()``), one file each;
- ``src/kernelbench/eval.py``: the tolerance per precision;
  ``src/kernelbench/kernel_static_checker.py``: the static checks it
  enforces; ``src/kernelbench/prompts/``: the one-shot example its prompts show;
- ``runs/<run>/level_<L>_problem_<P>_sample_<S>_kernel.py``: a model's
  answers (``ModelNew``), with ``runs/<run>/eval_results.json`` where the run
  was evaluated: ``{"<P>": [{"sample_id", "compiled", "correctness",
  "metadata", "runtime", "runtime_stats"}, ...]}`` (older versions: one
  object per problem instead of a list).
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

from benchtui.decks import pyread
from benchtui.decks.kernelbench_hard import mangled
from benchtui.decks.model import (
    CHALLENGE_ID_MAX,
    KERNELBENCH,
    MODEL_NAME_MAX,
    Deck,
    DeckError,
    Problem,
    Run,
    challenge_slug,
    slug,
)

PROBLEM_FILE = re.compile(r"^(\d+)_(.+)\.py$")
KERNEL_FILE = re.compile(r"^level_(\d+)_problem_(\d+)_sample_(\d+)_kernel\.py$")
LEVEL_DIR = re.compile(r"^level(\d+)$")
ANSWER_FILE = "solution.py"
# KernelBench's eval_from_generations defaults: seed 42, 5 correctness trials, 100 timed.
BASE_SEED = 42
NUM_CORRECT_TRIALS = 5
NUM_PERF_TRIALS = 100
# eval.run_and_check_correctness draws the trials' seeds from the base seed:
# torch.manual_seed(42), then torch.randint(0, 2**32 - 1, (1,)) once per trial, on
# the CPU generator. These are those draws (torch's Mersenne Twister; the same on
# every platform), so the seeds are known without importing torch here.
TRIAL_SEEDS_FROM_42 = [734796314, 576165995, 2197670066, 839703249, 2584932063]
FALLBACK_TOLERANCE = {"float32": 1e-4, "float16": 1e-2, "bfloat16": 1e-2}
FALLBACK_STATIC_CHECKS = ["code_bypass", "timing_event_patch", "thread_injection", "lazy_eval"]
PRECISION = "fp32"

# KernelBench's one-shot prompt, in its order: the task, an example pair, the
# architecture to optimise, the precision, the instruction naming ModelNew.
PROMPT = """\
You write custom CUDA operators to replace the PyTorch operators in the given architecture to get speedups.

You are free to choose which operators to replace with custom CUDA operators and which to leave unchanged. You may replace several operators, fuse operators into one kernel (matmul + relu, for example), or change the algorithm (an online softmax, for example).
{example}
You are given the following architecture:

```python
{reference}
```

Note: the kernels should be optimized for FP32 (32-bit floating point) precision.

Optimize the architecture named Model with custom CUDA operators! Name your optimized output architecture ModelNew. Output the new code in codeblocks. Please generate real code, NOT pseudocode, make sure the code compiles and is fully functional. Just output the new model code, no other text, and NO testing code!
"""
EXAMPLE = """
Here is an example of the syntax of embedding custom CUDA operators in PyTorch.

Input architecture:

```python
{before}
```

Optimized with custom CUDA operators:

```python
{after}
```
"""
REQUIREMENTS = {
    "task": "Optimize the architecture named Model with custom CUDA operators",
    "interface": "Name your optimized output architecture ModelNew",
    "correct": "make sure the code compiles and is fully functional",
    "fast": {"words": "to get speedups", "checkable": False,
             "reason": "a figure: time against the reference's, measured on a GPU"},
}


def looks_like(root: Path) -> bool:
    return (root / "KernelBench").is_dir() and any(LEVEL_DIR.match(p.name) for p in (root / "KernelBench").iterdir())


def read_deck(root: Path, *, runs: Path | None = None, commit: str = "", stream: bool = False) -> Deck:
    """The deck at ``root``: its problems read now; its runs read now too, or with ``stream`` a
    run folder at a time as the import asks for them (``Deck.run_batches``), so a deck of any
    number of run folders is held one folder at a time."""
    if not (root / "KernelBench").is_dir():
        raise DeckError(f"{root} is not a KernelBench tree: no KernelBench/ folder")
    deck = Deck(KERNELBENCH, "KernelBench", str(root), commit)
    src = root / "src" / "kernelbench"
    lost = {}
    for key, path, what, figures in (
            ("tolerance", src / "eval.py", "the tolerance per precision (PRECISION_TOLERANCES; "
             f"{FALLBACK_TOLERANCE['float32']:g} for fp32 is assumed)", ("the deck_rule figure",)),
            ("static_checks", src / "kernel_static_checker.py", "the static checks it enforces (STRICT_CHECKS; "
             f"{', '.join(FALLBACK_STATIC_CHECKS)} are assumed; benchtui's checks do not use them)", ()),
            ("example", src / "prompts" / "model_new_ex_add.py", "the one-shot example of its prompt (PROMPT.md is "
             "written without it, so it is not the prompt the deck's models were given)", ()),
            ("example", src / "prompts" / "model_ex_add.py", "the one-shot example of its prompt (PROMPT.md is "
             "written without it, so it is not the prompt the deck's models were given)", ())):
        if not path.is_file():
            lost[key] = deck.lacks(root, path.relative_to(root).as_posix(), what, figures)
    tolerances = tolerance_table(src / "eval.py")
    static = static_checks(src / "kernel_static_checker.py")
    example = example_block(src / "prompts")
    levels = sorted((int(m.group(1)), p) for p in (root / "KernelBench").iterdir()
                    if p.is_dir() and (m := LEVEL_DIR.match(p.name)))
    order = 100
    for level, folder in levels:
        for path in sorted(folder.glob("*.py"), key=lambda p: (int(m.group(1)) if (m := PROBLEM_FILE.match(p.name)) else 1 << 30, p.name)):
            m = PROBLEM_FILE.match(path.name)
            if not m:
                deck.notes.append(f"{folder.name}/{path.name}: not named <number>_<name>.py; left out")
                continue
            order += 1
            problem = read_problem(deck, path, level, int(m.group(1)), m.group(2), tolerances, static, example, order)
            if problem is not None and lost:
                needed = {k: v for k, v in lost.items() if k == "tolerance"}  # what the harness reads
                if needed:
                    problem.module["missing"] = needed
            if problem is not None:
                deck.problems[problem.key] = problem
    if not deck.problems:
        raise DeckError(f"{root / 'KernelBench'} holds no level<L>/<P>_<name>.py problem"
                        + "".join(f"\n  {line}" for line in deck.problems_found))
    runs_dir = runs if runs is not None else root / "runs"
    if runs_dir.is_dir():
        run_dirs = sorted(p for p in runs_dir.iterdir() if p.is_dir())
        known = {lvl for lvl, _ in levels}

        def batches():
            for run_dir in run_dirs:
                batch = read_run(deck, run_dir, known)
                name_models(batch)
                yield batch

        deck.unread = batches
    else:
        deck.notes.append(f"no runs folder ({runs_dir}): the problems are imported without answers")
    if not stream:
        deck.read_all()
    return deck


def problem_key(level: int, number: int) -> str:
    return f"level_{level}_problem_{number}"


def read_problem(deck: Deck, path: Path, level: int, number: int, name: str, tolerances, static, example, order) -> Problem | None:
    data = path.read_bytes()
    why = mangled(data)
    if why:
        deck.problem(f"problem {path.parent.name}/{path.name}: {why}; not imported")
        return None
    reference = data.decode("utf-8")
    key = problem_key(level, number)
    cid = challenge_slug(f"kb_l{level}_p{number}_{name}")[:CHALLENGE_ID_MAX].rstrip("_")
    tol = float(tolerances.get("float32", FALLBACK_TOLERANCE["float32"]))
    module = {
        "deck": KERNELBENCH,
        "deck_title": deck.title,
        "deck_commit": deck.commit,
        "problem": key,
        "problem_name": f"{number}_{name}",
        "level": level,
        "reference": "reference.py",
        "answer_file": ANSWER_FILE,
        "answer_class": "ModelNew",
        "weights": "seeded",
        "init_seed": BASE_SEED,
        "seeds": TRIAL_SEEDS_FROM_42[:NUM_CORRECT_TRIALS],
        "atol": tol,
        "rtol": tol,
        "tolerance": {k: float(v) for k, v in tolerances.items()},
        "forbidden": [],
        "static_checks": static,
        "num_correct_trials": NUM_CORRECT_TRIALS,
        "num_perf_trials": NUM_PERF_TRIALS,
        "precision": PRECISION,
    }
    prompt = PROMPT.format(example=example, reference=reference.rstrip())
    title = f"KernelBench L{level} P{number}: {name.replace('_', ' ').strip()}"
    return Problem(key=key, challenge=cid, title=title, prompt=prompt, files={"reference.py": data}, module=module,
                   requirements=dict(REQUIREMENTS), display_names=(title, f"level{level}/{path.name}", key),
                   order=order, source=str(path))


def tolerance_table(path: Path) -> dict[str, float]:
    """eval.py's PRECISION_TOLERANCES (inside get_tolerance_for_precision): dtype -> atol = rtol."""
    tree = pyread.parse(path) if path.is_file() else None
    if tree is None:
        return dict(FALLBACK_TOLERANCE)
    import ast

    for node in ast.walk(tree):
        if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "PRECISION_TOLERANCES" for t in node.targets)):
            try:
                table = pyread.literal(node.value)
            except pyread.NotLiteral:
                break
            return {str(k): float(v) for k, v in table.items()}
    return dict(FALLBACK_TOLERANCE)


def static_checks(path: Path) -> list[str]:
    tree = pyread.parse(path) if path.is_file() else None
    strict = pyread.module_literals(tree).get("STRICT_CHECKS") if tree is not None else None
    return [str(s) for s in strict] if isinstance(strict, list) else list(FALLBACK_STATIC_CHECKS)


def example_block(prompts: Path) -> str:
    before, after = prompts / "model_ex_add.py", prompts / "model_new_ex_add.py"
    try:
        return EXAMPLE.format(before=before.read_text(encoding="utf-8").rstrip(), after=after.read_text(encoding="utf-8").rstrip())
    except (OSError, UnicodeDecodeError):
        return ""


# -- runs -------------------------------------------------------------------------

def read_run(deck: Deck, run_dir: Path, levels: set[int]) -> list[Run]:
    """The runs of one run folder, their results matched; what is wrong said in ``deck``'s lines."""
    name = run_dir.name
    base = slug(name, lower=False)[:MODEL_NAME_MAX] or "run"
    kernels: dict[tuple[int, int, int], Run] = {}
    refused: set[tuple[int, int, int]] = set()  # kernel files already reported: their results are not reported again
    runs: list[Run] = []
    folder = str(run_dir)
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):  # names and paths as strings: a run folder
        m = KERNEL_FILE.match(entry.name)                           # holds thousands of kernels
        if not m:
            if entry.name.endswith(".py") and entry.name != ".py" and entry.is_file():
                deck.notes.append(f"run {name}: {entry.name} is not named level_<L>_problem_<P>_sample_<S>_kernel.py; left out")
            continue
        level, number, sample = (int(g) for g in m.groups())
        refused.add((level, number, sample))
        run_id = f"{name}/level_{level}_problem_{number}_sample_{sample}"
        if level not in levels:
            deck.problem(f"run {run_id}: level {level} has no folder KernelBench/level{level}/; not imported")
            continue
        key = problem_key(level, number)
        if key not in deck.problems:
            deck.problem(f"run {run_id}: unknown problem (KernelBench/level{level}/ has no problem {number}); not imported")
            continue
        data = file_bytes(entry.path)
        why = mangled(data)
        if why:
            deck.problem(f"run {run_id}: the kernel file is mangled ({why}); not imported")
            continue
        run = Run(run_id=run_id, problem=key, model=base, base_model=base, harness=name, deck_model=name,
                  data=data, source=entry.path, sample=sample)
        kernels[(level, number, sample)] = run
        refused.discard((level, number, sample))
        runs.append(run)
    results = run_dir / "eval_results.json"
    if results.is_file():
        read_eval_results(deck, name, results, kernels, refused)
        for run in kernels.values():
            if run.result is None:
                deck.notes.append(f"run {run.run_id}: eval_results.json has no result for it; imported without one")
    elif kernels:
        deck.notes.append(f"run {name}: no eval_results.json; its {len(kernels)} kernels are imported without published results")
    return runs


def file_bytes(path: str) -> bytes:
    """A file's bytes in the fewest system calls (no buffering, no terminal check): a deck's
    run folders are read file by file, and the calls are most of an import's time."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_eval_results(deck: Deck, name: str, path: Path, kernels: dict[tuple[int, int, int], Run],
                      refused: set[tuple[int, int, int]] = frozenset()) -> None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        deck.problem(f"run {name}: eval_results.json is not readable JSON ({' '.join(str(exc).split())[:120]}); its results are not imported")
        return
    if not isinstance(data, dict):
        deck.problem(f"run {name}: eval_results.json is not an object keyed by problem id; its results are not imported")
        return
    run_levels = {lvl for lvl, _, _ in kernels}
    if len(run_levels) > 1:
        deck.problem(f"run {name}: eval_results.json is keyed by problem id alone but the run holds levels "
                     f"{sorted(run_levels)}; its results are not matched")
        return
    level = next(iter(run_levels), None)
    for pid, entries in data.items():
        for entry in entries if isinstance(entries, list) else [entries]:
            if not isinstance(entry, dict) or not re.fullmatch(r"[0-9]+", str(pid)):
                deck.problem(f"run {name}: eval_results.json entry {pid!r} is not a result object; ignored")
                continue
            try:
                sample = int(entry.get("sample_id", 0) or 0)
            except (TypeError, ValueError):
                deck.problem(f"run {name}: eval_results.json entry of problem {pid} has sample_id "
                             f"{entry.get('sample_id')!r}, not a number; ignored")
                continue
            run = kernels.get((level, int(pid), sample)) if level is not None else None
            if run is None and (level, int(pid), sample) in refused:
                continue
            if run is None:
                deck.problem(f"run {name}: eval_results.json names problem {pid} sample {sample}, which has no kernel file")
                continue
            run.result = result_row(entry)


def result_row(entry: dict) -> dict:
    metadata = entry.get("metadata") if isinstance(entry.get("metadata"), dict) else {}
    correct = entry.get("correctness") is True
    if correct:
        reason = "pass"
    elif not entry.get("compiled", True):
        reason = "compile_error: " + str(metadata.get("compilation_error_name") or metadata.get("compilation_error")
                                         or metadata.get("cuda_error") or metadata.get("other_error") or "did not compile")
    else:
        reason = str(metadata.get("runtime_error_name") or metadata.get("runtime_error")
                     or metadata.get("correctness_issue") or "incorrect")
        if metadata.get("correctness_trials"):
            reason += f" {metadata['correctness_trials']}"
    runtime = entry.get("runtime")
    ref = entry.get("ref_runtime")
    stats = {"runtime_us": runtime if isinstance(runtime, (int, float)) and runtime >= 0 else None,
             "runtime_stats": entry.get("runtime_stats") if isinstance(entry.get("runtime_stats"), dict) else {},
             "ref_runtime_us": ref if isinstance(ref, (int, float)) and ref >= 0 else None,
             "metadata": {k: v for k, v in metadata.items() if k != "runtime_error_traceback"}}
    speedup = (stats["ref_runtime_us"] / stats["runtime_us"]
               if stats["ref_runtime_us"] and stats["runtime_us"] else None)
    return {"correct": correct, "failure_reason": " ".join(reason.split())[:300], "peak_fraction": None,
            "speedup": speedup, "shapes": [], "stats": stats, "regime": None, "precision": PRECISION,
            "peak_tflops": None, "peak_bw_gbps": None, "board_correct": None, "board_peak_fraction": None,
            "board_label": None, "annotation_verdict": None, "has_result": True}


def name_models(runs: list[Run]) -> None:
    """One model per run folder; the samples of one problem beyond sample 0 in
    models of their own (``<run>_s1``), so no answer overwrites another."""
    for run in runs:
        if run.sample:
            suffix = f"_s{run.sample}"
            run.model = run.base_model[:MODEL_NAME_MAX - len(suffix)] + suffix
