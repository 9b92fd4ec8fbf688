"""A search hit's snippet reads as one line: the entry's newlines and runs of
spaces are collapsed, so one hit never spans several lines of output."""
import hashlib
import json

from benchtui.store.database import Store
from benchtui.transcripts.index import index_pending, search


def test_snippet_is_one_line(tmp_path):
    folder = tmp_path / "models" / "m1" / "kv"
    folder.mkdir(parents=True)
    text = "First we\n\n  compute the\tscores.\nThen the   softmax\r\nover keys, which stays finite."
    lines = [{"type": "session", "version": 3, "id": "s1", "timestamp": "2025-06-15T14:40:00.000Z", "cwd": "/w"},
             {"type": "message", "id": "e1", "parentId": None, "timestamp": "2025-06-15T14:40:01.000Z",
              "message": {"role": "assistant", "content": [{"type": "text", "text": text}]}}]
    path = folder / "session.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    with Store(tmp_path / "store.db") as store:
        answer = store.db["answers"].insert({"model": "m1", "challenge": "kv", "path": "models/m1/kv",
                                             "present": 1}).last_pk
        store.db["transcripts"].insert({"answer_id": answer, "relpath": "session.jsonl", "status": "new",
                                        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
                                        "size": path.stat().st_size, "format": None})
        assert index_pending(store, tmp_path) == 1
        hits = search(store, "softmax")
        assert len(hits) == 1
        snippet = hits[0]["snippet"]
        assert "[softmax]" in snippet
        assert "\n" not in snippet and "\r" not in snippet and "\t" not in snippet and "  " not in snippet
