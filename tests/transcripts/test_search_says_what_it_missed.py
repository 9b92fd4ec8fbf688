"""Every text benchtui indexes for search is indexed whole, or the search says
what it did not search: a tool call's arguments (a file written) are searched as
far as any text, and what lies past the stored cap, or in a transcript that could
not be indexed, is named on every search."""
from __future__ import annotations

import hashlib
import json

from benchtui.cli import main
from benchtui.store.database import Store
from benchtui.transcripts import index as index_mod


def _line(uuid: str, parent: str | None, role: str, content) -> str:
    return json.dumps({"type": role, "uuid": uuid, "parentUuid": parent, "isSidechain": False, "sessionId": "s",
                       "timestamp": "2025-07-01T12:00:00.000Z", "message": {"role": role, "content": content}})


def test_search_finds_what_is_deep_in_a_tool_call_and_names_what_it_did_not_search(tmp_path, capsys, monkeypatch):
    # a 13 KB write whose FLT_MAX sits at character 2,440, and an entry longer than the stored cap
    written = ("// " + "x" * 2430 + "\nfloat m = -FLT_MAX;\n").ljust(13_000, "y")
    assert 2_400 < written.index("FLT_MAX") < 2_500
    lines = [_line("u1", None, "user", "write fuse.cu"),
             _line("u2", "u1", "assistant", [{"type": "tool_use", "id": "t1", "name": "Write",
                                              "input": {"file_path": "fuse.cu", "content": written}}]),
             _line("u3", "u2", "assistant", [{"type": "text", "text": "z " * (index_mod.STORED_TEXT_CHARS // 2 + 10)}])]
    answer = tmp_path / "models/m1/kv"
    answer.mkdir(parents=True)
    (answer / "session.jsonl").write_text("\n".join(lines) + "\n")
    # a transcript by its head whose body is not UTF-8: it cannot be indexed
    (answer / "broken.jsonl").write_bytes((lines[0] + "\n").encode() + b"\xff\xfe\xfd\n")
    store_path = tmp_path / "store.db"
    with Store(store_path) as s:
        aid = s.db["answers"].insert({"model": "m1", "challenge": "kv", "path": "models/m1/kv", "present": 1}).last_pk
        for name in ("session.jsonl", "broken.jsonl"):
            s.db["transcripts"].insert({"answer_id": aid, "relpath": name,
                                        "sha256": hashlib.sha256((answer / name).read_bytes()).hexdigest()})
    monkeypatch.chdir(tmp_path)
    wb = ["--workbench", str(tmp_path), "--store", str(store_path)]
    assert main([*wb, "transcript", "search", "FLT_MAX"]) == 0
    out, err = capsys.readouterr()
    assert "m1/kv/session.jsonl #1" in out
    assert ("not searched: the text past the first 100,000 characters of 1 entry (`transcript show` reads them whole); "
            "1 transcript that could not be indexed") in err
    # a search with no hit says it too: "no match" is only as good as what was searched
    assert main([*wb, "transcript", "search", "nowhere_at_all", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out) == [] and "not searched:" in err
