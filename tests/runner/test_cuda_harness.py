"""The timing harness's typed inputs and the entry point's typed arguments,
checked without a GPU: nvcc builds the harness's generator for the host and
its values must be the checker's (``seeded_values``) bit for bit, for every
element type; scalars of each kind reach the answer's function as given."""
from __future__ import annotations

import ctypes
import subprocess

import numpy as np
import pytest

from engine.verify import cuda_build, cuda_device

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
