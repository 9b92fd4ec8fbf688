"""Long names are shortened from the middle, keeping what tells them apart."""
from __future__ import annotations

from benchtui.workbench.shorten import shorten, shorten_all

MODELS = ["claude_claude-opus-4-8", "claude_claude-opus-4-8_max", "claude_claude-fable-5", "codex_gpt-5.5",
          "codex_gpt-5.6-sol", "grok_grok-4.5_high", "grok_grok-4.5_max", "hy3_hy3"]
KERNELBENCH = ["KernelBench L1 P10: 3D tensor matrix multiplication", "KernelBench L1 P100: HingeLoss",
               "KernelBench L1 P1: Square matrix multiplication", "KernelBench L2 P3: Conv", "Layer Norm Backward"]


def test_models_sharing_a_long_prefix_stay_apart():
    short = shorten_all(MODELS, 14)
    assert all(len(s) <= 14 for s in short.values())
    assert len(set(short.values())) == len(MODELS)  # a plain cut read "claude_claude-" three times
    assert short["claude_claude-fable-5"] == "claude…fable-5"
    assert short["codex_gpt-5.5"] == "codex_gpt-5.5" and short["hy3_hy3"] == "hy3_hy3"  # what fits is whole
    assert short["grok_grok-4.5_max"].endswith("4.5_max") and short["grok_grok-4.5_high"].endswith("4.5_high")


def test_kernelbench_titles_keep_their_problem():
    short = shorten_all(KERNELBENCH, 22)
    assert all(len(s) <= 22 for s in short.values())
    assert len(set(short.values())) == len(KERNELBENCH)
    assert "P10: 3D tensor" in short[KERNELBENCH[0]] and "P100: HingeLoss" in short[KERNELBENCH[1]]
    assert "P1: Square" in short[KERNELBENCH[2]] and "L2 P3: Conv" in short[KERNELBENCH[3]]
    assert short["Layer Norm Backward"] == "Layer Norm Backward"


def test_a_name_alone_keeps_its_start_and_end():
    assert shorten("a_very_long_model_name_indeed", 12) == "a_very…ndeed"
    assert shorten("abcdef", 3) == "abc"




def test_names_that_differ_only_at_their_ends_keep_their_ends():
    short = shorten_all(["claude_claude-opus-4-8_high", "claude_claude-opus-4-8_max"], 16)
    assert short["claude_claude-opus-4-8_high"].endswith("_high")
    assert short["claude_claude-opus-4-8_max"].endswith("_max")  # was "clau…opus-4-8_m…": the two read alike
    assert all(len(s) <= 16 for s in short.values())
