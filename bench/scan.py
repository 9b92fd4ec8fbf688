"""Scan speed: cold and warm scans of the demo workbench and of a generated
6-model x 8-challenge published-layout repository. Prints JSON.

    python bench/scan.py [--repeat 3]

Goals (this machine): warm rescan of the generated repo under 0.3 s, cold under 2 s.
"""
from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchtui.challenges.definition import CHALLENGE_IDS  # noqa: E402
from benchtui.store.database import Store  # noqa: E402
from benchtui.workbench.layout import find_workbench  # noqa: E402
from benchtui.workbench.scan import scan_workbench  # noqa: E402

MODELS = ["glm5", "qwen36", "kimi-k2", "deepseek-v4", "minimax-m3", "gpt-oss"]


def generate_published(root: Path, seed: int = 7) -> dict:
    """A published-layout benchmark repo: per answer a prompt, sources, a test,
    notes and (for half of them) a ~300 KB pi transcript; plus analysis folders."""
    rng = random.Random(seed)
    files = size = 0
    for model in MODELS:
        for cid in CHALLENGE_IDS:
            d = root / model / cid
            d.mkdir(parents=True)
            bodies = {"PROMPT.md": f"# {cid}\n\nImplement the task.\n" * 20,
                      f"{cid}.py": "".join(f"def f{i}(x):\n    return x * {rng.random():.6f}\n" for i in range(250)),
                      f"test_{cid}.py": "def test_a():\n    assert True\n" * 40,
                      "NOTES.md": "Design notes. " * 400}
            if cid == "fuse":
                bodies["kernel.cu"] = "__global__ void k(float* x) { x[threadIdx.x] = 0; }\n" * 200
            if rng.random() < 0.5:
                lines = ['{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00Z","cwd":"/w"}']
                for i in range(120):
                    text = "x" * 2500
                    lines.append(json.dumps({"type": "message", "id": f"{i:08x}", "parentId": f"{i - 1:08x}" if i else None,
                                             "timestamp": "2026-01-01T00:00:01Z",
                                             "message": {"role": "user" if i % 2 == 0 else "assistant",
                                                         "content": [{"type": "text", "text": text}], "timestamp": 1}}))
                bodies["session.jsonl"] = "\n".join(lines) + "\n"
            for name, body in bodies.items():
                (d / name).write_text(body)
                files += 1
                size += len(body)
    (root / "analysis").mkdir()
    (root / "analysis" / "report.md").write_text("# grades\n")
    (root / "README.md").write_text("# benchmark\n")
    return {"files": files, "bytes": size}


def time_scans(root: Path, repeat: int) -> dict:
    cold, warm = [], []
    for _ in range(repeat):
        store_path = root / "store.db"
        for p in root.glob("store.db*"):
            p.unlink()
        wb = find_workbench(str(root), None, Path.cwd())
        with Store(store_path) as store:
            t = time.perf_counter()
            r = scan_workbench(wb, store, index_transcripts=True)
            cold.append(time.perf_counter() - t)
            t = time.perf_counter()
            r2 = scan_workbench(wb, store, index_transcripts=True)
            warm.append(time.perf_counter() - t)
            assert r2.hashed == 0, "a warm rescan re-hashed files"
    return {"models": r.models, "answers": r.answers, "files": r.files, "transcripts": r.transcripts,
            "cold_s": round(statistics.median(cold), 4), "warm_s": round(statistics.median(warm), 4),
            "cold_all_s": [round(x, 4) for x in cold], "warm_all_s": [round(x, 4) for x in warm]}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--quick", action="store_true", help="small sizes, one round, no goal asserted: the test suite runs it so the script cannot rot")
    args = p.parse_args()
    if args.quick:
        args.repeat = 1
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        demo = Path(tmp) / "demo"
        shutil.copytree(REPO / "models", demo / "models")
        shutil.copytree(REPO / "challenges", demo / "challenges")
        out["demo"] = time_scans(demo, args.repeat)
        pub = Path(tmp) / "published"
        pub.mkdir()
        out["published_6x8"] = {**generate_published(pub), **time_scans(pub, args.repeat)}
    out["goals"] = {"published_warm_s_max": 0.3, "published_cold_s_max": 2.0,
                    "met": out["published_6x8"]["warm_s"] < 0.3 and out["published_6x8"]["cold_s"] < 2.0}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
