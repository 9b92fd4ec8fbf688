"""An answer's adapter scaffold written into its workbench: `benchtui adapter new` and the answer
screen's key. The adapters themselves (where they live, which one binds) are
engine/challenges/adapters.py's."""
from __future__ import annotations

from pathlib import Path

from benchtui.challenges.adapters import AdapterError, AlreadyBinds, already_binds, display_path, nothing_to_adapt, scaffold
from benchtui.challenges.definition import Challenge, challenge_for_name
from benchtui.host.resources import refuse_install_write
from benchtui.store.database import Store
from benchtui.store.queries import latest_run, run_checks
from benchtui.workbench.layout import Workbench


def locate(workbench: Workbench, model: str, challenge_name: str) -> tuple[Challenge, Path]:
    """(challenge, answer folder) for a model and a challenge id or display name."""
    challenge = challenge_for_name(challenge_name, workbench.challenges)
    if challenge is None:
        raise AdapterError(f"unknown challenge {challenge_name!r}; known: {', '.join(workbench.challenges)}")
    models = workbench.model_dirs()
    if model not in models:
        raise AdapterError(f"unknown model {model!r}; known: {', '.join(models) or 'none'}")
    folder = models[model] / challenge.id
    if not folder.is_dir():
        raise AdapterError(f"{model} has no {challenge.id} answer (no folder {display_path(folder, workbench.root)})")
    return challenge, folder


def scaffold_for(workbench: Workbench, model: str, challenge_name: str, *, force: bool = False,
                 store: Store | None = None) -> Path:
    """``benchtui adapter new``: the scaffold for one answer of a workbench.

    Unless ``force``, raises :class:`AlreadyBinds` when the answer binds today
    (``store``, when given, supplies its latest run)."""
    challenge, folder = locate(workbench, model, challenge_name)
    if refusal := refuse_install_write(workbench.root):  # before any other reason: nothing is written there, forced or not
        raise ValueError(refusal)
    if refusal := nothing_to_adapt(model, challenge.id, folder):
        raise AdapterError(refusal)
    if not force:
        latest, checks = None, None
        if store is not None:
            latest = latest_run(store, model, challenge.id)
            checks = run_checks(store, latest["id"]) if latest else None
        reason = already_binds(workbench.root, challenge, model, folder, latest, checks)
        if reason:
            raise AlreadyBinds(f"{reason}; pass --force to write a scaffold anyway")
    return scaffold(workbench.root, challenge, model, folder, force=force)
