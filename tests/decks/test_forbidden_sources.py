"""A forbidden op an answer reaches where no run-time recorder on this machine
sees it (a CUDA answer the CPU cannot run; a GEMM in its C++ sources) is read
from its sources: the deck's problem forbids ``torch.matmul``."""
from __future__ import annotations

import sqlite3

import deck_kit
import pytest
from benchtui.decks import kernelbench_hard
from benchtui.decks.importer import import_deck
from deck_kit import cli

CHALLENGE = "kbh_01_tiny_double"
# each needs an NVIDIA GPU (Triton, an extension), so on the CPU only its sources are read
ANSWERS = {
    "through_variable_functions": ("import torch\nimport triton\n\n\nclass Model(torch.nn.Module):\n"
                                   "    def __init__(self, n):\n        super().__init__()\n        self.n = n\n\n"
                                   "    def forward(self, x):\n"
                                   "        return torch._C._VariableFunctions.matmul(x[None], torch.eye(self.n) * 2)[0]\n",
                                   {}),
    "inline_cpu_mm": ("import torch\nfrom torch.utils.cpp_extension import load_inline\n\n"
                      "SRC = '''\n#include <torch/extension.h>\n"
                      "torch::Tensor twice(torch::Tensor x) {\n"
                      "    return at::cpu::mm(x.unsqueeze(0), at::eye(x.size(0)) * 2).squeeze(0);\n}\n'''\n"
                      "ext = load_inline('twice', SRC, functions=['twice'])\n\n\nclass Model(torch.nn.Module):\n"
                      "    def __init__(self, n):\n        super().__init__()\n\n"
                      "    def forward(self, x):\n        return ext.twice(x)\n", {}),
    "cu_file_cublas": ("import torch\nfrom torch.utils.cpp_extension import load\n\n"
                       "ext = load('twice', ['csrc/twice.cu'])\n\n\nclass Model(torch.nn.Module):\n"
                       "    def __init__(self, n):\n        super().__init__()\n\n"
                       "    def forward(self, x):\n        return ext.twice(x)\n",
                       {"csrc/twice.cu": "#include <cublas_v2.h>\n// the GEMM below is cuBLAS's\n"
                                         "void twice(float* x, float* y, int n, cublasHandle_t h) {\n"
                                         "    float one = 1.f, zero = 0.f;\n"
                                         "    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 1, n, n, &one, x, 1, y, n, &zero, y, 1);\n}\n"}),
}


@pytest.mark.sandbox
def test_a_forbidden_gemm_a_cuda_answer_reaches_is_read_from_its_sources(tmp_path, capsys):
    pytest.importorskip("torch")
    deck = deck_kit.hard_deck(tmp_path / "deck")
    root = tmp_path / "wb"
    import_deck(kernelbench_hard.read_deck(deck, "h100", commit=deck_kit.HARD_COMMIT), root)
    for model, (solution, extra) in ANSWERS.items():
        folder = root / "models" / model / CHALLENGE
        folder.mkdir(parents=True)
        (folder / "solution.py").write_text(solution)
        for rel, text in extra.items():
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).write_text(text)
    cli(capsys, "--workbench", str(root), "scan")
    models = [arg for model in ANSWERS for arg in ("-m", model)]
    cli(capsys, "--workbench", str(root), "run", "-c", CHALLENGE, *models, "--backend", "cpu", "--jobs", "2",
        "--no-self-check")
    with sqlite3.connect(root / "store.db") as conn:
        rows = conn.execute("select r.model, c.verdict, c.message from checks c join runs r on r.id = c.run_id "
                            "where c.name = 'forbidden_ops' and r.challenge = ?", (CHALLENGE,)).fetchall()
    got = {model: (verdict, message) for model, verdict, message in rows if model in ANSWERS}
    assert set(got) == set(ANSWERS), rows
    assert got["through_variable_functions"][0] == "forbidden"
    assert "torch._C._VariableFunctions.matmul is torch.matmul" in got["through_variable_functions"][1]
    assert got["inline_cpu_mm"][0] == "forbidden" and "C++ calls at::cpu::mm" in got["inline_cpu_mm"][1]
    assert got["cu_file_cublas"][0] == "forbidden"
    assert "csrc/twice.cu:5: C++ calls cuBLAS's cublasSgemm" in got["cu_file_cublas"][1]
