"""The GPU tests' workbench, shared with bench/gpu_check.py: copies of
demo-careful's fuse kernel, each with one of gpu_answers/ as its adapter (an
honest one or a planted timing exploit), and fuse with a small correctness grid."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ANSWERS = Path(__file__).with_name("gpu_answers")
CAREFUL = REPO / "models" / "demo-careful" / "fuse"


def exploit_workbench(root: Path, names: list[str], **thresholds) -> Path:
    """A workbench at ``root`` with one model ``x-NAME`` per adapter in ``names``;
    ``thresholds`` set (or add) fuse's thresholds."""
    shutil.copytree(REPO / "challenges" / "fuse", root / "challenges" / "fuse")
    toml = root / "challenges" / "fuse" / "challenge.toml"
    text = toml.read_text().replace("V = [1000, 50257, 151936]", "V = [1000]").replace("k = [1, 5, 32]", "k = [5]")
    text = text.replace("timeout_s = 600.0", "timeout_s = 120.0")
    for key, value in thresholds.items():
        line = re.compile(rf"^{key} = .*$", re.MULTILINE)
        text = line.sub(f"{key} = {value}", text) if line.search(text) else \
            text.replace("[thresholds]\n", f"[thresholds]\n{key} = {value}\n")
    toml.write_text(text)
    for name in names:
        folder = root / "models" / f"x-{name}" / "fuse"
        shutil.copytree(CAREFUL, folder)
        adapters = root / ".benchtui" / "adapters" / "fuse"
        adapters.mkdir(parents=True, exist_ok=True)
        shutil.copy(ANSWERS / f"{name}.cu", adapters / f"x-{name}.cu")
    return root
