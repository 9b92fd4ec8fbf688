"""Adapter lookup (workbench first, then plugin), hash keying and staleness,
read without importing the adapter; the `adapter` check a run records."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from benchtui.challenges import adapters
from benchtui.challenges.definition import Challenge


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture
def setup(tmp_path):
    """A workbench root, a plugin challenge folder and one answer folder."""
    root = tmp_path / "wb"
    answer = root / "m1" / "kv"
    answer.mkdir(parents=True)
    (answer / "cache.py").write_text("def f():\n    return 1\n")
    (answer / "util.py").write_text("X = 2\n")
    plugin = tmp_path / "plugin_kv"
    (plugin / "adapters").mkdir(parents=True)
    challenge = Challenge(id="kv", title="KV", difficulty="", language="python", position=1, path=plugin)
    return root, challenge, answer


def write_adapter(folder: Path, name: str, key: dict | None, body: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    text = (f"ANSWER_SHA256 = {json.dumps(key)}\n" if key is not None else "") + body
    path.write_text(text)
    return path


def good_key(answer: Path) -> dict:
    return {"cache.py": sha((answer / "cache.py").read_text())}


def test_no_adapter(setup):
    root, challenge, answer = setup
    res = adapters.resolve(root, challenge, "m1", answer)
    assert (res.source, res.status, res.path, res.usable) == ("none", "none", None, False)
    assert adapters.adapter_check(res) is None


def test_plugin_adapter_keyed_ok(setup):
    root, challenge, answer = setup
    path = write_adapter(challenge.path / "adapters", "m1.py", good_key(answer))
    res = adapters.resolve(root, challenge, "m1", answer)
    assert (res.source, res.status, res.path, res.usable) == ("plugin", "ok", path, True)
    check = adapters.adapter_check(res)
    assert check["name"] == "adapter" and check["verdict"] == "info" and "m1.py" in check["message"]


def test_workbench_adapter_wins_over_plugin(setup):
    root, challenge, answer = setup
    write_adapter(challenge.path / "adapters", "m1.py", good_key(answer))
    mine = write_adapter(root / ".benchtui" / "adapters" / "kv", "m1.py", good_key(answer))
    res = adapters.resolve(root, challenge, "m1", answer)
    assert (res.source, res.path) == ("workbench", mine)
    # another model's adapter is never picked up
    assert adapters.resolve(root, challenge, "m2", answer).status == "none"


def test_changed_file_makes_it_stale(setup):
    root, challenge, answer = setup
    write_adapter(root / ".benchtui" / "adapters" / "kv", "m1.py", {**good_key(answer), "util.py": sha("X = 2\n")})
    assert adapters.resolve(root, challenge, "m1", answer).status == "ok"
    (answer / "cache.py").write_text("def f():\n    return 2\n")
    res = adapters.resolve(root, challenge, "m1", answer)
    assert res.status == "stale" and not res.usable
    assert res.changed == ("cache.py",) and res.missing == ()
    assert "stale" in res.message and "cache.py" in res.message and "util.py" not in res.message
    check = adapters.adapter_check(res)
    assert check["verdict"] == "unbound" and "cache.py" in check["message"]


def test_missing_file_makes_it_stale(setup):
    root, challenge, answer = setup
    write_adapter(challenge.path / "adapters", "m1.py", {**good_key(answer), "gone.py": sha("")})
    res = adapters.resolve(root, challenge, "m1", answer)
    assert res.status == "stale" and res.missing == ("gone.py",) and "missing: gone.py" in res.message


def test_stale_workbench_adapter_is_not_replaced_by_the_plugin(setup):
    root, challenge, answer = setup
    write_adapter(challenge.path / "adapters", "m1.py", good_key(answer))
    write_adapter(root / ".benchtui" / "adapters" / "kv", "m1.py", {"cache.py": sha("old")})
    res = adapters.resolve(root, challenge, "m1", answer)
    assert (res.source, res.status) == ("workbench", "stale")


def test_unkeyed_adapter_is_used_with_a_note(setup):
    root, challenge, answer = setup
    write_adapter(challenge.path / "adapters", "m1.py", None, "def prefill(k, v, lengths):\n    pass\n")
    res = adapters.resolve(root, challenge, "m1", answer)
    assert res.status == "unkeyed" and res.usable and "unkeyed" in res.message


def test_key_is_read_without_importing(setup, tmp_path):
    root, challenge, answer = setup
    marker = tmp_path / "imported"
    body = f"open({str(marker)!r}, 'w').write('x')\nraise SystemExit('never import me')\n"
    write_adapter(challenge.path / "adapters", "m1.py", good_key(answer), body)
    assert adapters.resolve(root, challenge, "m1", answer).status == "ok"
    assert not marker.exists()


def test_malformed_key_is_reported_not_used(setup):
    root, challenge, answer = setup
    (challenge.path / "adapters" / "m1.py").write_text("ANSWER_SHA256 = make_key()\n")
    res = adapters.resolve(root, challenge, "m1", answer)
    assert res.status == "stale" and not res.usable and "cannot be checked" in res.message


def test_cu_adapter_key_on_a_comment_line(setup):
    root, challenge, answer = setup
    (answer / "k.cu").write_text("__global__ void k() {}\n")
    cu = challenge.path / "adapters" / "m1.cu"
    cu.write_text(f'// ANSWER_SHA256 = {json.dumps({"k.cu": sha("__global__ void k() {}" + chr(10))})}\n#include "k.cu"\n')
    assert adapters.resolve(root, challenge, "m1", answer).status == "ok"
    (answer / "k.cu").write_text("__global__ void k() { return; }\n")
    res = adapters.resolve(root, challenge, "m1", answer)
    assert res.status == "stale" and res.changed == ("k.cu",)


def test_prepare_for_run_records_the_check_and_stages_a_copy(setup, tmp_path):
    root, challenge, answer = setup
    src = write_adapter(root / ".benchtui" / "adapters" / "kv", "m1.py", good_key(answer), "Y = 1\n")
    out = tmp_path / "out"
    out.mkdir()
    results = out / "results.jsonl"
    staged = adapters.prepare_for_run(root, challenge, "m1", answer, out, results)
    assert staged is not None and staged != src and staged.read_text() == src.read_text()
    assert out in staged.parents
    line = json.loads(results.read_text().splitlines()[0])
    assert line["check"]["name"] == "adapter" and line["check"]["verdict"] == "info"
    # stale: nothing handed on, an unbound check recorded
    (answer / "cache.py").write_text("changed\n")
    results.unlink()
    assert adapters.prepare_for_run(root, challenge, "m1", answer, out, results) is None
    check = json.loads(results.read_text())["check"]
    assert check["verdict"] == "unbound" and "stale" in check["message"] and "cache.py" in check["message"]


def test_discover_api_lists_classes_methods_functions_without_importing(tmp_path):
    answer = tmp_path / "a"
    answer.mkdir()
    (answer / "mod.py").write_text(
        "raise SystemExit('not imported')\n"
        "class Cache(Base):\n    '''A cache.\n\n    more'''\n    def update(self, k, v, *, pos: int = 0) -> None:\n"
        "        '''Append.'''\n\n"
        "def attend(q, cache, scale=1.0):\n    '''Attention over the cache.'''\n")
    (answer / "kern.cu").write_text('extern "C" __global__ void topk(const float* x, int n) {\n}\n')
    lines = "\n".join(adapters.discover_api(answer))
    assert "class Cache(Base)  # A cache." in lines
    assert "def update(self, k, v, *, pos: int=0) -> None  # Append." in lines
    assert "def attend(q, cache, scale=1.0)  # Attention over the cache." in lines
    assert "topk(const float* x, int n)" in lines
