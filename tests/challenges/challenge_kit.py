"""Helpers the challenge tests share: a copy of a challenge with lighter
sizes, answers written from source, and mutants of a reference."""
from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path
from types import SimpleNamespace

from benchtui.challenges import coverage, prompts
from benchtui.challenges.definition import BUNDLED_CHALLENGES, load_challenge
from benchtui.records.job import Job, host_thresholds
from benchtui.runner.local import local_answer_process
from benchtui.verify.binding import load_module
from benchtui.verify.execute import new_suite, run_conformance, verdict_of


def fast_copy(cid: str, dest: Path, overrides: dict[str, str]) -> Path:
    """``dest/challenges/<cid>`` with some ``[thresholds]`` sizes replaced
    (tolerances stay as shipped); returns the challenges folder. Idempotent."""
    folder = dest / "challenges" / cid
    if not folder.exists():
        shutil.copytree(BUNDLED_CHALLENGES / cid, folder)
        toml = folder / "challenge.toml"
        text = toml.read_text()
        for key, value in overrides.items():
            text, n = re.subn(rf"(?m)^{key} = .*$", f"{key} = {value}", text)
            assert n == 1, f"{cid}/challenge.toml has no single `{key} = ...` line"
        toml.write_text(text)
    return dest / "challenges"


def write_answer(tmp_path: Path, filename: str, source: str) -> Path:
    """An answer folder holding one file."""
    folder = tmp_path / "answer"
    folder.mkdir()
    (folder / filename).write_text(source)
    return folder


def mutate_source(source: str, *edits: tuple[str, str], count: int = -1) -> str:
    """Apply text edits; an anchor that vanished fails loudly (a mutant that
    silently equals the reference would prove nothing)."""
    for old, new in edits:
        assert old in source, f"mutation anchor missing from the reference: {old!r}"
        source = source.replace(old, new, count)
    return source


def checks_by_name(result: dict) -> dict:
    return {c["name"]: c for c in result["checks"]}


def run_stages(cid: str, answer_dir: Path, stages: tuple[str, ...], *, seed: int, challenges_dir: Path,
               model: str = "local", adapter: Path | None = None) -> dict:
    """``run_local`` cut to some stages of the suite (its conformance's
    ``run_stages(suite, stages)``): the checks a test is about, run exactly as
    in a whole run (checks here, the answer in its own process, on a scratch
    copy), without the stages that cost the time and judge something else."""
    return run_variants(cid, answer_dir, {"": ({}, stages)}, seed=seed, challenges_dir=challenges_dir, model=model,
                        adapter=adapter)[""]


def run_variants(cid: str, answer_dir: Path, variants: dict[str, tuple[dict[str, str], tuple[str, ...]]], *,
                 seed: int, challenges_dir: Path, model: str = "local", adapter: Path | None = None) -> dict[str, dict]:
    """Variants of one answer (name -> ({file: its source}, stages)), each judged as
    ``run_stages`` judges it, in one answer process: each variant's files are
    written over a scratch copy of the answer (the others as they were), and the
    modules the process imported from the answer's folder are dropped, so the
    variant's code is imported afresh; what it imported from elsewhere (MLX,
    mlx_lm and the transformers it pulls in: most of an MLX answer's start-up)
    stays imported."""
    challenge = load_challenge(Path(challenges_dir) / cid)
    conformance = load_module(challenge.path / "conformance.py", f"benchtui_conformance_{cid}_stages")
    out: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="benchtui-stages-") as tmp:
        folder = Path(tmp) / "answer"
        shutil.copytree(answer_dir, folder, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
        adapter_path = adapter or challenge.adapter_path(model)
        version, _ = prompts.answer_prompt(challenge, folder)
        job = Job(challenge_id=challenge.id, challenge_dir=str(challenge.path), answer_dir=str(folder), model=model,
                  seed=seed, backend="cpu",
                  thresholds=host_thresholds({**challenge.thresholds, **prompts.version_thresholds(challenge, version)}),
                  prompt_version=version, version_checks=prompts.version_checks(challenge) if version else {},
                  forbidden_imports=list(challenge.forbidden_imports),
                  adapter_path=str(adapter_path) if adapter_path else None)
        pristine = {rel: (folder / rel).read_bytes() for files, _ in variants.values() for rel in files}
        with local_answer_process(folder, Path(adapter_path) if adapter_path else None) as (peer, monitor):
            for name, (files, stages) in variants.items():
                for rel, original in pristine.items():
                    (folder / rel).write_bytes(original)
                for rel, source in files.items():
                    (folder / rel).write_text(source)
                for cache in folder.rglob("__pycache__"):  # a rewrite of the same size and second looks unchanged
                    shutil.rmtree(cache)
                suite = new_suite(job, peer=peer, monitor=monitor)
                suite.answer_side("forget")
                run_conformance(SimpleNamespace(run=lambda s, stages=stages: conformance.run_stages(s, stages)), suite)
                checks = [c.as_dict() for c in suite.checks]
                verdict, _ = coverage.for_run(challenge, version, checks, verdict_of(suite))
                out[name] = {"verdict": verdict, "checks": checks}
    return out
