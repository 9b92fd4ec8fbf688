"""`benchtui model new NAME` (also spelled `new-model`): an empty answer folder per challenge."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

from benchtui.challenges.definition import Challenge

MODEL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class ScaffoldError(Exception):
    pass


class BadModelName(ScaffoldError):
    """A name that is not a folder name of its own (``../evil``): a usage error."""


def carried_prompts(answer_dirs: dict[str, list[Path]]) -> dict[str, tuple[bytes, int, int]]:
    """Challenge id -> (the PROMPT.md most of its answers carry, how many carry it, how many
    answers carry one): a workbench whose answers were written to their own prompts (a
    published benchmark's) hands a new model the same prompt, not benchtui's."""
    out = {}
    for cid, folders in answer_dirs.items():
        texts = []
        for folder in folders:
            try:
                texts.append((folder / "PROMPT.md").read_bytes())
            except OSError:
                continue
        if texts:
            common = max(set(texts), key=texts.count)
            out[cid] = (common, texts.count(common), len(texts))
    return out


def new_model(models_dir: Path, name: str, challenges: dict[str, Challenge],
              prompts: dict[str, bytes] | None = None) -> list[Path]:
    """Create models_dir/NAME/<id>/PROMPT.md (+ data files) for every challenge, the
    PROMPT.md ``prompts`` gives where it gives one (the prompt the other answers carry).

    Refuses to touch an existing model folder: it may hold answers."""
    if not MODEL_NAME.match(name):
        raise BadModelName(f"bad model name {name!r}: use letters, digits, '.', '_' or '-' (max 64)")
    if not challenges:
        raise ScaffoldError("no challenges found to scaffold")
    from benchtui.host.resources import refuse_install_write

    if refusal := refuse_install_write(models_dir):
        raise ScaffoldError(refusal)
    target = models_dir / name
    if target.exists():
        raise ScaffoldError(f"{target} already exists; refusing to overwrite")
    created = []
    for cid, challenge in challenges.items():
        folder = target / cid
        folder.mkdir(parents=True)
        if prompts and cid in prompts:
            (folder / "PROMPT.md").write_bytes(prompts[cid])
        else:
            shutil.copyfile(challenge.prompt_path, folder / "PROMPT.md")
        created.append(folder / "PROMPT.md")
        for rel in challenge.data_files:
            src = challenge.path / "data" / rel
            if src.is_file():
                dst = folder / rel
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dst)
                created.append(dst)
    return created
