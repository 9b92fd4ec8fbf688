"""``benchtui transcript show|stats|search`` end to end through engine.cli.main."""
import json

from benchtui.cli import main


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

    from benchtui.store.database import Store

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


def test_a_search_hit_opens_with_show_and_model_challenge_works_too(demo_workbench, capsys, monkeypatch):
    """`transcript search` prints MODEL/CHALLENGE/FILE #N: `transcript show` opens that,
    and takes MODEL CHALLENGE [FILE] as every other command does."""
    monkeypatch.chdir(demo_workbench.parent)  # not inside the workbench: the path is the workbench's
    wb = ["--workbench", str(demo_workbench)]
    assert main([*wb, "transcript", "search", "layernorm"]) == 0
    hit = capsys.readouterr().out.splitlines()[0]
    where = hit.split(" #", 1)[0]
    assert where.count("/") == 2, hit
    assert main([*wb, "transcript", "show", where]) == 0
    by_hit = capsys.readouterr().out
    model, challenge, name = where.split("/")
    assert main([*wb, "transcript", "show", model, challenge]) == 0
    assert capsys.readouterr().out == by_hit and by_hit.startswith("pi session")
    assert main([*wb, "transcript", "stats", model, challenge, name, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["format"] == "pi"
    # an answer without a transcript, a transcript it does not have: one line each
    assert main([*wb, "transcript", "show", "demo-hasty", "backwards"]) == 1
    assert capsys.readouterr().err.strip() == "benchtui: demo-hasty/backwards has no transcript"
    assert main([*wb, "transcript", "show", model, challenge, "nope.jsonl"]) == 2
    assert "it has: session.jsonl" in capsys.readouterr().err


def test_a_search_hit_copied_with_its_entry_number_opens_at_that_entry(demo_workbench, capsys, monkeypatch):
    """The hit `transcript search` prints is MODEL/CHALLENGE/FILE #N: copied whole
    (one word or two) it opens the transcript at entry N, and an entry it lacks
    is one line."""
    monkeypatch.chdir(demo_workbench.parent)
    wb = ["--workbench", str(demo_workbench)]
    assert main([*wb, "transcript", "search", "layernorm"]) == 0
    hit = capsys.readouterr().out.splitlines()[0]
    where, position = hit.split(" ")[0], hit.split(" ")[1]
    assert position.startswith("#"), hit
    assert main([*wb, "transcript", "show", where]) == 0
    whole = capsys.readouterr().out
    assert main([*wb, "transcript", "show", where, position]) == 0
    from_hit = capsys.readouterr().out
    assert main([*wb, "transcript", "show", f"{where} {position}"]) == 0
    assert capsys.readouterr().out == from_hit
    assert from_hit.startswith("pi session") and len(from_hit) < len(whole)
    assert from_hit.split("\n\n", 1)[1] in whole  # the same entries, from N on
    assert main([*wb, "transcript", "show", where, "#9999"]) == 2
    err = capsys.readouterr().err
    assert "entry #9999" in err and "has entries 0 to" in err, err


def test_search_keeps_to_the_models_and_challenges_asked_for(demo_workbench, capsys):
    """-m and -c narrow a search before its limit: the hits are those answers' only,
    and the limit still fills from them; an unknown name is one line, exit 2."""
    wb = ["--workbench", str(demo_workbench)]
    assert main([*wb, "transcript", "search", "the", "--json", "--limit", "500"]) == 0
    every = json.loads(capsys.readouterr().out)
    models = sorted({h["model"] for h in every})
    assert len(models) >= 2, models  # the demo's transcripts span models: the filter has something to drop
    one = models[-1]
    assert main([*wb, "transcript", "search", "the", "--json", "--limit", "3", "-m", one]) == 0
    narrow = json.loads(capsys.readouterr().out)
    assert narrow and len(narrow) == min(3, sum(h["model"] == one for h in every))
    assert {h["model"] for h in narrow} == {one}
    challenge = narrow[0]["challenge"]
    assert main([*wb, "transcript", "search", "the", "--json", "--limit", "500", "-m", one, "-c", challenge]) == 0
    both = json.loads(capsys.readouterr().out)
    assert {(h["model"], h["challenge"]) for h in both} == {(one, challenge)}
    assert len(both) == sum(h["model"] == one and h["challenge"] == challenge for h in every)
    assert main([*wb, "transcript", "search", "the", "-m", "nobody"]) == 2
    assert "unknown model 'nobody'" in capsys.readouterr().err
    assert main([*wb, "transcript", "search", "the", "-c", "nothing"]) == 2
    assert "unknown challenge 'nothing'" in capsys.readouterr().err
