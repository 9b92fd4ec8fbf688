"""Development harness: run a conformance suite in this process, no sandbox.

    python -m engine.verify.local CHALLENGE ANSWER_DIR [--model NAME] [--seed N]

For challenge authors and tests of trusted code (references, mutants written
by this project). Untrusted answers go through ``benchtui run``.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

from engine.challenges import BUNDLED_CHALLENGES, load_challenge
from engine.verify.execute import Job, execute, verdict_of


def _forget_imports(roots: list[Path], path_before: list[str]) -> None:
    """Drop modules imported from the answer (and adapters) and the sys.path
    entries added for it, so the next in-process run cannot see them."""
    roots = [r.resolve() for r in roots]
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if file and any(Path(file).resolve().is_relative_to(r) for r in roots):
            del sys.modules[name]
    sys.path[:] = [p for p in sys.path if p in path_before]


def run_local(challenge_id: str, answer_dir: Path | str, *, model: str = "local", seed: int = 1234,
              backend: str = "cpu", challenges_dir: Path = BUNDLED_CHALLENGES, adapter: Path | str | None = None,
              copy: bool = True) -> dict:
    """Run in-process on a scratch copy; returns {"verdict", "checks"}."""
    challenge = load_challenge(Path(challenges_dir) / challenge_id)
    with tempfile.TemporaryDirectory(prefix="benchtui-local-") as tmp:
        folder = Path(answer_dir)
        if copy:
            folder = Path(tmp) / "answer"
            shutil.copytree(answer_dir, folder, symlinks=True)
        adapter_path = adapter or challenge.adapter_path(model)
        path_before = list(sys.path)
        try:
            suite = execute(Job(
                challenge_id=challenge.id, challenge_dir=str(challenge.path), answer_dir=str(folder), model=model,
                seed=seed, backend=backend, thresholds=challenge.thresholds,
                forbidden_imports=list(challenge.forbidden_imports),
                adapter_path=str(adapter_path) if adapter_path else None,
            ))
        finally:
            roots = [folder, Path(answer_dir)] + ([Path(adapter_path).parent] if adapter_path else [])
            _forget_imports(roots, path_before)
        return {"verdict": verdict_of(suite), "checks": [c.as_dict() for c in suite.checks]}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("challenge")
    p.add_argument("answer_dir")
    p.add_argument("--model", default="local")
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--backend", default="cpu")
    p.add_argument("--adapter")
    p.add_argument("--json", action="store_true")
    a = p.parse_args()
    out = run_local(a.challenge, a.answer_dir, model=a.model, seed=a.seed, backend=a.backend, adapter=a.adapter)
    if a.json:
        print(json.dumps(out, indent=2))
        return
    print(f"verdict: {out['verdict']}")
    for c in out["checks"]:
        print(f"  {c['verdict']:<13} {c['name']:<32} value={c['value']} threshold={c['threshold']}  {c['message'][:150]}")


if __name__ == "__main__":
    main()
