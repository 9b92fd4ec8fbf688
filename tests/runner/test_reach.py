"""What a check reached, measured in the answer's process (engine/runner/reach.py):
answer functions called from anywhere, and what the adapter's own code called
per entry (the checker's call into the adapter)."""
from __future__ import annotations

import importlib.util
import sys

from benchtui.runner import reach
from benchtui.verify.reach_report import batch_loops, describe_loops


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_adapter_calls_per_entry_and_answer_reach(tmp_path):
    answer = tmp_path / "answer"
    answer.mkdir()
    (answer / "attn.py").write_text("def attend(x):\n    return helper(x)\n\ndef helper(x):\n    return x\n\n"
                                    "def unused():\n    return 0\n")
    adapter = tmp_path / "adapter.py"
    adapter.write_text("import attn_reach_test as attn\n\n"
                       "def decode(batch):\n    return [attn.attend(x) for x in batch]\n\n"
                       "def decode_batched(batch):\n    return attn.attend(batch)\n")
    load(answer / "attn.py", "attn_reach_test")
    module = load(adapter, "adapter_reach_test")
    reach.start(answer, adapter)
    try:
        for _ in range(4):
            module.decode([1, 2, 3])
        module.decode_batched([1, 2, 3])
    finally:
        report = reach.stop()
    assert report["entries"] == {"decode": 4, "decode_batched": 1}
    assert report["calls"] == {"attn.py:attend": 13, "attn.py:helper": 13}
    # helper is called by the answer's own code, not by the adapter
    assert report["direct"] == {"decode": {"attn.py:attend": 12}, "decode_batched": {"attn.py:attend": 1}}
    assert batch_loops(report, "decode", 3) == {"attn.py:attend": 3.0}
    assert batch_loops(report, "decode_batched", 3) == {}
    assert "attend (3 calls) itself for each decode of a batch of 3" in describe_loops({"attn.py:attend": 3.0}, "decode", 3)
    assert sys.getprofile() is None


def test_a_function_equal_to_one_outside_the_answer_still_counts(tmp_path):
    """Two files' code objects compare equal when their functions are alike line for line
    (the file name is not compared): where a function is defined is told by its file."""
    source = "def same(x):\n    return x\n"
    answer, outside = tmp_path / "answer", tmp_path / "lib"
    answer.mkdir()
    outside.mkdir()
    (answer / "mine.py").write_text(source)
    (outside / "theirs.py").write_text(source)
    mine, theirs = load(answer / "mine.py", "mine_reach_test"), load(outside / "theirs.py", "theirs_reach_test")
    assert theirs.same.__code__ == mine.same.__code__
    reach.start(answer, None)
    try:
        theirs.same(1)
        mine.same(2)
    finally:
        report = reach.stop()
    assert report["calls"] == {"mine.py:same": 1}
