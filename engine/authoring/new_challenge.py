"""``benchtui challenge new ID [--from PROMPT.md]``: a working plugin in
``WORKBENCH/challenges/ID/``.

The scaffold is a complete small challenge (softmax over the last axis) so
that ``challenge check`` passes on it at once: the author then replaces the
task piece by piece (prompt, requirements, reference, checks) and re-checks.
With ``--from``, the prompt is the author's own and the placeholder
requirements no longer quote it, which ``challenge check`` reports until the
author writes the real ones.
"""
from __future__ import annotations

import re
from pathlib import Path

from benchtui.challenges.prompts import prompt_sha256

CHALLENGE_ID = re.compile(r"^[a-z][a-z0-9_]{0,47}$")


class ScaffoldError(Exception):
    """A bad id or a folder that exists: the message is for the user."""


PLACEHOLDER_PROMPT = """\
# {title}

Implement `{fn}(x)` in NumPy: return the softmax of `x` over its last axis,
for a float64 array of any shape.

Requirements:

- Return an array of x's shape in which every row along the last axis is the
  softmax of that row.
- Stay finite and accurate for inputs of large magnitude (entries up to 1e4).
- Use NumPy only: no torch, tensorflow or jax.
"""

TOML = """\
id = "{id}"
title = {title}
difficulty = "MEDIUM"
language = "python"
order = 100
backends = ["cpu"]
display_names = []
forbidden_imports = ["torch", "tensorflow", "jax", "autograd"]
data_files = []

[limits]
timeout_s = 120
memory_mb = 2048
cpu_s = 240
self_check_timeout_s = 60

[thresholds]
# relative error allowed against the float64 reference; `challenge check`
# wants the reference's own error at least 10x inside it
tol = 1e-9
large = 1e4
random_trials = 20
speed_shape = [64, 4096]
timing_budget_s = 1.0

# What the prompt asks for, quoted from PROMPT.md (whitespace and case do not
# matter): each check names the ids it tests (`requires=` in conformance.py).
[requirements]
{requirements}

# Prompt versions (docs/verdicts.md): the sha256 of the whitespace-normalised
# PROMPT.md. `challenge check` prints the new hash when PROMPT.md changes.
[prompts.workbench]
sha256 = ["{sha}"]
checks = []
"""

REQUIREMENTS = {
    "softmax_rows": "every row along the last axis is the softmax of that row",
    "large_inputs": "Stay finite and accurate for inputs of large magnitude",
}

REFERENCE = '''\
"""Trusted reference for `{id}`: the oracle and the speed baseline.

Scaffolded by `benchtui challenge new` with a placeholder task (softmax over
the last axis): replace it with your task, computed in float64.
"""
from __future__ import annotations

import numpy as np


def {fn}(x: np.ndarray) -> np.ndarray:
    z = x - x.max(axis=-1, keepdims=True)  # the largest entry becomes 0: exp cannot overflow
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)
'''

CONFORMANCE = '''\
"""Hidden checks for `{id}`, written against benchtui.api (docs/authoring.md).

Contract: `{fn}(x) -> array of x's shape` (see ADAPTER.md). This file runs in
the checker's process and never imports answer code: `suite.find` returns a
proxy to the answer's function in the answer's own process.
"""
from __future__ import annotations

import math

import numpy as np

from benchtui.api import Check, Suite

NAMES = ("{fn}",)  # the name the prompt asks for first, then variants answers use


def bind(suite: Suite):
    adapter = suite.adapter()
    if adapter is not None and hasattr(adapter, NAMES[0]):
        return getattr(adapter, NAMES[0])
    fn = suite.find(*NAMES, kind="function")
    if fn is None:
        raise suite.unbound(list(NAMES))
    return fn


def rel_err(got, want) -> float:
    """Norm-wise relative error against the float64 reference (inf when not finite)."""
    got = np.asarray(got, dtype=np.float64)
    if got.shape != want.shape:
        return math.inf
    if not np.all(np.isfinite(got)):
        return math.inf
    return float(np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-300))


def judge(suite: Suite, c: Check, fn, x) -> None:
    """One comparison: the answer's result against the reference's, on a copy of x."""
    want = suite.reference().{fn}(np.array(x, dtype=np.float64))
    err = rel_err(suite.call(fn, x), want)
    c.value = max(c.value or 0.0, err)
    if not err <= c.threshold:
        c.fail(f"relative error {{err:.3g}} above {{c.threshold:g}} at shape {{x.shape}}")


def run(suite: Suite) -> None:
    fn = bind(suite)
    tol = float(suite.threshold("tol", 1e-9))

    # A fixed case aimed at one defect: entries of 1e4 overflow a naive exp.
    with suite.check("fixed_large_inputs", threshold=tol, requires=("large_inputs",)) as c:
        big = float(suite.threshold("large", 1e4))
        judge(suite, c, fn, np.array([[big, big - 1.0, -big, 0.0], [-big, -big, -big + 2.0, -big]]))

    # Random draws from the run's secret seed: shapes and scales vary per run,
    # so an answer cannot be tuned to the cases.
    with suite.check("random_cases", threshold=tol, requires=("softmax_rows",)) as c:
        rng = suite.rng("random_cases")
        for _ in range(int(suite.threshold("random_trials", 20))):
            shape = tuple(int(n) for n in rng.integers(1, 9, size=rng.integers(1, 4)))
            judge(suite, c, fn, rng.normal(size=shape) * rng.uniform(0.1, 10.0))

    # A figure, never a verdict: the answer's speed against the reference's.
    ref = suite.reference()
    shape = tuple(suite.threshold("speed_shape", [64, 4096]))
    base = suite.rng("speed").normal(size=shape)
    suite.time("speed", lambda x: fn(x), lambda x: ref.{fn}(x), lambda trial: base + trial * 1e-3)
'''

ADAPTER = """\
An adapter module for `{id}` defines `{fn}(x)` -> an array of x's shape
(NumPy, float64): the answer's computation with the contract's name and
argument order. It only translates calls; it never changes what the answer
computes.
"""


def title_of(prompt: str, fallback: str) -> str:
    """The prompt's first Markdown heading, else its first line, else ``fallback``."""
    lines = [line.strip() for line in prompt.splitlines() if line.strip()]
    for line in lines:
        if line.startswith("#"):
            return line.lstrip("#").strip()[:80] or fallback
    return lines[0][:80] if lines else fallback


def toml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def scaffold_challenge(challenges_dir: Path, cid: str, prompt: str | None = None) -> Path:
    """Write ``challenges_dir/cid/`` (refuses an existing folder); returns it."""
    if not CHALLENGE_ID.match(cid):
        raise ScaffoldError(f"bad challenge id {cid!r}: lowercase letters, digits and '_', starting with a letter")
    folder = challenges_dir / cid
    if folder.exists():
        raise ScaffoldError(f"{folder} already exists; refusing to overwrite")
    default_title = cid.replace("_", " ").capitalize()
    if prompt is None:
        prompt = PLACEHOLDER_PROMPT.format(title=default_title, fn=cid)
    title = title_of(prompt, default_title)
    fields = {"id": cid, "fn": cid}
    requirements = "\n".join(f"{key} = {toml_string(words)}" for key, words in REQUIREMENTS.items())
    files = {
        "PROMPT.md": prompt,
        "challenge.toml": TOML.format(id=cid, title=toml_string(title), requirements=requirements,
                                      sha=prompt_sha256(prompt)),
        "reference.py": REFERENCE.format(**fields),
        "conformance.py": CONFORMANCE.format(**fields),
        "ADAPTER.md": ADAPTER.format(**fields),
        "adapters/README.md": f"Reviewer-written adapters for `{cid}`: `<model>.py`, one per answer whose API "
                              "differs from the contract in ../ADAPTER.md.\n",
    }
    (folder / "adapters").mkdir(parents=True)
    for rel, text in files.items():
        (folder / rel).write_text(text, encoding="utf-8")
    return folder
