"""``benchtui transcript show|stats|search`` end to end through engine.cli.main."""
import json

from engine.cli import main


def test_stats_json_shape(samples, capsys):
    assert main(["transcript", "stats", str(samples / "pi_v3_branches.jsonl"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {k: data[k] for k in ("format", "model", "provider", "tool_calls", "tool_errors", "branches")} == {
        "format": "pi", "model": "gpt-5", "provider": "openai", "tool_calls": 2, "tool_errors": 1, "branches": 2}
    assert data["entries"]["assistant"] == 3 and data["entries"]["raw"] == 2
    assert data["tokens"] == {"input": 1310, "output": 95, "cache_read": 700, "cache_write": 10}
    assert data["cost"] == 0.016 and data["duration_s"] == 68.9
    assert data["warnings"][0] == {"line": 11, "kind": "repaired", "detail": data["warnings"][0]["detail"]}


def test_show_filters(samples, capsys):
    path = str(samples / "pi_v3_branches.jsonl")
    assert main(["transcript", "show", path]) == 0
    full = capsys.readouterr().out
    assert "Look at the file." in full and "→ read kv.py" in full and "mask = lengths.max()" in full
    assert main(["transcript", "show", path, "--no-tools", "--no-thinking"]) == 0
    quiet = capsys.readouterr().out
    assert "Look at the file." not in quiet and "→ read" not in quiet and "mask = lengths.max()" not in quiet
    assert main(["transcript", "show", path, "--errors"]) == 0
    errors = capsys.readouterr().out
    assert "[7] tool_result" in errors and "[1] user" not in errors and "this line is not json" in errors


def test_bad_file_is_one_line_exit_1(tmp_path, capsys):
    p = tmp_path / "x.jsonl"
    p.write_bytes(b"\xff\xfe\xfd")
    assert main(["transcript", "stats", str(p)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not UTF-8" in err


def test_search_needs_workbench_and_finds(tmp_path, samples, capsys, monkeypatch):
    import hashlib
    import shutil

    from engine.store.database import Store

    (tmp_path / "models/m1/kv").mkdir(parents=True)
    shutil.copy(samples / "pi_v1.jsonl", tmp_path / "models/m1/kv/session.jsonl")
    store_path = tmp_path / "store.db"
    with Store(store_path) as s:
        aid = s.db["answers"].insert({"model": "m1", "challenge": "kv", "path": "models/m1/kv", "present": 1}).last_pk
        s.db["transcripts"].insert({"answer_id": aid, "relpath": "session.jsonl", "format": "pi",
                                    "sha256": hashlib.sha256((tmp_path / "models/m1/kv/session.jsonl").read_bytes()).hexdigest()})
    monkeypatch.chdir(tmp_path)
    assert main(["--workbench", str(tmp_path), "--store", str(store_path), "transcript", "search", "hello", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert sorted((h["model"], h["challenge"], h["position"]) for h in hits) == [("m1", "kv", 0), ("m1", "kv", 1), ("m1", "kv", 2)]
