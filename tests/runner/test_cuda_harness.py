"""The timing harness's typed inputs and the entry point's typed arguments,
checked without a GPU: nvcc builds the harness's generator for the host and
its values must be the checker's (``seeded_values``) bit for bit, for every
element type; scalars of each kind reach the answer's function as given."""
from __future__ import annotations

import ctypes
import subprocess

import numpy as np
import pytest
from benchtui.verify.cuda import build as cuda_build
from benchtui.verify.cuda import device as cuda_device

pytestmark = pytest.mark.skipif(cuda_build.find_nvcc() is None, reason="nvcc not installed")

# (dtype, a, b): floats scaled by 2**a; integers in [a, b) (the whole hash when a == b)
CASES = [("float32", 0, 0), ("float32", -3, 0), ("float16", 0, 0), ("float16", -2, 0), ("bfloat16", 0, 0),
         ("bfloat16", 3, 0), ("int32", -5, 17), ("int32", 0, 0), ("int64", 0, 0), ("int64", -1000, 1000),
         ("uint8", 0, 256), ("uint8", 3, 7)]
SEED = (0x0123456789ABCDEF << 64) | 0xFEDCBA9876543210


def test_seeded_inputs_of_every_type_match_the_device_generator_bit_for_bit(tmp_path):
    lo, hi = SEED & (2**64 - 1), SEED >> 64
    codes = ", ".join(str(cuda_device.DTYPES[d][0]) for d, _, _ in CASES)
    sizes = ", ".join(str(cuda_device.element_size(d)) for d, _, _ in CASES)
    as_, bs = ", ".join(f"{a}LL" for _, a, _ in CASES), ", ".join(f"{b}LL" for _, _, b in CASES)
    main = tmp_path / "typed.cu"
    main.write_text(f'#include "{cuda_device.HARNESS_SOURCE}"\n#include <cstdio>\n'
                    f"int main() {{ static unsigned char buf[300 * 8]; int codes[] = {{{codes}}}, sizes[] = {{{sizes}}};\n"
                    f"  long long as[] = {{{as_}}}, bs[] = {{{bs}}};\n"
                    f"  for (int c = 0; c < {len(CASES)}; ++c) {{\n"
                    "    for (uint64_t i = 0; i < 300; ++i)\n"
                    f"      benchtui_store_seeded(buf, i, codes[c], as[c], bs[c], {lo}ULL, {hi}ULL);\n"
                    '    for (int j = 0; j < 300 * sizes[c]; ++j) printf("%02x", buf[j]);\n'
                    '    printf("\\n"); } }\n')
    exe = tmp_path / "typed"
    proc = subprocess.run([cuda_build.find_nvcc(), "-std=c++17", str(main), "-o", str(exe)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    device = subprocess.run([str(exe)], capture_output=True, text=True).stdout.split()
    for (dtype, a, b), line in zip(CASES, device, strict=True):
        host = cuda_device.seeded_values(SEED, np.arange(300), dtype, a, b)
        assert host.dtype == cuda_device.DTYPES[dtype][1]
        assert host.tobytes().hex() == line, (dtype, a, b)
    floats = cuda_device.seeded_values(SEED, np.arange(300), "bfloat16", 3, 0)
    assert np.abs(cuda_device.bf16_to_float32(floats)).max() <= 64 and len(set(floats.tolist())) > 200
    ints = cuda_device.seeded_values(SEED, np.arange(300), "int32", -5, 17)
    assert ints.min() >= -5 and ints.max() < 17 and len(set(ints.tolist())) == 22
    # the float32 case is the one fuse's rows come from
    assert np.array_equal(cuda_device.seeded_values(SEED, np.arange(300), "float32"),
                          cuda_device.seeded_rows(SEED, [0], 300)[0])


def test_scalars_of_each_kind_reach_the_entry_point(tmp_path):
    src = tmp_path / "f.cu"
    src.write_text('extern "C" { double seen[3];\n'
                   "int f(const void* x, int n, long long m, float s, void* out) {\n"
                   "  seen[0] = n; seen[1] = (double)m; seen[2] = s; return n == 7 ? 0 : 1; } }\n")
    result = cuda_device.build([src], tmp_path / "libf.so", arch="sm_90",
                               harness_object=_harness_object(tmp_path))
    assert result.ok, result.output
    host = cuda_device.KernelHost(tmp_path / "libf.so", "f", ["in", "int", "int64", "float", "out"])
    argv = host._argv(iter([11]), iter([22]), iter([7, 2**40 + 3, 0.5]))
    assert int(host.fn(*argv)) == 0  # pointers are only passed, never read, so no GPU is needed
    seen = (ctypes.c_double * 3).in_dll(host.lib, "seen")
    assert list(seen) == [7.0, float(2**40 + 3), 0.5]
    with pytest.raises(ValueError, match="unknown parameter kinds"):
        cuda_device.KernelHost(tmp_path / "libf.so", "f", ["in", "double"])


def _harness_object(folder):
    result = cuda_device.build_harness_object(folder, arch="sm_90")
    assert result.ok, result.output
    return folder / cuda_device.HARNESS_OBJECT


KERNEL = r"""
#include <cuda_runtime.h>
#include <stdint.h>
// out[r] = sum over c of float(x[r, c]) * 2^shift[r], x in bfloat16 (its bits), shift in int32
__global__ void rows_sum(const uint16_t* x, const int* shift, int rows, int cols, float* out) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float acc = 0.f;
    for (int c = 0; c < cols; ++c) acc += __uint_as_float((uint32_t)x[(size_t)r * cols + c] << 16);
    out[r] = ldexpf(acc, shift[r]);
}
extern "C" int rows_sum_entry(const uint16_t* x, const int* shift, int rows, int cols, float scale, float* out) {
    rows_sum<<<(rows + 127) / 128, 128>>>(x, shift, rows, cols, out);
    return (int)cudaGetLastError();
}
"""


@pytest.mark.gpu
def test_typed_seeded_inputs_and_several_launches_on_the_gpu(tmp_path):
    """On a GPU: a bfloat16 and an int32 input made from seeds, two launches
    in one timed window, each on its own inputs; every output recomputed
    here from ``seeded_values``."""
    usable, reason = cuda_build.gpu_status()
    if not usable:
        pytest.skip(f"needs an NVIDIA GPU: {reason}")
    (tmp_path / "k.cu").write_text(KERNEL)
    result = cuda_device.build([tmp_path / "k.cu"], tmp_path / "libk.so", harness_object=_harness_object(tmp_path))
    assert result.ok, result.output
    host = cuda_device.KernelHost(tmp_path / "libk.so", "rows_sum_entry", ["in", "in", "int", "int", "float", "out"])
    rows, cols = 300, 257
    inputs = [("bfloat16", rows * cols, -2, 0), ("int32", rows, -3, 4)]
    host.timing_setup(inputs, [("float32", rows, 0x7FC00000)], 64 << 20, launches=2)
    seeds = [[SEED + 10 * launch + i for i in range(2)] for launch in range(2)]
    got = host.timing_cycle(seeds, 0, [rows, cols, 1.0])
    host.timing_release()
    assert got["rc"] == 0 and got["error"] == "" and got["seconds"] > 0, got
    for launch, (x_seed, s_seed) in enumerate(seeds):
        x = cuda_device.bf16_to_float32(cuda_device.seeded_values(x_seed, np.arange(rows * cols), "bfloat16", -2))
        shift = cuda_device.seeded_values(s_seed, np.arange(rows), "int32", -3, 4)
        want = np.ldexp(x.reshape(rows, cols).astype(np.float64).sum(axis=1), shift)
        assert np.allclose(got["outputs"][launch][0], want, rtol=1e-4, atol=0.05), launch
