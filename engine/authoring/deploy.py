"""``benchtui deploy ID [-m MODEL ...]``: hand a challenge to every model.

Writes the challenge's PROMPT.md and data files into ``<model>/<id>/`` where
they are missing (the published benchmark's ``deploy_challenges.sh``, as a
command). A folder that holds anything else (an answer, a transcript, notes)
is never touched, and nothing that exists is overwritten.
"""
from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from benchtui.challenges.definition import Challenge


@dataclass
class Deployed:
    model: str
    folder: str  # relative to the workbench
    action: str  # "written", "up_to_date", "skipped"
    written: list[str] = field(default_factory=list)
    reason: str = ""

    def as_dict(self) -> dict:
        return {"model": self.model, "folder": self.folder, "action": self.action, "written": self.written,
                "reason": self.reason}


def handed_out(challenge: Challenge) -> dict[str, Path]:
    """What a model's folder receives: relative path -> source file."""
    files = {"PROMPT.md": challenge.prompt_path}
    for rel in challenge.data_files:
        files[rel] = challenge.path / "data" / rel
    return files


def _extra_files(folder: Path, handed: set[str]) -> list[str]:
    """Files in ``folder`` that deploy would not have written: an answer begun."""
    out = []
    for path in sorted(folder.rglob("*")):
        if path.is_file() or path.is_symlink():
            rel = path.relative_to(folder).as_posix()
            if rel not in handed:
                out.append(rel)
    return out


def deploy(workbench, challenge: Challenge, models: dict[str, Path]) -> list[Deployed]:
    files = handed_out(challenge)
    missing_sources = [rel for rel, src in files.items() if not src.is_file()]
    if missing_sources:
        raise FileNotFoundError(f"challenge {challenge.id} lacks {', '.join(missing_sources)} to hand out")
    out = []
    for model, model_dir in models.items():
        folder = model_dir / challenge.id
        rel_folder = folder.relative_to(workbench.root).as_posix()
        if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
            out.append(Deployed(model, rel_folder, "skipped", reason="not a plain folder"))
            continue
        if folder.is_dir():
            extra = _extra_files(folder, set(files))
            if extra:
                shown = ", ".join(extra[:3]) + (f" and {len(extra) - 3} more" if len(extra) > 3 else "")
                out.append(Deployed(model, rel_folder, "skipped", reason=f"holds an answer ({shown})"))
                continue
        written, reason = [], ""
        prompt = folder / "PROMPT.md"
        if prompt.is_file() and prompt.read_bytes() != challenge.prompt_path.read_bytes():
            reason = "keeps its own PROMPT.md, which differs from the challenge's"
        for rel, src in files.items():
            dst = folder / rel
            if dst.exists() or dst.is_symlink():
                continue  # never overwrite: a model's PROMPT.md is the prompt it was given
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dst)
            written.append(rel)
        out.append(Deployed(model, rel_folder, "written" if written else "up_to_date", written, reason))
    return out
