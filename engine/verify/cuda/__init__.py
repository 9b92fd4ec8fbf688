"""CUDA answers: the nvcc build, the ctypes harness and device, the compile-only suite."""
