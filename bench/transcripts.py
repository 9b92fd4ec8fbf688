"""Transcript parsing and search speed. Prints JSON.

    python bench/transcripts.py [--quick]

- parse: load_transcript (read, parse, totals) of generated pi v3 sessions of
  ~330 KB / 120 entries (goal < 50 ms) and ~30 MB (goal: linear, < 2 s);
- index: index_pending over 50 stored transcripts; search: FTS latency.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchtui.store.database import Store  # noqa: E402
from benchtui.transcripts import load_transcript  # noqa: E402
from benchtui.transcripts.index import index_pending, search  # noqa: E402

WORDS = ["tile", "softmax", "running", "max", "rescale", "accumulator", "causal", "mask", "kernel", "numpy", "float32", "gradient", "cache", "decode", "beam", "logits", "shape", "broadcast", "tolerance", "reference", "assert", "error", "tracemalloc", "peak", "memory"]


def _iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ts)) + f".{int(ts * 1000) % 1000:03d}Z"


def _prose(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def make_pi(path: Path, entries: int, seed: int = 0, output_words: int = 500) -> None:
    """A pi v3 session: user prompts, assistant turns with thinking and a tool call, tool results."""
    rng = random.Random(seed)
    t = 1_757_000_000.0
    lines = [json.dumps({"type": "session", "version": 3, "id": f"bench-{seed}", "timestamp": _iso(t), "cwd": "/bench"})]
    parent = None
    for i in range(entries):
        t += 2.0
        eid = f"{i:08x}"
        if i % 20 == 0:
            msg = {"role": "user", "content": [{"type": "text", "text": _prose(rng, 60)}], "timestamp": int(t * 1000)}
        elif i % 2 == 1:
            tool = rng.choice(["bash", "read", "edit", "write"])
            args = {"command": "python -m pytest -q"} if tool == "bash" else {"path": f"src/f{i % 7}.py", "content": _prose(rng, 80)}
            msg = {"role": "assistant", "provider": "anthropic", "model": "claude-sonnet-4-5", "stopReason": "toolUse",
                   "content": [{"type": "thinking", "thinking": _prose(rng, 90)}, {"type": "text", "text": _prose(rng, 30)},
                               {"type": "toolCall", "id": f"call{i}", "name": tool, "arguments": args}],
                   "usage": {"input": 5, "output": 300, "cacheRead": 20000 + i, "cacheWrite": 400,
                             "cost": {"total": 0.0123}}, "timestamp": int((t - 1.5) * 1000)}
        else:
            msg = {"role": "toolResult", "toolCallId": f"call{i - 1}", "toolName": "bash", "isError": i % 10 == 4,
                   "content": [{"type": "text", "text": _prose(rng, output_words)}], "timestamp": int(t * 1000)}
        lines.append(json.dumps({"type": "message", "id": eid, "parentId": parent, "timestamp": _iso(t), "message": msg}))
        parent = eid
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def time_parse(path: Path, runs: int) -> dict:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        tr = load_transcript(path)
        times.append(time.perf_counter() - t0)
    return {"bytes": path.stat().st_size, "entries": len(tr.entries), "runs": runs,
            "median_ms": round(statistics.median(times) * 1000, 2), "min_ms": round(min(times) * 1000, 2)}


def bench_search(tmp: Path, count: int) -> dict:
    store = Store(tmp / "store.db")
    for n in range(count):
        model, challenge = f"model{n % 10}", f"challenge{n // 10}"
        folder = tmp / "models" / model / challenge
        folder.mkdir(parents=True, exist_ok=True)
        make_pi(folder / "session.jsonl", 120, seed=n)
        aid = store.db["answers"].insert({"model": model, "challenge": challenge,
                                          "path": f"models/{model}/{challenge}", "present": 1}).last_pk
        store.db["transcripts"].insert({"answer_id": aid, "relpath": "session.jsonl", "format": "pi",
                                        "sha256": hashlib.sha256((folder / "session.jsonl").read_bytes()).hexdigest()})
    t0 = time.perf_counter()
    indexed = index_pending(store, tmp)
    index_s = time.perf_counter() - t0
    queries = ["tracemalloc", "running max rescale", '"causal mask"', "pytest", "broadcast OR tolerance", "nothinghere"]
    per_query = {}
    for q in queries:
        times, hits = [], 0
        for _ in range(20):
            t0 = time.perf_counter()
            hits = len(search(store, q, limit=50))
            times.append(time.perf_counter() - t0)
        per_query[q] = {"hits": hits, "median_ms": round(statistics.median(times) * 1000, 2)}
    entries = store.query("select count(*) n from transcript_entries")[0]["n"]
    store.close()
    return {"transcripts": indexed, "entries": entries, "index_s": round(index_s, 3),
            "db_bytes": (tmp / "store.db").stat().st_size, "queries": per_query,
            "median_ms": round(statistics.median(v["median_ms"] for v in per_query.values()), 2)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="0.8 MB instead of 30 MB for the large file: the test suite runs it so the script cannot rot")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        small, large = tmp / "small.jsonl", tmp / "large.jsonl"
        make_pi(small, 120)
        large_entries = 300 if args.quick else 11_000
        make_pi(large, large_entries, seed=1)
        out = {"parse_small": time_parse(small, 15), "parse_large": time_parse(large, 3)}
        s, l = out["parse_small"], out["parse_large"]
        out["ms_per_mb"] = {"small": round(s["median_ms"] / (s["bytes"] / 2**20), 1),
                            "large": round(l["median_ms"] / (l["bytes"] / 2**20), 1)}
        out["goals"] = {"small_under_50ms": s["median_ms"] < 50, "large_under_2s": l["median_ms"] < 2000}
        (tmp / "search").mkdir()
        out["search"] = bench_search(tmp / "search", 50)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
