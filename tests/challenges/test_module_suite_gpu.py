"""KernelBench's own adversarial kernels (its unit_tests/test_kernels, inline
CUDA) through the module harness on an NVIDIA GPU: each caught. Skipped,
with the reason, without a GPU, CUDA-enabled torch, nvcc or the deck."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from benchtui.runner.local import run_local
from benchtui.verify.cuda import build as cuda_build

from tests.challenges import module_deck_kit as K

REPO = Path(__file__).resolve().parents[2]
# beside the checkout, or carried into it (bench/gpu_day.py --stage), or where BENCHTUI_DECKS says
DECK = next((p for p in ([Path(os.environ["BENCHTUI_DECKS"]) / "kernelbench"] if os.environ.get("BENCHTUI_DECKS") else [])
             + [REPO / "shared" / "kernelbench", REPO.parent / "shared" / "kernelbench",
                REPO.parent.parent / "shared" / "kernelbench"] if p.is_dir()), REPO.parent / "shared" / "kernelbench")
KERNELS = DECK / "src" / "kernelbench" / "unit_tests" / "test_kernels"
PROBLEM = DECK / "KernelBench" / "level1" / "1_Square_matrix_multiplication_.py"


def gpu_reason() -> str:
    try:
        import torch
    except ImportError:
        return "the torch extra is not installed"
    if not torch.cuda.is_available():
        return "torch sees no CUDA GPU"
    if cuda_build.find_nvcc() is None:
        return "nvcc not installed (load_inline needs it)"
    if not KERNELS.is_dir() or not PROBLEM.is_file():
        return f"no KernelBench deck at {DECK}"
    return ""


@pytest.fixture(scope="module")
def square_matmul(tmp_path_factory):
    reason = gpu_reason()  # before the deck's file is read: a machine without the deck skips too
    if reason:
        pytest.skip(f"needs an NVIDIA GPU: {reason}")
    root = tmp_path_factory.mktemp("kb-gpu") / "challenges"
    folder = K.write_challenge(root, "kb_l1_p1", "kb")
    shutil.copy(PROBLEM, folder / "reference.py")  # the deck's file, untouched
    toml = folder / "challenge.toml"
    toml.write_text(toml.read_text().replace('problem = "level2/small_Gemm_ReLU"', 'problem = "level1/1"')
                    .replace("timed_calls = 3", "timed_calls = 5").replace("published_calls = 3", "published_calls = 10"))
    return root


@pytest.mark.gpu
@pytest.mark.parametrize("kernel, caught", [
    ("result_reuse_kernel.py", "output_values"),  # an uninitialised result: the reference ran in another process
    ("zero_out_kernel.py", "inputs_unchanged"),
    ("non_default_stream_kernel.py", "flagged"),  # work left on its own stream: the trusted clock waits for it
])
def test_kernelbench_adversarial_kernels_are_caught(square_matmul, tmp_path, kernel, caught):
    reason = gpu_reason()
    if reason:
        pytest.skip(f"needs an NVIDIA GPU: {reason}")
    answer = tmp_path / "answer"
    answer.mkdir()
    shutil.copy(KERNELS / kernel, answer / "solution.py")
    out = run_local("kb_l1_p1", answer, challenges_dir=square_matmul, backend="cuda")
    checks = {c["name"]: c for c in out["checks"]}
    if caught == "flagged":
        # caught means the trusted clock saw the stream's work (its time flagged against the answer's
        # own), or the checker read a half-written output; a build error, a timeout or a skip is not it
        t = checks.get("time:shape0")
        raced = [c for c in out["checks"] if c["verdict"] == "fail" and c["details"].get("requirement") == "output_values"]
        assert (t is not None and t["details"].get("flagged")) or raced, \
            {n: (c["verdict"], c["message"][:200]) for n, c in checks.items()}
        assert out["verdict"] in ("pass", "fail"), out["verdict"]
    else:
        failed = [c for c in out["checks"] if c["verdict"] in ("fail", "error")]
        assert out["verdict"] in ("fail", "error") and failed, {n: (c["verdict"], c["message"][:200]) for n, c in checks.items()}
        assert any(c["details"].get("requirement") == caught or caught in c["message"] for c in failed)
