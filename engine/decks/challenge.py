"""An imported problem as a challenge folder of the workbench
(``challenges/<id>/``): the deck's own files copied untouched, PROMPT.md,
challenge.toml in benchtui's format with the ``[module]`` table the PyTorch
module harness reads (``engine/verify/module/suite.py``), ADAPTER.md (the
contract an answer meets) and a conformance.py that hands the run to that
harness."""
from __future__ import annotations

import json
import math

from benchtui.challenges.prompts import prompt_sha256, prompt_versions
from benchtui.decks.model import Deck, Problem
from benchtui.store import decks_sql

CONFORMANCE = ('"""Hidden checks for an imported deck problem: the module harness (docs/decks.md)."""\n'
               "from benchtui.api import run_module_suite as run  # noqa: F401\n")
PROMPT_VERSION = "deck"
# file_size_mb: the decks' tensors (weights and inputs of several GB at their H100 sizes)
# cross between the checker and the answer as shared-memory files, which RLIMIT_FSIZE caps
LIMITS = {"timeout_s": 1200.0, "memory_mb": 32768, "cpu_s": 2400, "self_check_timeout_s": 60.0,
          "file_size_mb": 16384}

ADAPTER = """\
# {title}: the answer's contract

Imported from {deck_title} (problem `{problem}`). The answer is one file,
`{answer_file}`, defining `class {answer_class}(torch.nn.Module)` with the
reference's constructor arguments (`get_init_inputs()` of `reference.py`) and
a `forward` taking `get_inputs()`'s tensors and returning what the
reference's `Model.forward` returns.

{weights}

The checks: the deck's own rules (its seeds, {shapes}tolerances{stress},
forbidden ops) reproduced as a labelled figure, then benchtui's own
(docs/decks.md). An adapter (`adapters/<model>.py`) is rarely needed: it
would re-export the answer's module under the name `{answer_class}`.
"""
WEIGHTS = {
    "load_state_dict": "Weights are shared as the deck shares them: the reference's `state_dict()` is "
                       "loaded into the answer's module with `load_state_dict(strict=True)`, so the answer "
                       "registers the same parameters and buffers.",
    "seeded": "Weights are shared as the deck shares them: both modules are built after seeding the same "
              "random generator, so an answer builds its layers in the reference's order.",
}


def toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return ("-" if value < 0 else "") + ("nan" if math.isnan(value) else "inf")
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"no TOML for {type(value).__name__}")


def toml_key(key) -> str:
    key = str(key)
    return key if key and all(c.isalnum() or c in "_-" for c in key) else json.dumps(key)


def toml_table(name: str, table: dict) -> list[str]:
    """``[name]`` with its scalars first, then its sub-tables and arrays of tables."""
    lines = [f"[{name}]"]
    subs = []
    for key, value in table.items():
        if value is None:
            continue
        if isinstance(value, dict) and value and all(not isinstance(v, dict) or k for k, v in value.items()) \
                and name.count(".") < 1 and key not in ("words",):
            subs.append(("table", key, value))
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            subs.append(("array", key, value))
        else:
            lines.append(f"{toml_key(key)} = {toml_value(value)}")
    for kind, key, value in subs:
        lines.append("")
        if kind == "table":
            lines.extend(toml_table(f"{name}.{toml_key(key)}", value))
        else:
            for item in value:
                lines.append(f"[[{name}.{toml_key(key)}]]")
                lines.extend(f"{toml_key(k)} = {toml_value(v)}" for k, v in item.items() if v is not None)
    return lines


def challenge_toml(deck: Deck, problem: Problem) -> str:
    head = [
        f"# Imported by `benchtui import` from {deck.title}: problem {problem.key}",
        f"# ({problem.source}, deck commit {deck.commit or 'unknown'}). The deck's own files sit beside this one,",
        "# untouched; [module] is what the PyTorch module harness reads (docs/decks.md).",
        f"id = {toml_value(problem.challenge)}",
        f"title = {toml_value(problem.title)}",
        f"difficulty = {toml_value(deck.title)}",
        'language = "python"',
        f"order = {problem.order}",
        'backends = ["cuda", "cpu"]',
        f"display_names = {toml_value(list(problem.display_names))}",
        "forbidden_imports = []",
        "",
        *toml_table("limits", LIMITS),
        "",
        "# What the prompt asks for, in its own words (engine/challenges/coverage.py).",
        "[requirements]",
        *(f"{toml_key(k)} = {toml_value(v)}" for k, v in problem.requirements.items()),
        "",
        f"[prompts.{PROMPT_VERSION}]",
        "# the deck's prompt, as PROMPT.md holds it",
        f"sha256 = [{toml_value(prompt_sha256(problem.prompt))}]",
        "checks = []",
        f"requirements = {toml_value(list(problem.requirements))}",
        "",
        *toml_table("module", problem.module),
    ]
    return "\n".join(head) + "\n"


def adapter_md(deck: Deck, problem: Problem) -> str:
    m = problem.module
    return ADAPTER.format(title=problem.title, deck_title=deck.title, problem=problem.key,
                          answer_file=m["answer_file"], answer_class=m["answer_class"],
                          weights=WEIGHTS.get(m["weights"], ""),
                          shapes="shapes (`shapes.py`), " if m.get("shapes") else "",
                          stress=", numeric stress cases" if m.get("stress") else "")


def challenge_files(deck: Deck, problem: Problem) -> dict[str, bytes]:
    """Every file of the challenge folder, by its path inside it."""
    files = dict(problem.files)
    prompt = problem.prompt if problem.prompt.endswith("\n") else problem.prompt + "\n"
    files.update({
        "PROMPT.md": prompt.encode("utf-8"),
        "challenge.toml": challenge_toml(deck, problem).encode("utf-8"),
        "conformance.py": CONFORMANCE.encode("utf-8"),
        "ADAPTER.md": adapter_md(deck, problem).encode("utf-8"),
    })
    return files


def imported_prompt(store, challenge, model: str) -> tuple[str, str, str, str] | None:
    """(version, sha256, source, what the run says) of an answer the store records as
    imported from a deck, whose challenge declares the deck's prompt version: the deck
    gave every run its problem's PROMPT.txt, which the import wrote as the challenge's
    PROMPT.md (prompt version ``deck``). None for any other answer."""
    spec = prompt_versions(challenge).get(PROMPT_VERSION)
    if not spec or not spec["sha256"] or "deck_results" not in store.table_names():
        return None
    runs = [r for r in decks_sql.answer_results(store, model, challenge.id) if r.get("has_answer")]
    if not runs:
        return None
    run = runs[0]
    source = f"the {run['deck']} import, run {run['run_id']}"
    said = (f"the import records it as {run['deck']}'s run {run['run_id']}, whose prompt was the problem's "
            f"PROMPT.txt: prompt version {PROMPT_VERSION}, the challenge's PROMPT.md")
    return PROMPT_VERSION, spec["sha256"][0], source, said
