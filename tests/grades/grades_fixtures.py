"""A small store for the grades tests: three demo models, the eight
standard challenges, answers and hidden-suite verdicts, inserted directly."""
from __future__ import annotations

import json

from benchtui.store.database import Store

MODELS = {"demo-careful": "Careful-1", "demo-hasty": "Hasty-2", "demo-quitter": "Quitter-3"}
CHALLENGES = [
    ("backwards", "Layer norm backward", ["Layer Norm Backward"]),
    ("fuse", "Fused softmax + top-k", ["Fused Softmax+TopK"]),
    ("kv", "KV cache", ["KV-Cache", "KV Cache"]),
    ("beam_search", "Beam search", ["Beam Search"]),
    ("flash_attention", "Flash attention forward", ["Flash Attn Forward"]),
    ("flash_attention_bwd", "Flash attention backward", ["Flash Attn Backward"]),
    ("dflash_verify", "DFlash verify", ["DFlash"]),
    ("ternary_training", "Ternary training", ["Ternary Training"]),
]
ATTEMPTED = {
    "demo-careful": ["backwards", "fuse", "kv", "beam_search", "flash_attention", "ternary_training"],
    "demo-hasty": ["backwards", "fuse", "kv", "beam_search", "flash_attention", "ternary_training", "dflash_verify"],
    "demo-quitter": ["backwards", "fuse", "kv"],
}
# Hidden-suite verdicts (latest finished run per answer).
VERDICTS = {
    ("demo-careful", "backwards"): "pass", ("demo-careful", "fuse"): "pass",
    ("demo-careful", "kv"): "pass", ("demo-careful", "beam_search"): "pass",
    ("demo-hasty", "backwards"): "pass", ("demo-hasty", "beam_search"): "fail",
    ("demo-hasty", "dflash_verify"): "fail", ("demo-hasty", "kv"): "error",
    ("demo-quitter", "backwards"): "fail",
}


def fill(store: Store) -> Store:
    with store.db.conn:
        for name, shown in MODELS.items():
            store.db["models"].insert({"name": name, "display_name": shown, "present": 1})
        for pos, (cid, title, names) in enumerate(CHALLENGES, start=1):
            store.db["challenges"].insert({"id": cid, "position": pos, "title": title,
                                           "display_names": json.dumps(names)})
        for model, cids in ATTEMPTED.items():
            for cid in [c for c, _, _ in CHALLENGES]:
                status = "answer" if cid in cids else "no_answer"
                store.db["answers"].insert({"model": model, "challenge": cid, "status": status,
                                            "present": 1 if cid in cids else 0})
        for (model, cid), verdict in VERDICTS.items():
            # an older, different run first: only the latest finished one counts
            store.db["runs"].insert({"model": model, "challenge": cid, "status": "done",
                                     "verdict": "error", "finished_at": "2024-01-01T00:00:00Z"})
            store.db["runs"].insert({"model": model, "challenge": cid, "status": "done",
                                     "verdict": verdict, "finished_at": "2024-01-02T00:00:00Z"})
            # a run still going does not replace the verdict
            store.db["runs"].insert({"model": model, "challenge": cid, "status": "running"})
    return store
