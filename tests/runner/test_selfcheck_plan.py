"""What the self-check runs: tests first, else demos, else main scripts."""
from __future__ import annotations

from pathlib import Path

from benchtui.runner.selfcheck import plan_self_check


def make(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


MAIN = 'if __name__ == "__main__":\n    train()\n'


def test_tests_win_over_demos_and_mains(tmp_path):
    make(tmp_path, {"test_kv.py": "def test_a(): pass\n", "kv_test.py": "", "demo.py": "", "train.py": MAIN, "lib.py": "x = 1\n"})
    plan = plan_self_check(tmp_path, "python", gpu=False)
    assert plan.labels == ["pytest kv_test.py test_kv.py"] or plan.labels == ["pytest test_kv.py kv_test.py"]
    assert plan.commands[0][:3] == ["python", "-m", "pytest"]


def test_demos_then_mains(tmp_path):
    make(tmp_path, {"demo_decode.py": "", "benchmark_speed.py": "", "train.py": MAIN})
    assert sorted(plan_self_check(tmp_path, "python", gpu=False).labels) == ["python benchmark_speed.py", "python demo_decode.py"]
    (tmp_path / "demo_decode.py").unlink()
    (tmp_path / "benchmark_speed.py").unlink()
    assert plan_self_check(tmp_path, "python", gpu=False).labels == ["python train.py"]


def test_cuda_harness_needs_a_gpu(tmp_path):
    make(tmp_path, {"main.cu": "int main() { return 0; }\n", "kernel.cu": "__global__ void k() {}\n"})
    cpu = plan_self_check(tmp_path, "python", gpu=False)
    assert cpu.commands == [] and cpu.skipped == ["main.cu: CUDA harness needs an NVIDIA GPU"]
    gpu = plan_self_check(tmp_path, "python", gpu=True)
    assert gpu.labels == ["nvcc main.cu && run"]
