"""Forbidden ops named from the dispatcher and from GPU kernels
(engine/verify/module/ops.py), on traces recorded by the answer host's own
recorder (engine/verify/module/host.py's OpTrace)."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="the torch extra is not installed (pip install -e '.[torch]')")

from benchtui.verify.module import ops as O  # noqa: E402
from benchtui.verify.module.host import OpTrace  # noqa: E402

# KernelBench-Hard's forbidden lists (problem.yaml), as its problems write them
FP8 = ["torch._scaled_mm", "torch.ops.aten._scaled_mm"]
MOE = ["torch.matmul", "torch.bmm", "torch.nn.functional.linear", "F.linear", "from sonic_moe", "import sonic_moe"]
W4A16 = ["bitsandbytes.functional.dequantize_4bit", "bitsandbytes.functional.gemv_4bit", "marlin_kernel.gemm",
         "torch.nn.functional.linear"]


def test_deck_names_map_to_aten_ops_and_other_names_to_none():
    assert O.aten_name("torch._scaled_mm") == O.aten_name("torch.ops.aten._scaled_mm.default") == "_scaled_mm"
    assert O.aten_name("F.linear") == O.aten_name("torch.nn.functional.linear") == "linear"
    assert O.aten_name("torch.linalg.matmul") == "linalg_matmul" and O.aten_name("torch.topk") == "topk"
    for other in ("from sonic_moe", "import sonic_moe", "fla.ops.kda", "chunk_kda", "marlin_kernel.gemm",
                  "bitsandbytes.functional.gemv_4bit", "torch.", "torch.ops.aten."):
        assert O.aten_name(other) is None, other
    assert set(O.targets(W4A16)) == {"torch.nn.functional.linear"}


def _traced(fn, *args) -> set[str]:
    with OpTrace(torch, kernels=False) as seen, torch.no_grad():
        fn(*args)
    return seen.ops


x, w, q = torch.randn(4, 8), torch.randn(6, 8), torch.randn(2, 3, 5, 8)


@pytest.mark.parametrize("call", [
    lambda: torch.nn.functional.linear(x, w), lambda: x @ w.t(), lambda: torch.einsum("mk,nk->mn", x, w),
    lambda: torch.matmul(x.expand(3, 4, 8), w.t()), lambda: torch.addmm(torch.zeros(6), x, w.t()),
])
def test_every_gemm_counts_as_the_deck_s_matmul_and_linear(call):
    """torch.matmul, F.linear and einsum reach the dispatcher decomposed (aten::mm,
    addmm, bmm): each is the GEMM the deck forbids under any of its names."""
    hits = {f for _, f in O.op_hits(_traced(call), MOE)}
    assert {"torch.matmul", "torch.nn.functional.linear", "F.linear"} <= hits, hits
    assert not O.op_hits(_traced(call), FP8)  # a bf16/fp32 GEMM is not the forbidden FP8 one


def test_the_batched_gemm_only_for_torch_bmm():
    assert ("aten::bmm", "torch.bmm") in O.op_hits(_traced(torch.bmm, q[0], q[0].transpose(1, 2)), MOE)
    assert not [h for h in O.op_hits(_traced(torch.mm, x, w.t()), MOE) if h[1] == "torch.bmm"]


def test_ops_the_torch_function_layer_misses_reach_the_recorder():
    def disabled():
        with torch._C.DisableTorchFunction():
            return torch.topk(x, 2)

    scripted = torch.jit.CompilationUnit("def f(a):\n    return torch.topk(a, 2)[0]\n")
    for call in (disabled, lambda: scripted.f(x), lambda: torch.ops.aten.topk.default(x, 2),
                 lambda: torch._C._VariableFunctions.topk(x, 2)):
        assert O.op_hits(_traced(call), ["torch.topk"]) == [("aten::topk", "torch.topk")]
    attention = _traced(torch.nn.functional.scaled_dot_product_attention, q, q, q)
    assert O.op_hits(attention, ["F.scaled_dot_product_attention"]), attention
    assert not O.op_hits(_traced(torch.relu, x), MOE + FP8 + ["torch.topk"])


def test_a_worker_thread_s_gemm_reaches_the_recorder_without_loading_torch_s_compiler(monkeypatch):
    """The dispatch mode sees the calling thread only; the profiler's every-thread record sees
    a worker thread's ops too (a custom op's body: tests/challenges/test_module_suite_trust.py). The trace imports nothing of torch's compiler
    where the answer has not (torch._dynamo, torch._inductor: a minute on a loaded machine, in
    every answer's process): made unimportable, a worker thread's GEMM is still recorded."""
    import sys
    import threading

    def in_a_thread():
        worker = threading.Thread(target=lambda: torch.mm(x, w.t()))
        worker.start()
        worker.join()

    with monkeypatch.context() as no_compiler:
        for compiler in ("_dynamo", "_inductor"):
            no_compiler.delattr(torch, compiler, raising=False)
            no_compiler.setitem(sys.modules, f"torch.{compiler}", None)
        assert ("aten::mm", "torch.matmul") in O.op_hits(_traced(in_a_thread), MOE)


def test_in_place_and_overload_forms_count_as_the_op():
    assert O.op_hits(["aten::addmm_", "aten::mm.out"], ["torch.matmul"]) == [
        ("aten::addmm_", "torch.matmul"), ("aten::mm.out", "torch.matmul")]
    assert O.op_hits(["prims::mm", "mm"], ["torch.matmul"]) == []  # only aten's ops


# kernel names as the profiler reports them on NVIDIA GPUs
CUBLAS = ["sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
          "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_TNT", "ampere_sgemm_128x64_tn", "ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_tn",
          "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4>(cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4::Params)",
          "void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false, false>(float)",
          "void cublasLt::splitKreduce_kernel<32, 16, int, float, float, float, float, false, true>(float)"]
FP8_CUBLAS = "sm90_xmma_gemm_e4m3e4m3_bf16f32_f32_tn_n_tilesize128x128x128_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
OWN = ["void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cutlass::gemm::GemmShape<128, 128, 64>>>(Params)",
       "fp8_gemm_kernel", "triton_poi_fused_mm_0", "_grouped_gemm_swiglu_kernel",
       "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >(int)"]


def test_library_gemm_kernels_are_named_and_an_answer_s_own_kernels_are_not():
    for kernel in CUBLAS + [FP8_CUBLAS]:
        assert O.kernel_library(kernel) == "cuBLAS GEMM", kernel
        assert {f for _, f in O.kernel_hits([kernel], MOE)} == {"torch.matmul", "torch.bmm",
                                                                 "torch.nn.functional.linear", "F.linear"}, kernel
    for kernel in OWN:
        assert O.kernel_library(kernel) is None, kernel
    assert O.kernel_hits(OWN, MOE + FP8 + W4A16) == []
    # the FP8 GEMM is named by an FP8 library kernel only
    assert O.kernel_hits(CUBLAS, FP8) == []
    assert {f for _, f in O.kernel_hits([FP8_CUBLAS], FP8)} == set(FP8)
    assert O.kernel_hits(["void cudnn::cnn::conv2d_grouped_direct_kernel<float>(...)"], ["F.conv2d"])
    assert O.kernel_hits(["void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128>>(Params)"],
                         ["F.scaled_dot_product_attention"])


def test_library_routines_are_listed_whether_or_not_forbidden():
    assert O.library_calls(["aten::relu", "aten::mm", "aten::_scaled_mm", "prims::mm"],
                           OWN + [FP8_CUBLAS]) == ["aten::_scaled_mm", "aten::mm", FP8_CUBLAS]


@pytest.mark.gpu
def test_on_a_gpu_the_kernels_a_call_launched_name_a_library_gemm():
    """The recorder's CUDA path: a GEMM torch sends to cuBLAS is named by its kernel;
    an elementwise call launches none of the library's."""
    if not torch.cuda.is_available():
        pytest.skip("needs an NVIDIA GPU with CUDA torch")
    a, b = torch.randn(256, 256, device="cuda"), torch.randn(256, 256, device="cuda")
    with OpTrace(torch, kernels=True) as seen, torch.no_grad():
        torch.relu(a)
    assert seen.kernels and not O.kernel_hits(seen.kernels, MOE), seen.kernels
    with OpTrace(torch, kernels=True) as seen, torch.no_grad():
        a @ b
    assert ("torch.matmul" in {f for _, f in O.kernel_hits(seen.kernels, MOE)}), seen.kernels
    if torch.cuda.get_device_capability() >= (8, 9):
        fa = a.to(torch.float8_e4m3fn)
        fb = b.to(torch.float8_e4m3fn).t()
        one = torch.ones((), device="cuda")
        with OpTrace(torch, kernels=True) as seen, torch.no_grad():
            torch._scaled_mm(fa, fb, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
        assert {f for _, f in O.kernel_hits(seen.kernels, FP8)} == set(FP8), seen.kernels
