"""Which of a deck's forbidden ops a traced call reached, named from what the
dispatcher ran and, on a GPU, from the kernels the call launched.

The decks write their forbidden ops as Python names (``torch._scaled_mm``,
``torch.matmul``, ``F.linear``: KernelBench-Hard's problem.yaml). The trace
(engine/verify/module/host.py) records aten ops below the torch-function
layer, where ``torch._C.DisableTorchFunction``, TorchScript and a call
through ``torch.ops.aten`` or ``torch._C._VariableFunctions`` all land on the
same op. There, composite ops are already decomposed (``torch.matmul``,
``F.linear`` and ``torch.einsum`` run as ``aten::mm``, ``aten::addmm`` or
``aten::bmm``), so a forbidden name stands for its aten op and for the family
of ops that run the same library routine: forbidding ``torch.matmul`` (a
vendor GEMM) forbids every GEMM, while forbidding ``torch._scaled_mm`` (the
FP8 GEMM) leaves a bf16 ``aten::mm`` alone. A GPU kernel is read by name
only for the libraries torch calls (cuBLAS, cuDNN, its own attention
kernels), so a GEMM an answer's extension asks cuBLAS for directly is named
too; an answer's own CUTLASS or Triton kernels are not library kernels.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

# the BLAS routines (cuBLAS, MKL, OpenBLAS) behind torch's matrix products
GEMM = frozenset({
    "mm", "addmm", "bmm", "baddbmm", "addbmm", "matmul", "linear", "einsum", "bilinear", "tensordot",
    "_addmm_activation", "mv", "addmv", "dot", "vdot", "inner", "outer", "ger", "addr", "chain_matmul",
    "linalg_multi_dot", "_scaled_mm", "_scaled_mm_v2", "_scaled_grouped_mm", "_grouped_mm", "_int_mm",
    "_weight_int4pack_mm", "_weight_int4pack_mm_for_cpu", "_weight_int8pack_mm", "fbgemm_linear_fp16_weight",
})
BATCHED_GEMM = frozenset({"bmm", "baddbmm", "_grouped_mm", "_scaled_grouped_mm"})
SCALED_GEMM = frozenset({"_scaled_mm", "_scaled_mm_v2", "_scaled_grouped_mm"})
SDPA = frozenset({
    "scaled_dot_product_attention", "_scaled_dot_product_flash_attention", "_scaled_dot_product_flash_attention_for_cpu",
    "_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention", "_scaled_dot_product_fused_attention_overrideable",
    "_flash_attention_forward", "_efficient_attention_forward", "_fused_sdp_choice",
})
CONV = frozenset({
    "conv1d", "conv2d", "conv3d", "convolution", "_convolution", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "cudnn_convolution", "cudnn_convolution_transpose", "mkldnn_convolution", "miopen_convolution", "_slow_conv2d_forward",
    "slow_conv3d_forward", "slow_conv_dilated2d", "slow_conv_dilated3d", "slow_conv_transpose2d", "slow_conv_transpose3d",
    "_conv_depthwise2d", "conv_depthwise3d", "_nnpack_spatial_convolution", "thnn_conv2d",
})

# a forbidden op -> every aten op that runs its library routine (besides the op itself)
FAMILY = {
    **{op: GEMM for op in ("matmul", "mm", "addmm", "linear", "einsum", "tensordot", "bilinear", "mv", "addmv",
                           "chain_matmul", "linalg_multi_dot", "_addmm_activation")},
    **{op: BATCHED_GEMM for op in ("bmm", "baddbmm")},
    **{op: SCALED_GEMM for op in ("_scaled_mm", "_scaled_mm_v2")},
    **{op: SDPA for op in ("scaled_dot_product_attention",)},
    **{op: CONV for op in ("conv1d", "conv2d", "conv3d", "convolution", "conv_transpose1d", "conv_transpose2d",
                           "conv_transpose3d")},
}

# torch's Python namespaces whose functions are aten ops of the same name (with a prefix for some)
# (torch._VF, _VariableFunctionsClass and TensorBase are the C bindings torch.X and tensor methods call)
_PREFIXES = (("torch.ops.aten.", ""), ("torch._ops.ops.aten.", ""), ("torch.nn.functional.", ""), ("F.", ""),
             ("torch.Tensor.", ""), ("torch._C.TensorBase.", ""), ("torch._C._TensorBase.", ""),
             ("torch.linalg.", "linalg_"), ("torch.special.", "special_"), ("torch.fft.", "fft_"),
             ("torch._C._VariableFunctions.", ""), ("torch._C._VariableFunctionsClass.", ""), ("torch._VF.", ""),
             ("torch._C._nn.", ""), ("torch._C._linalg.", ""), ("torch._C._special.", ""), ("torch._C._fft.", ""),
             ("torch.functional.", ""), ("torch.", ""))
# namespaces whose attributes are op packets, each with its overloads (torch.ops.aten.mm.default)
_PACKETS = ("torch.ops.aten.", "torch._ops.ops.aten.")


def aten_name(forbidden: str) -> str | None:
    """The aten op a forbidden name is (``torch._scaled_mm`` -> ``_scaled_mm``),
    or None for what is no torch op (a package's function, an import line)."""
    text = forbidden.strip()
    if " " in text:
        return None
    for prefix, aten in _PREFIXES:
        if text.startswith(prefix):
            rest = text[len(prefix):]
            name = rest.split(".")[0] if prefix in _PACKETS else rest
            return aten + name if re.fullmatch(r"[A-Za-z_]\w*", name) else None
    return None


def targets(forbidden: list[str]) -> dict[str, frozenset[str]]:
    """Each forbidden name that is a torch op -> the aten ops that count as calling it."""
    out = {}
    for f in forbidden:
        op = aten_name(f)
        if op is not None:
            out[f] = frozenset({op}) | FAMILY.get(op, frozenset())
    return out


def op_base(name: str) -> str:
    """``aten::addmm_`` (or ``aten::addmm.out``) -> ``addmm``: the op whatever its overload or in-place form."""
    base = name.split("::", 1)[-1].split(".", 1)[0]
    return base[:-1] if base.endswith("_") and not base.endswith("__") else base


def op_hits(ops: Iterable[str], forbidden: list[str]) -> list[tuple[str, str]]:
    """(aten op seen, forbidden name it counts as) for every forbidden op a call's ops reached."""
    wanted = targets(forbidden)
    hits: list[tuple[str, str]] = []
    for op in sorted(set(ops)):
        if not op.startswith("aten::"):
            continue
        base = op_base(op)
        hits.extend((op, f) for f, names in wanted.items() if base in names)
    return hits


def library_calls(ops: Iterable[str], kernels: Iterable[str]) -> list[str]:
    """The library routines among a run's ops and kernels (GEMMs, attention, convolutions),
    named for a reader whether or not the deck forbids them: a cast to bf16 then a vendor
    GEMM passes a deck that forbids only the FP8 one, and is worth seeing."""
    routines = GEMM | SDPA | CONV
    named = [op for op in sorted(set(ops)) if op.startswith("aten::") and op_base(op) in routines]
    return named + [k for k in sorted(set(kernels)) if kernel_library(k)]


# -- kernels on a GPU ------------------------------------------------------------------------------

# kernels of the libraries torch calls, by the names their builds give them; an answer's own
# CUTLASS templates (cutlass::gemm::kernel::...) and Triton kernels match none of these
LIBRARY_KERNELS = {
    "cuBLAS GEMM": re.compile(
        r"(^|\W)(sm\d+_xmma_gemm|(ampere|volta|turing|maxwell|hopper|sm\d+)_[sdhc]?(gemm|sgemm|hgemm|bf16)|nvjet_|"
        r"cutlass_\d+_(tensorop|simt|wmma)_|gemv2[NT]_kernel|gemvNSP|gemmk1_kernel|gemmSN_|gemmk_|splitKreduce_kernel|"
        r"cublas\w*)", re.I),
    "cuDNN convolution": re.compile(r"(^|\W)(cudnn|implicit_convolve|sm\d+_xmma_(fprop|dgrad|wgrad)|"
                                    r"xmma_(fprop|dgrad|wgrad))", re.I),
    "torch attention": re.compile(r"(pytorch_flash::|fmha_cutlass|cudnn_generated_fort_native_sdpa|"
                                  r"_efficient_attention|flash_fwd_(split)?kv|at::native::\w*attention)", re.I),
}
_FP8 = re.compile(r"e4m3|e5m2|fp8|f8f8|_qq", re.I)


def kernel_library(kernel: str) -> str | None:
    """The library a kernel's name says it belongs to, or None (an answer's own kernel, torch's elementwise ones)."""
    for library, pattern in LIBRARY_KERNELS.items():
        if pattern.search(kernel):
            return library
    return None


def kernel_hits(kernels: Iterable[str], forbidden: list[str]) -> list[tuple[str, str]]:
    """(kernel, forbidden name) for every library kernel a call launched that runs a forbidden op's routine.
    A GEMM kernel cannot tell a batched or a linear call from a plain one: it counts for every GEMM name;
    for the FP8 GEMM only an FP8 GEMM kernel counts."""
    wanted = targets(forbidden)
    hits: list[tuple[str, str]] = []
    for kernel in sorted(set(kernels)):
        library = kernel_library(kernel)
        for f, names in wanted.items():
            if library == "cuBLAS GEMM" and names & GEMM:
                if names <= SCALED_GEMM and not _FP8.search(kernel):
                    continue
                hits.append((kernel, f))
            elif (library == "cuDNN convolution" and names & CONV) or (library == "torch attention" and names & SDPA):
                hits.append((kernel, f))
    return hits
