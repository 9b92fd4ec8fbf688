"""The answer's process builds and loads a CUDA answer's library; the
checker's process never loads it. Runs on any machine with nvcc (without a
GPU nvcc builds for its default architecture and nothing is called)."""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from benchtui.challenges.definition import BUNDLED_CHALLENGES
from benchtui.runner.local import local_answer_process
from benchtui.verify import wire
from benchtui.verify.cuda import build as cuda_build
from benchtui.verify.execute import load_module
from benchtui.verify.suite import Suite

REPO = Path(__file__).resolve().parents[2]
CHALLENGE = BUNDLED_CHALLENGES / "fuse"
conformance = load_module(CHALLENGE / "conformance.py", "benchtui_test_fuse_answer_process")

pytestmark = pytest.mark.skipif(cuda_build.find_nvcc() is None, reason="nvcc not installed")


def library(tmp_path: Path, model: str):
    folder = tmp_path / "answer"
    shutil.copytree(REPO / "models" / model / "fuse", folder)
    adapter = tmp_path / "adapter" / f"{model}.cu"
    adapter.parent.mkdir()
    shutil.copy(CHALLENGE / "adapters" / f"{model}.cu", adapter)
    with local_answer_process(folder, adapter) as (peer, monitor):
        suite = Suite(challenge_id="fuse", answer_dir=folder, challenge_dir=CHALLENGE, model=model, seed=1,
                      backend="cuda", adapter_path=adapter, peer=peer, monitor=monitor)
        facts, host, why = suite.cuda_library(conformance.SYMBOL, conformance.PARAMS, timeout_s=300)
        host_is_proxy = wire.is_proxy(host)
    return facts, host_is_proxy, host, why


def test_the_answer_process_builds_and_loads_the_adapter_and_the_checker_loads_nothing(tmp_path):
    before = set(Path(tempfile.gettempdir()).glob("benchtui-cuda-*"))
    facts, host_is_proxy, host, why = library(tmp_path, "demo-careful")
    assert set(Path(tempfile.gettempdir()).glob("benchtui-cuda-*")) <= before  # its build folder went with its process
    assert facts["ok"], facts["output"]
    assert host_is_proxy and why == ""  # a handle on the answer's side, not a library here
    maps = Path("/proc/self/maps").read_text()
    assert "libbenchtui_answer" not in maps and "softmax_topk" not in maps


def test_an_adapter_that_does_not_compile_is_a_build_failure_with_nvcc_s_words(tmp_path):
    facts, host_is_proxy, host, why = library(tmp_path, "demo-hasty")
    assert not facts["ok"] and host is None
    assert 'identifier "FLT_MAX" is undefined' in facts["summary"]
    assert "/tmp" not in facts["summary"]  # paths shown relative to the answer


SHADOW = """#include_next <cuda_runtime.h>
// An answer's header named like the toolkit's: whatever includes it gets this.
#ifndef cudaGetErrorName
#define cudaGetErrorName(e) "shadowed by the answer"
#endif
"""


def test_a_cuda_runtime_h_in_the_answer_cannot_shadow_the_harness_s(tmp_path):
    """The harness is compiled in a step of its own, with no include path of
    the answer's: a ``cuda_runtime.h`` beside the answer's sources (which
    could redefine the timer's calls) is never what the harness includes."""
    folder = tmp_path / "answer"
    shutil.copytree(REPO / "models" / "demo-careful" / "fuse", folder)
    (folder / "cuda_runtime.h").write_text(SHADOW)
    adapter = tmp_path / "adapter" / "demo-careful.cu"
    adapter.parent.mkdir()
    shutil.copy(CHALLENGE / "adapters" / "demo-careful.cu", adapter)
    with local_answer_process(folder, adapter) as (peer, monitor):
        suite = Suite(challenge_id="fuse", answer_dir=folder, challenge_dir=CHALLENGE, model="demo-careful", seed=1,
                      backend="cuda", adapter_path=adapter, peer=peer, monitor=monitor)
        facts, host, why = suite.cuda_library(conformance.SYMBOL, conformance.PARAMS, timeout_s=300)
        assert facts["ok"], facts["output"]
        # no driver is needed to name an error: the harness's own cudaGetErrorName answers
        named = host.h.error_name(700)
    assert named.startswith("cudaErrorIllegalAddress"), named
    assert str(folder) not in facts["harness_command"] and "-I" not in facts["harness_command"]
