"""A KernelBench-Hard deck, as its repository lays it out:

- ``benchmarks/hard/problems-<gpu>/<problem>/``: PROMPT.txt, reference.py,
  shapes.py, problem.yaml (tolerances, forbidden ops, trial counts, the
  flops/bytes formulas), check.py (the correctness seeds), sota.py;
- ``benchmarks/hard/src/eval/``: the default tolerances and the numeric
  stress cases; ``benchmarks/hard/src/hardware/``: the GPU peaks that
  peak_fraction is a fraction of;
- ``public/runs/<gpu>/<stamp>_<harness>_<model>_<problem>_solution.py.txt``:
  the published answers; ``public/data/rundetail/<gpu>/<run>.json``: each
  run's published result;
- ``benchmarks/hard/results/leaderboard.<gpu>.json`` and
  ``benchmarks/hard/results/annotations/*.yaml``.
"""
from __future__ import annotations

import ast
import functools
import json
import re
from pathlib import Path
from typing import Any

import yaml

# libyaml's loader where PyYAML was built with it: a deck holds hundreds of annotations
YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

from benchtui.challenges.coverage import words
from benchtui.decks import index_rule, pyread
from benchtui.decks.model import (
    CHALLENGE_ID_MAX,
    KERNELBENCH_HARD,
    MODEL_NAME_MAX,
    Deck,
    DeckError,
    Problem,
    Run,
    challenge_slug,
    slug,
)

RUN_SUFFIX = "_solution.py.txt"
ANSWER_FILE = "solution.py"
DECK_FILES = ("reference.py", "shapes.py", "problem.yaml", "sota.py")
STAMP = re.compile(r"^(\d{8}_\d{6})_(.+)$")
# When check.py names no seed loop and correctness.py no default table: the deck's own values
# at the commit this reader was written against (c7d9221).
FALLBACK_SEEDS = [42, 123, 456]
FALLBACK_TOLERANCE = {"float32": {"atol": 1e-4, "rtol": 1e-4}}
# Published figures that may differ by rounding only (the deck rounds to 4 places).
SAME = 5e-5
# Generic words of the deck's prompts, used as requirements where a prompt has them.
PROMPT_REQUIREMENTS = {
    "interface": "the final answer has to be in solution.py with the same Model, get_inputs, and "
                 "get_init_inputs interface as reference.py",
    "correct": "If `python check.py` hasn't printed PASS, you're not done",
}


def find_bench(root: Path) -> tuple[Path, Path]:
    """(benchmarks/hard, the repository root) from the root or from benchmarks/hard itself."""
    if (root / "benchmarks" / "hard").is_dir():
        return root / "benchmarks" / "hard", root
    if root.name == "hard" and root.parent.name == "benchmarks":
        return root, root.parent.parent
    raise DeckError(f"{root} is not a KernelBench-Hard deck: no benchmarks/hard/ folder")


def looks_like(root: Path) -> bool:
    try:
        find_bench(root)
        return True
    except DeckError:
        return False


def read_deck(root: Path, gpu: str, *, commit: str = "") -> Deck:
    bench, repo = find_bench(root)
    problems_dir = bench / f"problems-{gpu}"
    if not problems_dir.is_dir():
        have = sorted(p.name.removeprefix("problems-") for p in bench.glob("problems-*") if p.is_dir())
        raise DeckError(f"{bench} has no problems-{gpu}/ folder" + (f" (GPUs here: {', '.join(have)})" if have else ""))
    deck = Deck(KERNELBENCH_HARD, f"KernelBench-Hard ({gpu.upper()})", str(repo), commit, gpu=gpu)
    eval_dir = bench / "src" / "eval"
    seeds_default = FALLBACK_SEEDS
    tolerance_defaults = default_tolerances(eval_dir / "correctness.py")
    stress = stress_cases(eval_dir / "numeric_stress.py")
    hardware = hardware_targets(bench / "src" / "hardware")
    properties = property_problems(eval_dir / "property_stress.py")
    lost = deck_parts_missing(deck, bench, repo)
    for order, folder in enumerate(sorted(p for p in problems_dir.iterdir() if p.is_dir()), start=1):
        problem = read_problem(deck, folder, order, seeds_default, tolerance_defaults, stress, hardware, lost)
        if problem is not None:
            if problem.key in properties:
                add_property_stress(problem, bench)
                property_needs(deck, problem, bench, repo)
            deck.problems[problem.key] = problem
    if not deck.problems:
        raise DeckError(f"{problems_dir} holds no problem this reader can import (see above)"
                        + "".join(f"\n  {line}" for line in deck.problems_found))
    for part, what in ((bench / "results" / f"leaderboard.{gpu}.json", "the leaderboard (which run of a cell it "
                        "counts, and its figures where a run has no result file)"),
                       (repo / "public" / "data" / "rundetail" / gpu, "the runs' published results (correct, "
                        "failure_reason, peak_fraction, figures per shape)"),
                       (repo / "public" / "runs" / gpu, "the published answers (the problems are imported without them)"),
                       (bench / "results" / "annotations", "the annotations (a person's verdict on a run, with quotes)")):
        if not part.exists():
            deck.lacks(repo, part.relative_to(repo).as_posix() + ("" if part.suffix else "/"), what)
    leaderboard = read_leaderboard(deck, bench / "results" / f"leaderboard.{gpu}.json")
    details = read_details(deck, repo / "public" / "data" / "rundetail" / gpu)
    read_runs(deck, repo / "public" / "runs" / gpu, details, leaderboard)
    read_flat_runs(deck, repo / "public" / "runs", details, leaderboard, bench / "results" / "annotations")
    check_leaderboard(deck, leaderboard, details, problems_dir)
    read_annotations(deck, bench / "results" / "annotations", leaderboard)
    name_models(deck)
    return deck


# -- parts of the deck ------------------------------------------------------------

RULE, PEAK = "the deck_rule figure", "the deck-peak peak_fraction"
# src/ files read for every problem: (the [module.missing] key, path under src/, what is lost, figures)
SRC_PARTS = (
    ("default_tolerance", "eval/correctness.py", "the default tolerance per dtype (DEFAULT_TOLERANCE; "
     f"{FALLBACK_TOLERANCE['float32']['atol']:g} is assumed)", (RULE,)),
    ("stress", "eval/numeric_stress.py", "the numeric stress cases", (RULE,)),
    ("property_stress", "eval/property_stress.py", "the property stress", (RULE,)),
    ("peak", "hardware/", "the GPU peaks peak_fraction is a fraction of", (PEAK,)),
)
# a problem's own files: (key, file, what is lost, figures)
PROBLEM_PARTS = (
    ("seeds", "check.py", f"the problem's correctness seeds ({', '.join(map(str, FALLBACK_SEEDS))} are assumed)", (RULE,)),
    ("shapes", "shapes.py", "the problem's shapes (get_inputs()'s own size is the only one checked)", (RULE, PEAK)),
    ("sota", "sota.py", "the problem's SOTA line (informational: no check or figure uses it)", ()),
)


def deck_parts_missing(deck: Deck, bench: Path, repo: Path) -> dict[str, str]:
    """The src/ parts that are not there, each named in the report; [module.missing] key -> the part's name."""
    out = {}
    for key, rel, lost, figures in SRC_PARTS:
        path = bench / "src" / rel
        if not (path.is_dir() if rel.endswith("/") else path.is_file()):
            name = path.relative_to(repo).as_posix() + ("/" if rel.endswith("/") else "")
            out[key] = deck.lacks(repo, name, lost, figures)
    return out


# -- problems -------------------------------------------------------------------

def read_problem(deck: Deck, folder: Path, order: int, seeds_default, tolerance_defaults, stress, hardware,
                 lost: dict[str, str] | None = None) -> Problem | None:
    key = folder.name
    where = f"problem {key}"
    missing = [f for f in ("reference.py", "problem.yaml", "PROMPT.txt") if not (folder / f).is_file()]
    if missing:
        deck.problem(f"{where}: no {', '.join(missing)} in {folder}; not imported")
        return None
    try:
        meta = yaml.load((folder / "problem.yaml").read_text(encoding="utf-8"), Loader=YAML_LOADER) or {}
        prompt = (folder / "PROMPT.txt").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        deck.problem(f"{where}: cannot read its problem.yaml or PROMPT.txt ({' '.join(str(exc).split())[:160]}); not imported")
        return None
    if not isinstance(meta, dict):
        deck.problem(f"{where}: problem.yaml is not a mapping; not imported")
        return None
    files = {name: (folder / name).read_bytes() for name in DECK_FILES if (folder / name).is_file()}
    repo = Path(deck.path)
    lost = {k: v for k, v in (lost or {}).items() if k != "peak" or meta.get("hardware")}
    for k, name, what, figures in PROBLEM_PARTS:
        if not (folder / name).is_file():
            part = (folder / name).relative_to(repo).as_posix() if folder.is_relative_to(repo) else f"{key}/{name}"
            lost[k] = deck.lacks(repo, part, what, figures)
    seeds = seeds_default
    check = pyread.parse(folder / "check.py") if (folder / "check.py").is_file() else None
    loops = pyread.loop_values(check, "seed") if check is not None else []
    if loops and all(isinstance(s, int) for s in loops[0]):
        seeds = loops[0]
    elif (folder / "check.py").is_file():
        deck.notes.append(f"{where}: check.py names no `for seed in (...)` loop; the seeds {seeds} are assumed")
    module = {
        "deck": KERNELBENCH_HARD,
        "deck_title": deck.title,
        "deck_commit": deck.commit,
        "problem": key,
        "reference": "reference.py",
        "answer_file": ANSWER_FILE,
        "answer_class": "Model",
        "weights": "load_state_dict",
        "seeds": seeds,
        **fallback_tolerance(tolerance_defaults),
        "num_correct_trials": meta.get("num_correct_trials"),
        "num_perf_trials": meta.get("num_perf_trials"),
        "flops_formula": meta.get("flops_formula"),
        "bytes_formula": meta.get("bytes_formula"),
        "regime": meta.get("regime"),
        "precision": meta.get("precision"),
        "forbidden": [str(f) for f in meta.get("forbidden") or []],
    }
    if "shapes.py" in files:
        module["shapes"] = "shapes.py"
    module["tolerance"] = {str(k).removeprefix("torch."): _tolerance_value(v) for k, v in (meta.get("tolerance") or {}).items()}
    if tolerance_defaults:
        module["default_tolerance"] = tolerance_defaults
    indices = index_rule.read(check)
    if indices:
        module["indices"] = indices
    elif index_rule.gathers(check):
        deck.notes.append(f"{where}: check.py gathers the input at returned indices in a form this reader cannot "
                          "follow; the index output is compared exactly")
    peak = peak_for(meta, hardware)
    if peak:
        module["peak"] = peak
    elif meta.get("hardware") and "peak" not in lost:
        deck.problem(f"{where}: no hardware peak for {meta.get('hardware')} in src/hardware/; peak_fraction cannot be recomputed")
    cases = stress.get(meta.get("name", key)) or stress.get(key)
    if cases:
        module["stress"] = cases
    # what the harness cannot reproduce without the parts the deck lacks: key -> the part
    module["missing"] = {k: v for k, v in lost.items() if k != "sota"} or None
    module = {k: v for k, v in module.items() if v is not None}
    title = str(meta.get("display_name") or key)
    cid = challenge_slug(f"kbh_{key}")[:CHALLENGE_ID_MAX].rstrip("_")
    requirements = prompt_requirements(prompt, module.get("forbidden"))
    return Problem(key=key, challenge=cid, title=title, prompt=prompt, files=files, module=module,
                   requirements=requirements, display_names=(title, key), order=100 + order, source=str(folder))


def _tolerance_value(value):
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    if isinstance(value, dict):
        return {str(k): _tolerance_value(v) for k, v in value.items()}
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value


def fallback_tolerance(defaults: dict) -> dict:
    """The deck's atol/rtol where no dtype matches: its float32 entry (correctness.py falls back to it)."""
    entry = defaults.get("float32") or FALLBACK_TOLERANCE["float32"]
    return {"atol": float(entry["atol"]), "rtol": float(entry["rtol"])}


def forbidden_sentence(flat: str, forbidden: list[str]) -> str | None:
    """The prompt's sentence that names the forbidden ops (the one naming most of them), or None."""
    sentences = re.split(r"(?<=[.!?])\s+(?=[A-Z])", flat)
    scored = [(sum(f in s for f in forbidden), s) for s in sentences]
    best = max(scored, key=lambda t: t[0], default=(0, ""))
    return best[1] if best[0] else None


def prompt_requirements(prompt: str, forbidden: list[str] | None = None) -> dict[str, object]:
    """Requirements in the prompt's own words: its first sentence (the task), the
    deck's generic sentences where this prompt has them, and the sentence naming
    the forbidden ops (``no_forbidden_ops``; without one, a forbidden op fails
    ``correct``, as the deck's problem.yaml says)."""
    flat = " ".join(prompt.split())
    first = re.split(r"(?<=[.!?])\s", flat, maxsplit=1)[0]
    out: dict[str, object] = {"task": first}
    for rid, text in PROMPT_REQUIREMENTS.items():
        if words(text) in words(prompt):
            out[rid] = text
    if forbidden:
        said = forbidden_sentence(flat, forbidden)
        if said:
            out["no_forbidden_ops"] = said
    out["fast"] = {"words": first, "checkable": False,
                   "reason": "a figure: time per shape and peak_fraction, measured on a GPU"}
    return out


def default_tolerances(path: Path) -> dict:
    """correctness.py's DEFAULT_TOLERANCE: dtype name -> {atol, rtol}."""
    tree = pyread.parse(path) if path.is_file() else None
    if tree is None:
        return dict(FALLBACK_TOLERANCE)
    table = pyread.module_literals(tree).get("DEFAULT_TOLERANCE")
    if not isinstance(table, dict):
        return dict(FALLBACK_TOLERANCE)
    return {str(k): {"atol": float(v["atol"]), "rtol": float(v["rtol"])} for k, v in table.items()
            if isinstance(v, dict) and "atol" in v and "rtol" in v}


def stress_cases(path: Path) -> dict[str, list[dict]]:
    """numeric_stress.py's _CASES: problem -> [{name, input_scales, state_scales, tolerance}]."""
    tree = pyread.parse(path) if path.is_file() else None
    if tree is None:
        return {}
    names = pyread.module_literals(tree)
    out: dict[str, list[dict]] = {}
    for node in tree.body:
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if not (isinstance(value, ast.Dict) and any(isinstance(t, ast.Name) and t.id == "_CASES" for t in targets)):
            continue
        for k, v in zip(value.keys, value.values):
            if not (isinstance(k, ast.Constant) and isinstance(v, (ast.Tuple, ast.List))):
                continue
            cases = []
            for call in v.elts:
                if not isinstance(call, ast.Call):
                    continue
                kwargs = pyread.call_kwargs(call, names)
                if call.args and isinstance(call.args[0], ast.Constant):
                    kwargs.setdefault("name", call.args[0].value)
                case = {"name": str(kwargs.get("name", ""))}
                for field in ("input_scales", "state_scales", "tolerance"):
                    if kwargs.get(field):
                        case[field] = {str(a): _tolerance_value(b) for a, b in kwargs[field].items()}
                cases.append(case)
            out[str(k.value)] = cases
    return out


# The deck's property stress (src/eval/property_stress.py) makes its cases with code, not
# data: Hypothesis strategies and the functions that mutate a problem's inputs. A problem it
# covers gets the deck's src/ package copied into its challenge folder, under this name,
# which the module harness imports in the checker (the deck's code, as reference.py is).
DECK_EVAL = "deck_eval"
PROPERTY_MODULE = "src.eval.property_stress"


def property_problems(path: Path) -> set[str]:
    """The problems property_stress.py has a case for: the keys of its
    ``_CANONICAL_CASES`` (each generated plan starts with that case)."""
    tree = pyread.parse(path) if path.is_file() else None
    if tree is None:
        return set()
    for node in tree.body:
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if isinstance(value, ast.Dict) and any(isinstance(t, ast.Name) and t.id == "_CANONICAL_CASES" for t in targets):
            return {k.value for k in value.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
    return set()


def add_property_stress(problem: Problem, bench: Path) -> None:
    """Copy the deck's src/ Python files (property_stress.py and what it imports) into the
    challenge, untouched, and name them in its [module] table."""
    src = bench / "src"
    for path in sorted(src.rglob("*.py")):
        if "__pycache__" not in path.parts:
            problem.files[f"{DECK_EVAL}/src/{path.relative_to(src).as_posix()}"] = path.read_bytes()
    problem.module["property_stress"] = {"path": DECK_EVAL, "module": PROPERTY_MODULE,
                                         "problem": problem.key}


def property_needs(deck: Deck, problem: Problem, bench: Path, repo: Path) -> None:
    """The parts of src/ the property stress imports (itself, the packages on the way and
    what their __init__.py files import, followed through) that the deck lacks: each is
    named missing with the property stress among what it loses, and the problem's run
    says the deck lacks it instead of failing to import the deck's code."""
    _, absent = pyread.import_closure(bench, PROPERTY_MODULE)
    for rel in absent:
        part = (bench / rel).relative_to(repo).as_posix() if bench.is_relative_to(repo) else rel
        name = deck.lacks(repo, part, f"{problem.key}'s property stress (src/eval/property_stress.py imports it, "
                                      "directly or through a package's __init__.py)", (RULE,))
        missing = problem.module.get("missing") or {}
        missing.setdefault("property_stress", name)
        problem.module["missing"] = missing


def hardware_targets(folder: Path) -> dict[str, dict]:
    """src/hardware/: TARGETS key -> {name, peak_bandwidth_gb_s, peak_tflops_dense}."""
    if not folder.is_dir():
        return {}
    objects: dict[str, dict] = {}  # variable name -> the HardwareTarget(...) keywords
    for path in sorted(folder.glob("*.py")):
        tree = pyread.parse(path)
        if tree is None:
            continue
        names = pyread.module_literals(tree)
        for node in tree.body:
            if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                    and isinstance(node.value, ast.Call)):
                kwargs = pyread.call_kwargs(node.value, names)
                if "peak_bandwidth_gb_s" in kwargs:
                    objects[node.targets[0].id] = kwargs
    targets = {}
    init = pyread.parse(folder / "__init__.py") if (folder / "__init__.py").is_file() else None
    for node in init.body if init is not None else []:
        if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "TARGETS" for t in node.targets)
                and isinstance(node.value, ast.Dict)):
            for k, v in zip(node.value.keys, node.value.values):
                if isinstance(k, ast.Constant) and isinstance(v, ast.Name) and v.id in objects:
                    targets[str(k.value)] = objects[v.id]
    for var, kwargs in objects.items():  # a deck without the TARGETS table: the variables' own names
        targets.setdefault(var, kwargs)
    return targets


def peak_for(meta: dict, hardware: dict[str, dict]) -> dict | None:
    names = meta.get("hardware") or []
    name = names[0] if isinstance(names, list) and names else names
    target = hardware.get(str(name)) if name else None
    if not target:
        return None
    tflops = target.get("peak_tflops_dense") or {}
    key = meta.get("peak_tflops_key")
    peak = {"hardware": str(target.get("name") or name), "bandwidth_gbps": float(target["peak_bandwidth_gb_s"])}
    if key in tflops:
        peak["tflops"] = float(tflops[key])
        peak["tflops_key"] = str(key)
    return peak


# -- published results ------------------------------------------------------------

def read_json(deck: Deck, path: Path, what: str):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        deck.problem(f"{what}: {path.name} is not readable JSON ({' '.join(str(exc).split())[:120]})")
        return None


def read_leaderboard(deck: Deck, path: Path) -> dict[str, dict]:
    """run id -> the leaderboard's entry, with its row's label, harness, model and effort."""
    if not path.is_file():
        return {}
    data = read_json(deck, path, "leaderboard")
    if not isinstance(data, dict) or not isinstance(data.get("models"), list):
        if data is not None:
            deck.problem(f"leaderboard: {path.name} has no `models` list; ignored")
        return {}
    hardware = data.get("hardware")
    if isinstance(hardware, dict) and hardware.get("name"):
        deck.board_gpu = str(hardware["name"])
    out = {}
    for row in data["models"]:
        if not isinstance(row, dict):
            continue
        results = row.get("results")
        for problem, entry in results.items() if isinstance(results, dict) else ():
            if isinstance(entry, dict) and entry.get("run_id"):
                out[str(entry["run_id"])] = {**entry, "problem": problem, "label": row.get("label"),
                                             "harness": row.get("harness"), "model": row.get("model"),
                                             "effort": row.get("effort")}
    return out


def read_details(deck: Deck, folder: Path) -> dict[str, dict]:
    out = {}
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        data = read_json(deck, path, f"result of run {path.stem}")
        if data is None:
            continue
        missing = [k for k in ("problem", "harness", "model") if not isinstance(data.get(k), str) or not data.get(k)] \
            if isinstance(data, dict) else ["all"]
        if missing:
            deck.problem(f"result of run {path.stem}: {path.name} lacks {', '.join(missing)} (or not as text); ignored")
            continue
        out[str(data.get("run_id") or path.stem)] = data
    return out


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _number(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _flag(value) -> bool | None:
    return value if isinstance(value, bool) else None


def result_row(detail: dict | None, board: dict | None) -> dict:
    """A published result as deck_results stores it; a field of the wrong type reads as absent."""
    detail, board = detail or {}, board or {}
    correct = _flag(detail.get("correct"))
    peak = _number(detail.get("peak_fraction"))
    shapes = detail.get("shapes")
    stats = {**_dict(detail.get("stats")), **({"gpu_lock": detail["gpu_lock"]} if _dict(detail.get("gpu_lock")) else {}),
             **({"elapsed_seconds": board["elapsed_seconds"]} if _number(board.get("elapsed_seconds")) is not None else {})}
    text = lambda v: None if v is None else str(v)  # noqa: E731
    return {
        "correct": correct if correct is not None else _flag(board.get("correct")),
        "failure_reason": text(detail.get("failure_reason")),
        "peak_fraction": peak if peak is not None else _number(board.get("peak_fraction")),
        "shapes": [s for s in shapes if isinstance(s, dict)] if isinstance(shapes, list) else [],
        "stats": stats,
        "regime": text(detail.get("regime")),
        "precision": text(detail.get("dtype")),
        "peak_tflops": _number(detail.get("peak_tflops")),
        "peak_bw_gbps": _number(detail.get("peak_bw_gb_s")),
        "board_correct": _flag(board.get("correct")),
        "board_peak_fraction": _number(board.get("peak_fraction")),
        "board_label": text(board.get("label")),
        "annotation_verdict": text(detail.get("annotation_verdict") or board.get("annotation_verdict")),
        "has_result": bool(detail),
    }


# -- runs -------------------------------------------------------------------------

def mangled(data: bytes) -> str | None:
    if not data.strip():
        return "it is empty"
    if b"\x00" in data:
        return "it holds NUL bytes (binary, not source)"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"it is not UTF-8 text (byte {exc.start})"
    return None


@functools.lru_cache(maxsize=1024)
def syntax_error(data: bytes) -> str | None:
    """Where the file stops parsing as Python, or None (parsing is most of a read's time: a
    deck read again in one process, as the tests do, parses each file once)."""
    try:
        ast.parse(data.decode("utf-8"))
    except SyntaxError as exc:
        return f"line {exc.lineno}: {exc.msg}"
    except ValueError as exc:  # source with NUL bytes (mangled() refuses those first)
        return str(exc)
    return None


# The deck's run file appends each file solution.py loads after a banner:
#   # ==================...
#   # ===== sidecar: w4a16_kernels.cu (8062 bytes, loaded by solution.py) =====
#   # ==================...
# then a blank line and the file (its size counted in bytes or in characters).
SIDECAR = re.compile(rb"^# =+\n# ===== sidecar: (?P<name>[^\n]+?) \((?P<size>\d+) bytes, loaded by [^)\n]+\) =====\n"
                     rb"# =+\n\n?", re.M)


def split_sidecars(data: bytes, answer_file: str) -> tuple[dict[str, bytes], dict[str, int], list[str]]:
    """The answer file and each sidecar of a run file, where each starts
    (1-based line of its first byte in the run file), and what did not fit.
    A run file with no sidecar gives ({}, {}, [])."""
    marks = list(SIDECAR.finditer(data))
    if not marks:
        return {}, {}, []
    head = data[:marks[0].start()]
    files = {answer_file: head[:-2] if head.endswith(b"\n\n\n") else head}  # the banner's two blank lines
    starts, problems = {}, []
    for i, m in enumerate(marks):
        name = m.group("name").decode("utf-8", "replace").strip()
        body = data[m.end():marks[i + 1].start() if i + 1 < len(marks) else len(data)]
        if i + 1 < len(marks) and body.endswith(b"\n\n\n"):
            body = body[:-2]
        if name in files or "/" in name or "\\" in name or name.startswith(".") or not name:
            problems.append(f"a sidecar named {name!r} cannot be a file of its own")
            return {}, {}, problems
        size = int(m.group("size"))
        if size not in (len(body), len(body.decode("utf-8", "replace"))):
            problems.append(f"sidecar {name}: its banner says {size} bytes, {len(body)} follow")
        files[name] = body
        starts[name] = data[:m.end()].count(b"\n") + 1
    return files, starts, problems


def problem_of(run_id: str, known: set[str]) -> str | None:
    hits = [p for p in known if run_id.endswith("_" + p)]
    return max(hits, key=len) if hits else None


def annotated_gpus(folder: Path) -> dict[str, str]:
    """run id -> the GPU its annotation names (its ``gpu``, else the problems-<gpu> its ``problem`` names)."""
    out = {}
    for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else []:
        try:
            data = yaml.load(path.read_text(encoding="utf-8"), Loader=YAML_LOADER)
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            continue  # said once, where the annotations are read
        if isinstance(data, dict) and data.get("run_id"):
            elsewhere = re.search(r"problems-(\w+)", _text(data.get("problem")))
            gpu = _text(data.get("gpu")) or (elsewhere.group(1) if elsewhere else "")
            if gpu:
                out[str(data["run_id"])] = gpu
    return out


def read_flat_runs(deck: Deck, runs: Path, details: dict[str, dict], board: dict[str, dict], notes: Path) -> None:
    """Run files directly in ``public/runs/`` (not under a GPU's folder): each is this GPU's
    run, and read as one, where its published result, its leaderboard row or its annotation
    says so; otherwise it is listed as left out, with why."""
    flat = sorted(p for p in runs.iterdir() if p.is_file()) if runs.is_dir() else []
    if not flat:
        return
    gpus = annotated_gpus(notes)
    mine, left = [], []
    for path in flat:
        if not path.name.endswith(RUN_SUFFIX):
            left.append(f"{path.name} (not a run file, *{RUN_SUFFIX})")
            continue
        run_id = path.name[: -len(RUN_SUFFIX)]
        said = gpus.get(run_id, "")
        if run_id in details or run_id in board:
            mine.append(path)  # its result file or leaderboard row is this GPU's
        elif said and _gpu_key(deck.gpu) in _gpu_key(said):
            mine.append(path)
        elif said:
            left.append(f"{path.name} (its annotation says {said}, not {deck.gpu})")
        else:
            left.append(f"{path.name} (no result file, leaderboard row or annotation says which GPU it ran on)")
    if mine:
        deck.notes.append(f"{len(mine)} run files directly in public/runs/ (not under {deck.gpu}/) are {deck.gpu} "
                          "runs by their result file, leaderboard row or annotation; imported")
        read_runs(deck, runs, details, board, paths=mine)
    if left:
        deck.notes.append(f"{len(left)} run files directly in public/runs/ left out: " + "; ".join(left[:20])
                          + (f"; and {len(left) - 20} more" if len(left) > 20 else ""))


def read_runs(deck: Deck, folder: Path, details: dict[str, dict], board: dict[str, dict],
              paths: list[Path] | None = None) -> None:
    """The run files of ``folder`` (``paths``: these of them only)."""
    if not folder.is_dir():
        return
    known = set(deck.problems) | {d["problem"] for d in details.values()} | {b["problem"] for b in board.values()}
    problems_dir = f"problems-{deck.gpu}/"
    for path in paths if paths is not None else sorted(folder.iterdir()):
        if not path.is_file():
            continue
        if not path.name.endswith(RUN_SUFFIX):
            deck.notes.append(f"{path.name}: not a run file (*{RUN_SUFFIX}); left out")
            continue
        run_id = path.name[: -len(RUN_SUFFIX)]
        detail, entry = details.get(run_id), board.get(run_id)
        problem = (detail or {}).get("problem") or (entry or {}).get("problem") or problem_of(run_id, known)
        if not problem:
            deck.problem(f"run {run_id}: unknown problem (its name ends in no problem of {problems_dir} and no "
                         "published result names one); not imported")
            continue
        if problem not in deck.problems:
            deck.problem(f"run {run_id}: its problem {problem} has no folder in {problems_dir}; not imported")
            continue
        data = path.read_bytes()
        why = mangled(data)
        if why:
            deck.problem(f"run {run_id}: the run file is mangled ({why}); not imported")
            continue
        harness = (detail or {}).get("harness") or (entry or {}).get("harness")
        deck_model = (detail or {}).get("model") or (entry or {}).get("model")
        if not (harness and deck_model):
            m = STAMP.match(run_id.removesuffix("_" + problem))
            rest = m.group(2) if m else run_id.removesuffix("_" + problem)
            harness, _, deck_model = rest.partition("_")
            deck_model = deck_model or harness
        base = slug(f"{harness}_{deck_model}", lower=False)[:MODEL_NAME_MAX]
        run = Run(run_id=run_id, problem=problem, model=base, base_model=base, harness=str(harness),
                  deck_model=str(deck_model), data=data, source=str(path), effort=(entry or {}).get("effort"),
                  on_board=entry is not None)
        run.result = result_row(detail, entry)
        files, run.sidecar_lines, misfits = split_sidecars(data, ANSWER_FILE)
        run.files = files or None
        for why in misfits:
            deck.notes.append(f"run {run_id}: {why}")
        if files:
            deck.notes.append(f"run {run_id}: solution.py carries {', '.join(n for n in files if n != ANSWER_FILE)} "
                              "appended; written as files of their own beside it")
        syntax = syntax_error(files.get(ANSWER_FILE, data))
        if syntax:
            deck.notes.append(f"run {run_id}: solution.py does not parse as Python ({syntax}); imported as it is")
        if detail is None:
            deck.notes.append(f"run {run_id}: no published result file; only the leaderboard's figures"
                              if entry else f"run {run_id}: no published result at all")
        deck.runs.append(run)


def check_leaderboard(deck: Deck, board: dict[str, dict], details: dict[str, dict], problems_dir: Path) -> None:
    """Entries naming runs that are not here, and figures the leaderboard and the
    run's result file disagree on; results of runs the deck says had no answer."""
    have = {r.run_id: r for r in deck.runs}
    elsewhere: dict[str, int] = {}
    for run_id, entry in board.items():
        problem = entry["problem"]
        if problem not in deck.problems:
            elsewhere[problem] = elsewhere.get(problem, 0) + 1
            continue
        run = have.get(run_id)
        if run is None:
            if entry.get("has_solution") is False:
                deck.results_without_answer.append({"run_id": run_id, "problem": problem,
                                                    "harness": entry.get("harness"), "deck_model": entry.get("model"),
                                                    "effort": entry.get("effort"),
                                                    **result_row(details.get(run_id), entry)})
            elif not any(line.startswith(f"run {run_id}:") for line in deck.problems_found):
                deck.problem(f"leaderboard names run {run_id} ({entry.get('label')}, {problem}), which "
                             f"public/runs/{deck.gpu}/ does not hold")
            continue
        detail = details.get(run_id)
        if detail is None:
            continue
        for what in ("correct", "peak_fraction"):
            a, b = detail.get(what), entry.get(what)
            if a is None or b is None:
                continue
            numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b))
            differ = abs(float(a) - float(b)) > SAME if numbers else a != b
            if differ:
                deck.problem(f"run {run_id}: its result file says {what} {a}, the leaderboard {b}")
    for run_id, detail in details.items():
        if run_id in have or run_id in board or detail["problem"] not in deck.problems:
            continue
        if detail.get("has_solution_text") is False:
            deck.results_without_answer.append({"run_id": run_id, "problem": detail["problem"],
                                                "harness": detail.get("harness"), "deck_model": detail.get("model"),
                                                "effort": None, **result_row(detail, None)})
        else:
            deck.problem(f"result of run {run_id}: public/runs/{deck.gpu}/ holds no answer for it")
    if elsewhere:
        listed = ", ".join(f"{p} ({n})" for p, n in sorted(elsewhere.items()))
        deck.notes.append(f"leaderboard entries of problems without a folder in {problems_dir.name}/: {listed}; not imported")


# -- annotations ------------------------------------------------------------------

# A GPU's model as an annotation or a peak names it: the same chip sold as an SXM module
# (HBM3) and a PCIe card (HBM2e) has other peaks, so one's figures are not the other's.
GPU_MODELS = (("SXM", re.compile(r"sxm|hbm3", re.I)), ("PCIe", re.compile(r"pcie|hbm2e", re.I)),
              ("NVL", re.compile(r"\bnvl", re.I)))


def gpu_model(text: str) -> str | None:
    return next((name for name, pattern in GPU_MODELS if pattern.search(text)), None)


def _gpu_key(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def deck_peak_gpu(deck: Deck) -> str:
    """The GPU the deck's peaks are of (its problems' peak hardware, else the leaderboard's), or ""."""
    return next((str(p.module["peak"]["hardware"]) for p in deck.problems.values() if p.module.get("peak")),
                deck.board_gpu)


def read_annotations(deck: Deck, folder: Path, board: dict[str, dict]) -> None:
    runs = {r.run_id: r for r in deck.runs}
    without = {r["run_id"] for r in deck.results_without_answer}
    peak_gpu = deck_peak_gpu(deck)
    other_gpus: dict[str, int] = {}       # annotations of runs on other GPUs, by GPU
    other_problems: dict[str, int] = {}   # of this GPU's runs of problems without a folder here
    no_answer = 0                         # of runs the deck published without an answer
    absent: dict[str, int] = {}           # of this GPU's runs of imported problems, whose run files the deck lacks
    for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else []:
        try:
            data = yaml.load(path.read_text(encoding="utf-8"), Loader=YAML_LOADER)
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            deck.problem(f"annotation {path.name}: not readable YAML ({' '.join(str(exc).split())[:120]}); ignored")
            continue
        if not isinstance(data, dict) or not data.get("run_id") or not data.get("verdict"):
            deck.problem(f"annotation {path.name}: no run_id or verdict; ignored")
            continue
        run_id = str(data["run_id"])
        run = runs.get(run_id)
        gpu = _text(data.get("gpu"))
        problem = _text(data.get("problem"))
        elsewhere = re.search(r"problems-(\w+)", problem)  # "01_fp8_gemm (problems-rtxpro6000 deck, ...)"
        if not gpu and elsewhere and elsewhere.group(1).lower() != deck.gpu:
            gpu = elsewhere.group(1)
        if gpu and _gpu_key(deck.gpu) not in _gpu_key(gpu):
            key = next((g for g in other_gpus if _gpu_key(g) == _gpu_key(gpu)), gpu)
            other_gpus[key] = other_gpus.get(key, 0) + 1
            continue
        if run is None:
            problem = problem.split()[0] if problem else problem_of(run_id, set(deck.problems)) or ""
            if problem and problem not in deck.problems:
                other_problems[problem] = other_problems.get(problem, 0) + 1
            elif run_id in without:
                no_answer += 1
            else:
                absent[problem or "?"] = absent.get(problem or "?", 0) + 1
            continue
        name = _text(data.get("gpu_name"))
        said = f"{gpu} ({name})" if gpu and name and name != gpu else gpu or name
        theirs, deck_model = gpu_model(said), gpu_model(peak_gpu)
        measured_on = said if theirs and deck_model and theirs != deck_model else None
        if measured_on:
            deck.problem(f"run {run_id}: its annotation ({path.name}) says it was measured on {measured_on}, not the "
                         f"{peak_gpu} the deck's peak_fraction is a fraction of; marked, and left out of rankings")
        annotation: dict[str, Any] = {
            "verdict": str(data["verdict"]), "summary": _text(data.get("summary") or data.get("evidence")),
            "peak_fraction": _number(data.get("peak_fraction")), "auditor": _text(data.get("auditor")),
            "source": path.name, "quotes": [], "body": data, "measured_on": measured_on}
        for q in data.get("quotes") or []:
            quote = read_quote(deck, run, path.name, q)
            if quote:
                annotation["quotes"].append(quote)
        entry = board.get(run.run_id)
        theirs = entry.get("peak_fraction") if entry else (run.result or {}).get("peak_fraction")
        mine = data.get("peak_fraction")
        if isinstance(mine, (int, float)) and isinstance(theirs, (int, float)) and abs(mine - theirs) > SAME:
            said = "the leaderboard" if entry else "its result file"
            deck.problem(f"run {run.run_id}: its annotation ({path.name}) says peak_fraction {mine}, {said} {theirs}")
        run.annotations.append(annotation)
    if other_gpus:
        deck.notes.append(f"{sum(other_gpus.values())} annotations are of runs on other GPUs ("
                          + ", ".join(f"{g}: {n}" for g, n in sorted(other_gpus.items())) + "); left out")
    if other_problems:
        deck.notes.append(f"{sum(other_problems.values())} annotations are of {deck.gpu} runs of problems without a "
                          f"folder in problems-{deck.gpu}/ (" + ", ".join(f"{p}: {n}" for p, n in sorted(other_problems.items()))
                          + "); left out")
    if no_answer:
        deck.notes.append(f"{no_answer} annotations are of runs the deck published without an answer; left out")
    if absent:
        deck.notes.append(f"{sum(absent.values())} annotations are of {deck.gpu} runs of imported problems whose run "
                          f"files public/runs/{deck.gpu}/ does not hold (" + ", ".join(f"{p}: {n}" for p, n in sorted(absent.items()))
                          + "); left out")


def _text(value) -> str:
    return " ".join(str(value).split()) if value else ""


def read_quote(deck: Deck, run: Run, source: str, q) -> dict | None:
    if not isinstance(q, dict):
        return None
    lines = q.get("lines") or []
    if isinstance(lines, int):
        lines = [lines, lines]
    if not (isinstance(lines, list) and lines and all(isinstance(n, int) for n in lines)):
        deck.problem(f"run {run.run_id}: a quote of its annotation ({source}) names no lines; kept without a place")
        lines = []
    start, end = (lines[0], lines[-1]) if lines else (None, None)
    quote = {"file": ANSWER_FILE if str(q.get("file") or ANSWER_FILE) in (ANSWER_FILE, Path(run.source).name) else str(q["file"]),
             "start": start, "end": end, "label": _text(q.get("label")), "text": str(q.get("text") or "")}
    # a line past the answer file's own falls in a sidecar: quoted at that file's line
    into = [(name, first) for name, first in run.sidecar_lines.items() if start is not None and start >= first]
    if into and quote["file"] == ANSWER_FILE:
        name, first = max(into, key=lambda kv: kv[1])
        quote.update(file=name, start=start - first + 1, end=end - first + 1)
    if start is not None and quote["file"] in (run.files or {ANSWER_FILE: run.data}):
        have = (run.files or {ANSWER_FILE: run.data})[quote["file"]].decode("utf-8", "replace").splitlines()
        start, end = quote["start"], quote["end"]
        first = next((ln.strip() for ln in quote["text"].splitlines() if ln.strip()), "")
        held = " ".join(have[start - 1:end]) if 0 < start <= len(have) else ""
        if first and first not in held:
            deck.problem(f"run {run.run_id}: its annotation ({source}) quotes {quote['file']}:{start}-{end}, "
                         "which hold other text")
    return quote


# -- model names ------------------------------------------------------------------

def name_models(deck: Deck) -> None:
    """One model per harness and model (``codex_gpt-5.5``); where the deck ran one
    harness and model at several efforts, one per effort (``grok_grok-4.5_high``);
    where a cell has several runs, the one the leaderboard counts takes the name
    and the others keep their stamp (``..._20260719_034935``)."""
    for run in deck.runs:
        if run.effort is None:
            run.effort = next((str(a["body"].get("effort")) for a in run.annotations if a["body"].get("effort")), None)
    efforts: dict[str, set] = {}
    for run in deck.runs:
        efforts.setdefault(run.base_model, set()).add(run.effort)
    for run in deck.runs:
        if len(efforts[run.base_model]) > 1 and run.effort:
            run.model = slug(f"{run.base_model}_{run.effort}", lower=False)[:MODEL_NAME_MAX]
    taken: set[tuple[str, str]] = set()
    for run in sorted(deck.runs, key=lambda r: (not r.on_board, r.run_id)):
        if (run.model, run.problem) in taken:
            m = STAMP.match(run.run_id)
            stamp = m.group(1) if m else slug(run.run_id)[:15]
            counted = run.model
            run.model = f"{run.model[:MODEL_NAME_MAX - len(stamp) - 1]}_{stamp}"
            deck.notes.append(f"run {run.run_id}: another run of {run.harness}/{run.deck_model} on {run.problem} "
                              f"takes the model {counted}; this one is the model {run.model}")
        taken.add((run.model, run.problem))
